/**
 * Remote machines kept across restarts (issue 30): a machine added with the `addMachine`
 * operation is written to the settings' `machines`, a host started again on the same state
 * directory reaches it again over a real sshd (tests/support/sshd.ts), `removeMachine` stops its
 * link and forgets it, and a malformed entry in settings.json is refused alone, naming itself,
 * while the good entries and every other setting load. The runtime here is the one both the
 * desktop app and `tandem serve` start (src/main/runtime.ts), so the app has machines too.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { OpResult } from '../../src/shared/contract.js';
import { Dispatcher, type UiClient } from '../../src/main/host/dispatch.js';
import { type Runtime, startRuntime } from '../../src/main/runtime.js';
import { requireSsh, type Sshd, startSshd } from '../support/sshd.js';
import { until } from '../support/until.js';

const ssh = requireSsh();
const bin = resolve(__dirname, '../../bin/tandem.js');

type Machines = OpResult<'machines'>['machines'];

describe.skipIf(ssh.skip)(`remote machines kept in the settings, over a real sshd${ssh.reason ? ` (skipped: ${ssh.reason})` : ''}`, () => {
  let sshd: Sshd;
  let base: string;
  let running: Runtime | null = null;
  let dispatcher: Dispatcher | null = null;
  const log: string[] = [];

  /** The views' ends this client was told of. */
  const closed: string[] = [];
  const client: UiClient = {
    id: 'settings-test',
    send: (event, payload) => {
      if (event === 'attachmentClosed') closed.push((payload as { error: { message: string } }).error.message);
    },
  };

  function env(state: string): NodeJS.ProcessEnv {
    const home = join(base, 'home');
    mkdirSync(home, { recursive: true });
    const e: NodeJS.ProcessEnv = {
      ...process.env,
      TANDEM_HOME: state,
      HOME: home,
      SHELL: '/bin/bash',
      TANDEM_SSH: sshd.ssh.join(' '),
      TANDEM_REMOTE_COMMAND: sshd.remoteTandem,
    };
    delete e.TANDEM_INSTANCE;
    return e;
  }

  async function start(state: string): Promise<Dispatcher> {
    running = await startRuntime({
      env: env(state),
      port: 0,
      allowOrigins: [],
      trustLocalAgents: false,
      rendererDir: null,
      bridge: { command: process.execPath, args: [bin, 'mcp'] },
      log: (line) => log.push(line),
    });
    dispatcher = new Dispatcher(running.host, client, running.dispatch);
    return dispatcher;
  }

  async function stop(): Promise<void> {
    dispatcher?.dispose();
    dispatcher = null;
    await running?.stop();
    running = null;
  }

  async function machines(ui: Dispatcher): Promise<Machines> {
    return ((await ui.call('machines', {})) as { machines: Machines }).machines;
  }

  async function connected(ui: Dispatcher, name: string): Promise<void> {
    await until(async () => (await machines(ui)).some((m) => m.name === name && m.status === 'connected'), `${name} connected`, 60_000).catch(
      async (error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(await machines(ui))} ${log.join(' / ')}`);
      },
    );
  }

  beforeAll(async () => {
    sshd = await startSshd('tandemremset');
    base = mkdtempSync(join(tmpdir(), 'tandem-remote-settings-'));
  }, 120_000);

  afterEach(async () => {
    await stop();
  });

  afterAll(async () => {
    await stop();
    if (base) rmSync(base, { recursive: true, force: true });
    await sshd?.stop();
  });

  test('a machine added through addMachine is kept in settings.json and is there again, connected, after a restart; removeMachine stops its link and forgets it', async () => {
    const state = join(base, 'kept');
    let ui = await start(state);
    expect(await machines(ui)).toEqual([]);
    const added = (await ui.call('addMachine', { name: 'box', destination: sshd.destination })) as OpResult<'addMachine'>;
    expect(added).toMatchObject({ name: 'box', destination: sshd.destination });
    const file = join(state, 'settings.json');
    expect(JSON.parse(readFileSync(file, 'utf8')).machines).toEqual([{ name: 'box', destination: sshd.destination }]);
    expect(((await ui.call('getSettings', {})) as { machines: unknown }).machines).toEqual([{ name: 'box', destination: sshd.destination }]);
    await connected(ui, 'box');
    // A second add of the same name is refused and changes nothing kept.
    const twice = (await ui.call('addMachine', { name: 'box', destination: 'other@host' }).catch((e: unknown) => e)) as { code?: string };
    expect(twice.code).toBe('invalid_argument');
    expect(JSON.parse(readFileSync(file, 'utf8')).machines).toEqual([{ name: 'box', destination: sshd.destination }]);
    await stop();

    // The same state directory, a new host: the machine is back and links again, no --machine given.
    ui = await start(state);
    const again = await machines(ui);
    expect(again.map((m) => [m.name, m.destination])).toEqual([['box', sshd.destination]]);
    await connected(ui, 'box');
    const view = (await ui.call('create', { machine: 'box', shell: 'bash' })) as { id: string; machine?: string };
    expect(view.machine).toBe('box');
    const { attachmentId } = (await ui.call('attach', { id: view.id })) as { attachmentId: string };

    const box = running!.machines!.machines.get('box')!;
    const link = box.process!;
    expect(link.exitCode).toBeNull();
    const exited = new Promise<void>((resolveExit) =>
      link.exitCode !== null || link.signalCode !== null ? resolveExit() : link.once('exit', () => resolveExit()),
    );
    expect(await ui.call('removeMachine', { name: 'box' })).toEqual({});
    // Its ssh ends, it leaves the machines and the roster, its views end, and settings.json forgets it.
    await exited;
    expect(link.exitCode !== null || link.signalCode !== null).toBe(true);
    expect(box.process).toBeNull();
    expect(await machines(ui)).toEqual([]);
    const listed = (await ui.call('list', {})) as { terminals: Array<{ id: string }> };
    expect(listed.terminals.some((t) => t.id === view.id)).toBe(false);
    const input = (await ui.call('input', { attachmentId, data: 'x', typed: true }).catch((e: unknown) => e)) as { code?: string };
    expect(input.code).toBe('not_found');
    expect(closed).toEqual(["box was removed from Tandem's machines."]);
    expect(JSON.parse(readFileSync(file, 'utf8')).machines).toEqual([]);
    const gone = (await ui.call('removeMachine', { name: 'box' }).catch((e: unknown) => e)) as { code?: string };
    expect(gone.code).toBe('not_found');
    await stop();

    ui = await start(state);
    expect(await machines(ui)).toEqual([]);
  }, 240_000);

  test('a malformed machine entry in settings.json is refused with a sentence naming it; the good entry and every other setting load', async () => {
    const state = join(base, 'malformed');
    mkdirSync(state, { recursive: true });
    const file = join(state, 'settings.json');
    writeFileSync(
      file,
      JSON.stringify({
        theme: 'light',
        fontSize: 18,
        machines: [
          { name: 'good', destination: sshd.destination },
          { name: 'bad name', destination: 'me@devbox' },
          { name: 'evil', destination: '-oProxyCommand=touch /tmp/tandem-pwned' },
          'dev=me@devbox',
        ],
      }),
    );
    log.length = 0;
    const ui = await start(state);
    const refused = log.filter((line) => line.includes('is refused'));
    expect(refused).toHaveLength(3);
    expect(refused[0]).toContain('settings.json: machines[1] {"name":"bad name","destination":"me@devbox"} is refused: name: the name must be 1-32 letters');
    expect(refused[1]).toContain('settings.json: machines[2]');
    expect(refused[1]).toContain('is refused: destination: the destination must be an ssh destination');
    expect(refused[2]).toContain('settings.json: machines[3] "dev=me@devbox" is refused');
    const settings = (await ui.call('getSettings', {})) as { theme: string; fontSize: number; machines: unknown };
    expect(settings.theme).toBe('light');
    expect(settings.fontSize).toBe(18);
    expect(settings.machines).toEqual([{ name: 'good', destination: sshd.destination }]);
    expect((await machines(ui)).map((m) => m.name)).toEqual(['good']);
    await connected(ui, 'good');
    // The settings' own change refuses such an entry too, and keeps what was there.
    const bad = (await ui.call('setSettings', { machines: [{ name: 'x', destination: '-oProxyCommand=evil' }] }).catch((e: unknown) => e)) as {
      code?: string;
      message?: string;
    };
    expect(bad.code).toBe('invalid_argument');
    expect(bad.message).toContain('the destination must be an ssh destination');
    expect((await machines(ui)).map((m) => m.name)).toEqual(['good']);
  }, 180_000);
});
