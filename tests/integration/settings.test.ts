import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventName, EventPayload } from '../../src/shared/contract.js';
import { Dispatcher, type UiClient } from '../../src/main/host/dispatch.js';
import { TerminalHost } from '../../src/main/host/host.js';
import { SettingsStore } from '../../src/main/host/settings-store.js';
import { caught } from '../support/caught.js';

/** A UI client that records the events it is sent (the transports' sink, nothing else). */
class RecordingClient implements UiClient {
  readonly events: Array<{ event: EventName; payload: unknown }> = [];
  constructor(readonly id: string) {}
  send<K extends EventName>(event: K, payload: EventPayload<K>): void {
    this.events.push({ event, payload });
  }
  settings(): Array<EventPayload<'settings'>> {
    return this.events.filter((e) => e.event === 'settings').map((e) => e.payload as EventPayload<'settings'>);
  }
}

/** The background a real bash learns by asking the terminal (OSC 11), as the program reads it. */
const askBackground = `stty -echo; printf '\\033]11;?\\007'; IFS= read -rs -d '\\' -t 5 reply; reply=\${reply%$'\\033'}; stty echo; echo "bg=\${reply#*;}"`;

describe('settings kept by the host, against real bash', () => {
  let home: string;
  let path: string;
  let host: TerminalHost;
  let first: RecordingClient;
  let second: RecordingClient;
  let a: Dispatcher;
  let b: Dispatcher;

  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'tandem-settings-int-'));
    path = join(home, 'state', 'settings.json');
    host = new TerminalHost({
      env: { ...process.env, HOME: home, SHELL: '/bin/bash', ZDOTDIR: undefined, HISTFILE: undefined },
      home,
      settings: new SettingsStore(path),
    });
    first = new RecordingClient('first');
    second = new RecordingClient('second');
    a = new Dispatcher(host, first);
    b = new Dispatcher(host, second);
  });

  afterAll(async () => {
    a?.dispose();
    b?.dispose();
    await host?.shutdown();
    rmSync(home, { recursive: true, force: true });
  });

  it('stores a change in a 0600 file and tells every client', async () => {
    const result = await a.call('setSettings', { theme: 'light', fontSize: 16 });
    expect(result).toMatchObject({ theme: 'light', fontSize: 16 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ theme: 'light', fontSize: 16 });
    expect(second.settings().at(-1)).toMatchObject({ theme: 'light', fontSize: 16 });
    expect(await b.call('getSettings', {})).toEqual(result);
  });

  it('refuses bad values with invalid_argument, writing and telling nothing', async () => {
    const before = readFileSync(path, 'utf8');
    const heard = second.settings().length;
    for (const args of [{ fontSize: 200 }, { theme: 'neon' }, { scrollback: 'lots' }, { fontFamily: 'x;}' }, { nope: 1 }]) {
      const error = await caught(() => a.call('setSettings', args));
      expect(error.code, JSON.stringify(args)).toBe('invalid_argument');
    }
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(second.settings().length).toBe(heard);
  });

  it("answers a program's OSC 11 query with the theme's background, and follows a change at once", async () => {
    const view = await host.create({ shell: 'bash' });
    const session = host.get(view.id).session;
    expect((await session.send({ text: askBackground, waitMs: 15_000 })).output).toBe('bg=rgb:fafa/fafa/fafa');
    await a.call('setSettings', { theme: 'dark' });
    expect((await session.send({ text: askBackground, waitMs: 15_000 })).output).toBe('bg=rgb:0f0f/1111/1515');
    await a.call('setSettings', { theme: 'system' });
    await a.call('reportAppearance', { dark: false });
    expect((await session.send({ text: askBackground, waitMs: 15_000 })).output).toBe('bg=rgb:fafa/fafa/fafa');
    await host.close(view.id);
  });

  it('gives new terminals the scrollback setting; terminals already open keep theirs', async () => {
    const before = await host.create({ shell: 'bash', cols: 80, rows: 24 });
    await a.call('setSettings', { scrollback: 500 });
    const after = await host.create({ shell: 'bash', cols: 80, rows: 24 });
    for (const id of [before.id, after.id]) {
      expect((await host.get(id).session.send({ text: 'seq 1 3000', waitMs: 15_000 })).status).toBe('done');
    }
    const lines = async (id: string): Promise<string[]> => {
      const session = host.get(id).session;
      await session.drained();
      return (await session.snapshot()).data.split(/\r?\n/);
    };
    // Within the 1,000 live lines of the default: cold history is best-effort under a flood.
    expect(await lines(before.id)).toContain('2200');
    const kept = await lines(after.id);
    expect(kept).toContain('3000');
    expect(kept).not.toContain('2200');
    await host.close(before.id);
    await host.close(after.id);
  });
});
