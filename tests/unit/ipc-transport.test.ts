/**
 * The Electron IPC transport, round-tripped through an IN-PROCESS STAND-IN for Electron's
 * ipcMain / ipcRenderer / webContents (no Electron runtime here): the stand-in routes
 * `invoke` to the registered handler with a fake sender frame, copies every message with
 * structuredClone as IPC would, and delivers `webContents.send` to the page's listeners.
 * The host behind it is real: a TerminalHost with a real bash in a real PTY.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventPayload } from '../../src/shared/contract.js';
import { TerminalHost } from '../../src/main/host/host.js';
import {
  installIpcTransport,
  type IpcInvokeEventLike,
  type IpcMainLike,
  type IpcTransport,
  type WebContentsLike,
} from '../../src/main/electron/ipc-transport.js';
import { createBridge, type IpcRendererLike } from '../../src/preload/bridge.js';
import type { IpcReply } from '../../src/shared/wire.js';
import { IpcClient } from '../../src/renderer/src/api/ipc-client.js';
import { TandemCallError } from '../../src/renderer/src/api/errors.js';
import { command, runs, unixPty } from '../support/capabilities.js';
import { until } from '../support/until.js';

const trustedUrl = 'file:///opt/Tandem/resources/app.asar/out/renderer/index.html';

// ---- stand-in for Electron (test only) --------------------------------------------------------

type Handler = (event: IpcInvokeEventLike, ...args: unknown[]) => Promise<IpcReply>;

class StandInIpcMain implements IpcMainLike {
  readonly handlers = new Map<string, Handler>();
  handle(channel: string, listener: Handler): void {
    if (this.handlers.has(channel)) throw new Error(`second handler for ${channel}`);
    this.handlers.set(channel, listener);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }
}

let nextContentsId = 1;

class StandInWebContents extends EventEmitter implements WebContentsLike {
  readonly id = nextContentsId++;
  private destroyed = false;
  readonly pageListeners = new Map<string, Set<(event: unknown, ...args: unknown[]) => void>>();

  send(channel: string, ...args: unknown[]): void {
    if (this.destroyed) throw new Error('send after destroy');
    const copies = structuredClone(args);
    for (const listener of this.pageListeners.get(channel) ?? []) listener({}, ...copies);
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('destroyed');
  }
}

/** The page side: an ipcRenderer whose sender frame has the given URL (and parent, for subframes). */
function standInIpcRenderer(ipcMain: StandInIpcMain, contents: StandInWebContents, frame: { url: string; parent: unknown } | null): IpcRendererLike {
  return {
    async invoke(channel, ...args) {
      const handler = ipcMain.handlers.get(channel);
      if (!handler) throw new Error(`No handler registered for '${channel}'`);
      const reply = await handler({ sender: contents, senderFrame: frame }, ...structuredClone(args));
      return structuredClone(reply);
    },
    on(channel, listener) {
      let set = contents.pageListeners.get(channel);
      if (!set) contents.pageListeners.set(channel, (set = new Set()));
      set.add(listener);
    },
  };
}

const runtime = { platform: process.platform, versions: { electron: 'stand-in', chrome: 'stand-in', node: process.versions.node } };

function page(ipcMain: StandInIpcMain, frame: { url: string; parent: unknown } | null = { url: trustedUrl, parent: null }) {
  const contents = new StandInWebContents();
  const bridge = createBridge(standInIpcRenderer(ipcMain, contents, frame), runtime);
  return { contents, bridge, api: new IpcClient(bridge) };
}

// ---- tests -------------------------------------------------------------------------------------

const realBash = runs('IPC transport round trips against a real bash', unixPty, command('bash'));

describe('IPC transport (through an in-process stand-in for Electron)', () => {
  let home: string;
  let host: TerminalHost;
  let ipcMain: StandInIpcMain;
  let transport: IpcTransport;

  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'tandem-ipc-'));
    host = new TerminalHost({ env: { ...process.env, HOME: home, SHELL: '/bin/bash', ZDOTDIR: undefined, HISTFILE: undefined }, home });
    ipcMain = new StandInIpcMain();
    transport = installIpcTransport({ ipcMain, host, trustedUrl });
  });

  afterAll(async () => {
    transport?.dispose();
    await host?.shutdown();
    rmSync(home, { recursive: true, force: true });
  });

  it('registers one handler per contract operation', async () => {
    const { opNames } = await import('../../src/shared/contract.js');
    expect([...ipcMain.handlers.keys()].sort()).toEqual(opNames.map((op) => `tandem:${op}`).sort());
  });

  it.runIf(realBash)('round-trips create, attach, input, output events, resize and close against a real bash (needs bash in a Unix PTY)', async () => {
    const { api, contents } = page(ipcMain);
    const outputs: Array<EventPayload<'output'>> = [];
    const rosters: Array<EventPayload<'roster'>> = [];
    api.on('output', (payload) => outputs.push(payload));
    api.on('roster', (payload) => rosters.push(payload));

    const env = await api.call('environment', {});
    expect(env.shells.map((shell) => shell.name)).toContain('bash');
    const info = await api.call('create', { shell: 'bash', cols: 100, rows: 30, title: 'ipc test' });
    expect(info).toMatchObject({ shell: 'bash', title: 'ipc test', cols: 100, rows: 30 });
    const attached = await api.call('attach', { id: info.id });
    expect(attached.writable).toBe(true);
    expect(typeof attached.snapshot).toBe('string');

    await api.call('input', { attachmentId: attached.attachmentId, data: 'echo ipc-$((6*7))\r', typed: true });
    const text = () =>
      outputs
        .filter((o) => o.attachmentId === attached.attachmentId)
        .map((o) => o.data)
        .join('');
    await until(() => text().includes('ipc-42'), 'the echo');
    expect(text()).toContain('ipc-42');
    const lastSeq = outputs.filter((o) => o.attachmentId === attached.attachmentId).at(-1)!.seq;
    await api.call('ack', { attachmentId: attached.attachmentId, seq: lastSeq });
    expect(rosters.some((roster) => roster.terminals.some((terminal) => terminal.id === info.id))).toBe(true);

    await api.call('resize', { attachmentId: attached.attachmentId, cols: 90, rows: 20 });
    expect((await api.call('list', {})).terminals.find((terminal) => terminal.id === info.id)).toMatchObject({ cols: 90, rows: 20 });

    // Typed errors arrive as rejections with the contract code, and IPC never throws.
    await expect(api.call('rename', { id: 'no-such-terminal', title: 'x' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(api.call('create', { cols: 'wide' as unknown as number })).rejects.toBeInstanceOf(TandemCallError);
    await expect(api.call('mintLink', {})).rejects.toMatchObject({ code: 'invalid_argument' });

    expect(await api.call('close', { id: info.id })).toEqual({ closed: true, orphans: [] });
    expect((await api.call('list', {})).terminals).toEqual([]);
    contents.destroy();
  });

  it('refuses calls from a foreign page or a subframe, and sends them no events', async () => {
    for (const frame of [
      { url: 'https://evil.example/', parent: null },
      { url: 'file:///tmp/evil.html', parent: null },
      { url: trustedUrl, parent: {} },
      null,
    ]) {
      const { bridge, api } = page(ipcMain, frame);
      const reply = await bridge.call('list', {});
      expect(reply).toEqual({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(/did not come from Tandem/) } });
      await expect(api.call('create', { shell: 'bash' })).rejects.toMatchObject({ code: 'forbidden' });
    }
    expect(host.list()).toEqual([]);
    expect(transport.clients).toBe(0);
  });

  it('exposes only contract names through the bridge', async () => {
    const { bridge } = page(ipcMain);
    const reply = await bridge.call('__proto__' as never, {});
    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_argument' } });
    expect(() => bridge.on('not-an-event' as never, () => undefined)).toThrow(TypeError);
    expect(Object.keys(bridge).sort()).toEqual(['call', 'on', 'platform', 'versions']);
  });

  it.runIf(realBash)('detaches a page’s views when its webContents is destroyed or reloads, and keeps the shell (needs bash in a Unix PTY)', async () => {
    const first = page(ipcMain);
    const info = await first.api.call('create', { shell: 'bash' });
    await first.api.call('attach', { id: info.id });
    expect(host.get(info.id).attachments.size).toBe(1);
    first.contents.emit('did-navigate');
    expect(host.get(info.id).attachments.size).toBe(0);

    // Reload after reload: one set of listeners per webContents, never more.
    for (let i = 0; i < 12; i++) {
      await first.api.call('attach', { id: info.id });
      first.contents.emit('did-navigate');
    }
    expect(first.contents.listenerCount('destroyed')).toBe(1);
    expect(first.contents.listenerCount('did-navigate')).toBe(1);
    expect(host.get(info.id).attachments.size).toBe(0);

    await first.api.call('attach', { id: info.id });
    expect(host.get(info.id).attachments.size).toBe(1);
    first.contents.destroy();
    expect(host.get(info.id).attachments.size).toBe(0);
    expect(process.kill(info.pid, 0)).toBe(true);

    // A reload while an attach runs leaves no orphan view holding input.
    const racing = page(ipcMain);
    const pending = racing.api.call('attach', { id: info.id });
    racing.contents.emit('did-navigate');
    await expect(pending).rejects.toMatchObject({ code: 'not_found' });
    expect(host.get(info.id).attachments.size).toBe(0);
    racing.contents.destroy();

    const second = page(ipcMain);
    const again = await second.api.call('attach', { id: info.id });
    expect(again.info.id).toBe(info.id);
    await second.api.call('close', { id: info.id });
    second.contents.destroy();
  });
});
