/**
 * The remote link without sshd (tests/integration/remote-machines.test.ts has the real one):
 * the framing against junk, the session's resume arithmetic, the daemon side's idle lifetime,
 * keepalives and version sentences on the injected clock, and a resume past the replay bound
 * (a view that starts again from the remote's snapshot). Where a process must stand in for ssh it
 * is tests/support/link-pipe.mjs, which pipes to the daemon side's socket as the relay does.
 */
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { posixModes, runs } from '../support/capabilities.js';
import { parseMachine } from '../../src/main/cli.js';
import { Dispatcher, type UiClient } from '../../src/main/host/dispatch.js';
import { TerminalHost } from '../../src/main/host/host.js';
import { RecordingStore } from '../../src/main/record/store.js';
import { defaultSettings } from '../../src/shared/settings.js';
import { encodeFrame, FrameDecoder, maxFramePayload, startLine } from '../../src/main/remote/frame.js';
import {
  decodeMessage,
  encodeMessage,
  LINK_PROTOCOL,
  type LinkBody,
  type LinkMessage,
  LinkSession,
  linkPartChars,
  maxLinkMessageChars,
} from '../../src/main/remote/link.js';
import { maxRemoteUnackedChars, RemoteMachine } from '../../src/main/remote/machine.js';
import { RemoteMachines } from '../../src/main/remote/machines.js';
import { LinkServer } from '../../src/main/remote/server.js';
import { systemClock } from '../../src/main/clock.js';
import type { AgentsState, EventName, EventPayload, TerminalView } from '../../src/shared/contract.js';
import { ManualClock } from '../support/manual-clock.js';
import { startAgentFixture } from './agent-helpers.js';
import { until } from '../support/until.js';

const pipe = [process.execPath, resolve(__dirname, '../support/link-pipe.mjs')];

function decodeAll(chunks: Buffer[]): { frames: string[]; junk: string[]; junkText: string; started: string[]; failed: string[] } {
  const out = { frames: [] as string[], junk: [] as string[], junkText: '', started: [] as string[], failed: [] as string[] };
  const decoder = new FrameDecoder({
    start: (framing) => out.started.push(framing),
    frame: (payload) => out.frames.push(payload.toString()),
    junk: (bytes, where) => {
      out.junk.push(where);
      out.junkText += bytes.toString('latin1');
    },
    fail: (message) => out.failed.push(message),
  });
  for (const chunk of chunks) decoder.push(chunk);
  return out;
}

describe('framing', () => {
  test('junk before the start line is skipped and reported, not parsed, even when it holds frame bytes', () => {
    const fakeHeader = Buffer.from([0xfe, 0x54, 0x4c, 0x01, 0, 0, 0, 5, 1, 2, 3, 4, 5, 6, 7, 8]);
    const stream = Buffer.concat([
      Buffer.from('motd: hello ##tandem-link/ half\n'),
      fakeHeader,
      encodeFrame(Buffer.from('early')),
      Buffer.from(startLine),
      encodeFrame(Buffer.from('one')),
      encodeFrame(Buffer.from('two')),
    ]);
    // Every split point: a chunk boundary never changes what is decoded.
    for (let cut = 0; cut < stream.length; cut += 7) {
      const out = decodeAll([stream.subarray(0, cut), stream.subarray(cut)]);
      expect(out.started).toEqual(['1']);
      expect(out.frames).toEqual(['one', 'two']);
      expect(out.junkText).toContain('motd: hello');
      expect(out.failed).toEqual([]);
    }
  });

  test('junk between frames, a corrupted payload and a header whose checksum fails are skipped; the frames after them arrive', () => {
    const good = encodeFrame(Buffer.from('after'));
    const corrupt = encodeFrame(Buffer.from('corrupted'));
    corrupt[corrupt.length - 1] = corrupt[corrupt.length - 1]! ^ 0xff;
    const badHeader = encodeFrame(Buffer.from('x'.repeat(10)));
    badHeader[5] = badHeader[5]! ^ 0x40; // the length, which the header checksum covers
    const out = decodeAll([Buffer.from(startLine), encodeFrame(Buffer.from('first')), Buffer.from('stray echo\n'), corrupt, badHeader, good]);
    expect(out.frames).toEqual(['first', 'after']);
    expect(out.junk).toContain('corrupt-frame');
    expect(out.junk).toContain('between-frames');
    expect(out.junkText).toContain('stray echo');
  });

  test('a stream with no start line fails after its bound instead of growing; another framing version is told', () => {
    const out = decodeAll([Buffer.alloc(70 * 1024, 0x41)]);
    expect(out.failed[0]).toMatch(/without starting a Tandem link/);
    expect(decodeAll([Buffer.from('\n##tandem-link/7##\n')]).started).toEqual(['7']);
  });

  test('--machine takes NAME=DESTINATION and never lets a destination be an ssh option', () => {
    expect(parseMachine('dev=me@devbox')).toEqual({ name: 'dev', destination: 'me@devbox' });
    expect(() => parseMachine('dev=-oProxyCommand=touch /tmp/x')).toThrow(/ssh destination/);
    expect(() => parseMachine('local=box')).toThrow(/not "local"/);
    expect(() => parseMachine('a b=box')).toThrow(/name/);
  });
});

describe('sessions', () => {
  function pair(clock = systemClock, maxReplayBytes?: number) {
    const got: { a: LinkBody[]; b: LinkBody[] } = { a: [], b: [] };
    const a = new LinkSession((body) => got.a.push(body), { clock, maxReplayBytes });
    const b = new LinkSession((body) => got.b.push(body), { clock, maxReplayBytes });
    const wire = (to: LinkSession) => ({ write: (frame: Buffer) => void to.receive(decodeMessage(frame.subarray(16))!) });
    return { a, b, got, wire };
  }
  const event = (n: number): LinkBody => ({ t: 'event', event: 'output', payload: { n } });

  test('messages sent while down are resent on connect, and ones already received are not delivered twice', () => {
    const { a, b, got, wire } = pair();
    a.connect(wire(b), 0);
    b.connect(wire(a), 0);
    a.send(event(1));
    a.send(event(2));
    a.disconnect();
    b.disconnect();
    a.send(event(3));
    a.send(event(4));
    // The resume: each end tells how much it received; b had 1 and 2.
    a.connect(wire(b), b.receivedSeq);
    expect(got.b.map((m) => (m as { payload: { n: number } }).payload.n)).toEqual([1, 2, 3, 4]);
    // A peer that claims less than it had gets the resend, and drops the repeats.
    a.connect(wire(b), 0);
    expect(got.b).toHaveLength(4);
  });

  test('a gap is refused (the link must drop), and past the replay bound a session stops keeping and cannot resume', () => {
    const { a, b } = pair(systemClock, 1024);
    expect(b.receive({ k: 'msg', s: 2, body: event(2) })).toBe(false);
    for (let i = 0; i < 20; i++) a.send({ t: 'event', event: 'output', payload: { data: 'x'.repeat(100) } });
    expect(a.resumable).toBe(false);
    expect(a.keptBytesNow).toBe(0);
  });

  test('a message longer than a part goes in parts, each frame under the bound, and arrives whole across a resume', () => {
    const { a, b, got, wire } = pair();
    // Characters that grow most as UTF-8 and as JSON escapes, and a pair split across a part's edge.
    const unit = '\u4e2d\x1b[31m"\\😀';
    const body = (pad: number): LinkBody => ({
      t: 'event',
      event: 'output',
      payload: { data: 'p'.repeat(pad) + unit.repeat(Math.ceil((2.5 * linkPartChars) / unit.length)) },
    });
    // The padding that puts the first half of the emoji's pair last in the first part.
    const pad = Array.from({ length: 20 }, (_, i) => i).find((i) => JSON.stringify(body(i)).charCodeAt(linkPartChars - 1) === 0xd83d)!;
    const data = (body(pad) as { payload: { data: string } }).payload.data;
    const frames: Buffer[] = [];
    const recording = { write: (frame: Buffer) => frames.push(frame) };
    a.connect(recording, 0);
    expect(a.send({ t: 'event', event: 'output', payload: { data } })).toBe(true);
    expect(frames.length).toBeGreaterThanOrEqual(3);
    for (const frame of frames) expect(frame.length).toBeLessThan(maxFramePayload);
    const first = decodeMessage(frames[0]!.subarray(16)) as { body: { text: string } };
    expect(first.body.text.charCodeAt(first.body.text.length - 1)).toBe(0xd83d);
    // The link drops after the first part; the resume resends the rest, and b delivers one message.
    b.connect(wire(a), 0);
    expect(b.receive(decodeMessage(frames[0]!.subarray(16))!)).toBe(true);
    expect(got.b).toHaveLength(0);
    a.disconnect();
    a.connect(wire(b), b.receivedSeq);
    expect(got.b).toEqual([{ t: 'event', event: 'output', payload: { data } }]);
  });

  test('a message over the bound is not sent; parts past it, parts cut by another message, or parts that are not JSON drop the link', () => {
    const { a, b } = pair();
    const frames: Buffer[] = [];
    a.connect({ write: (frame: Buffer) => frames.push(frame) }, 0);
    expect(a.send({ t: 'event', event: 'output', payload: { data: 'x'.repeat(maxLinkMessageChars) } })).toBe(false);
    expect(frames).toHaveLength(0);
    let s = 0;
    const part = (text: string, last: boolean): LinkMessage => ({ k: 'msg', s: ++s, body: { t: 'part', text, last } });
    expect(b.receive(part('{"t":"ev', false))).toBe(true);
    expect(b.receive({ k: 'msg', s: ++s, body: event(1) })).toBe(false);
    const c = pair().b;
    s = 0;
    expect(c.receive(part('not json', true))).toBe(false);
    const d = pair().b;
    s = 0;
    const big = 'y'.repeat(linkPartChars);
    let ok = true;
    for (let i = 0; ok && i <= maxLinkMessageChars / linkPartChars; i++) ok = d.receive(part(big, false));
    expect(ok).toBe(false);
  });
});

/** A socket server for a LinkServer, on a path in a fresh directory. */
async function linkSocket(accept: (socket: Socket) => void): Promise<{ path: string; server: Server; close: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-link-'));
  const path = join(dir, 'host.sock');
  const server = createServer(accept);
  await new Promise<void>((r) => server.listen(path, r));
  return {
    path,
    server,
    close: () => {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A remote that speaks the link's framing and handshake and then does what the test says: `on`
 * gets every message after the start line, with the socket. Its machine logs into `log`.
 */
async function fakeRemote(name: string, on: (message: LinkMessage | null, socket: Socket) => void): Promise<{ machine: RemoteMachine; log: string[] }> {
  const sock = await linkSocket((socket) => {
    socket.on('error', () => undefined);
    const decoder = new FrameDecoder({
      start: () => undefined,
      junk: () => undefined,
      fail: () => socket.destroy(),
      frame: (payload) => on(decodeMessage(payload), socket),
    });
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
    socket.write(startLine);
    socket.write(encodeMessage({ k: 'server', protocol: LINK_PROTOCOL, version: '0.1.0' }));
  });
  const log: string[] = [];
  const machine = new RemoteMachine({
    name,
    destination: sock.path,
    ssh: pipe,
    remoteCommand: 'unused',
    clock: systemClock,
    version: '0.1.0',
    log: (line) => log.push(line),
  });
  cleanups.push(
    () => sock.close(),
    () => machine.stop(),
  );
  return { machine, log };
}

/**
 * This side for a fake remote: a local host with one bash (its view is the `info` a fake remote
 * answers an attach with), the machine in a RemoteMachines, and a Dispatcher for `ui`, all
 * cleaned up after the test. Call `start()` once the UI's handlers are set.
 */
async function localSide(
  machine: RemoteMachine,
  ui: UiClient,
): Promise<{ local: TerminalHost; info: TerminalView; dispatcher: Dispatcher; start: () => void }> {
  const local = new TerminalHost({ env: { ...process.env, PS1: '$ ' } });
  const shell = await local.create({ shell: 'bash' });
  const machines = new RemoteMachines();
  machines.add(machine);
  const dispatcher = new Dispatcher(local, ui, { remote: machines });
  cleanups.push(
    () => machines.stop(),
    () => dispatcher.dispose(),
    () => local.shutdown(),
  );
  return { local, info: local.list().find((view) => view.id === shell.id)!, dispatcher, start: () => machines.start() };
}

describe('the daemon side', () => {
  test.skipIf(!runs('a link directory with POSIX modes', posixModes) || !existsSync(resolve(__dirname, '../../out/main/cli.js')))(
    'tandem host --stdio refuses a link directory others can enter or a symlink, and starts no daemon there',
    () => {
      const base = mkdtempSync(join(tmpdir(), 'tandem-linkdir-'));
      cleanups.push(() => rmSync(base, { recursive: true, force: true }));
      const cli = resolve(__dirname, '../../bin/tandem.js');
      const open = join(base, 'open');
      mkdirSync(join(open, 'link'), { recursive: true });
      chmodSync(join(open, 'link'), 0o755);
      const linked = join(base, 'linked');
      mkdirSync(linked);
      mkdirSync(join(base, 'elsewhere'), { mode: 0o700 });
      symlinkSync(join(base, 'elsewhere'), join(linked, 'link'));
      for (const home of [open, linked]) {
        const run = spawnSync(process.execPath, [cli, 'host', '--stdio'], {
          env: { ...process.env, TANDEM_HOME: home },
          input: '',
          encoding: 'utf8',
          timeout: 60_000,
        });
        expect(run.status).toBe(1);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/must be a directory of this user that nobody else can enter \(mode 0700\)/);
        expect(existsSync(join(home, 'link', 'host.sock'))).toBe(false);
        expect(existsSync(join(home, 'link', 'daemon.log'))).toBe(false);
      }
      const bad = spawnSync(process.execPath, [cli, 'host', '--stdio', '--idle-timeout', 'soon'], {
        env: { ...process.env, TANDEM_HOME: open },
        input: '',
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain('--idle-timeout soon is not a number of minutes');
    },
  );

  test('the idle lifetime counts only while no link is connected (injected clock)', async () => {
    const clock = new ManualClock();
    let idle = 0;
    const host = new TerminalHost();
    const server = new LinkServer({ host, clock, version: 'test', idleMs: 60_000, onIdle: () => (idle += 1) });
    const sock = await linkSocket((s) => server.accept(s));
    cleanups.push(
      () => sock.close(),
      () => server.close(),
    );
    await clock.advance(59_000);
    expect(idle).toBe(0);
    const client = connect(sock.path);
    await until(() => server.connections === 1, 'the connection');
    await clock.advance(120_000);
    expect(idle).toBe(0);
    client.destroy();
    await until(() => server.connections === 0, 'the disconnect');
    await clock.advance(59_999);
    expect(idle).toBe(0);
    await clock.advance(1);
    expect(idle).toBe(1);
  });

  test('a hello of another protocol gets one sentence naming both versions, and no session', async () => {
    const host = new TerminalHost();
    const server = new LinkServer({ host, clock: systemClock, version: '0.1.0', idleMs: 60_000, onIdle: () => undefined });
    const sock = await linkSocket((s) => server.accept(s));
    cleanups.push(
      () => sock.close(),
      () => server.close(),
    );
    const messages: LinkMessage[] = [];
    const decoder = new FrameDecoder({ start: () => undefined, junk: () => undefined, fail: () => undefined, frame: (p) => messages.push(decodeMessage(p)!) });
    const client = connect(sock.path);
    client.on('data', (chunk: Buffer) => decoder.push(chunk));
    client.write(startLine);
    client.write(encodeMessage({ k: 'hello', protocol: LINK_PROTOCOL + 1, version: '9.0.0', session: null, received: 0 }));
    await until(() => messages.some((m) => m.k === 'refuse'), 'the refusal');
    const refusal = messages.find((m) => m.k === 'refuse') as { message: string };
    expect(refusal.message).toMatch(
      new RegExp(
        `^The remote machine runs Tandem 0\\.1\\.0 \\(link protocol ${LINK_PROTOCOL}\\) and this computer Tandem 9\\.0\\.0 \\(link protocol ${LINK_PROTOCOL + 1}\\); update Tandem on the remote machine`,
      ),
    );
    expect(server.sessionCount).toBe(0);
    client.destroy();
  });
});

describe('the local side', () => {
  test('a link that says nothing for 14 s is found dead within 15 s and reconnected (injected clock)', async () => {
    const clock = new ManualClock();
    let connections = 0;
    // A remote that welcomes and then never answers again (a laptop asleep, a dead route).
    const sock = await linkSocket((socket) => {
      connections += 1;
      socket.write(startLine);
      socket.write(encodeMessage({ k: 'server', protocol: LINK_PROTOCOL, version: 'test' }));
      socket.write(encodeMessage({ k: 'welcome', session: `s${connections}`, resumed: false, received: 0 }));
      socket.on('error', () => undefined);
    });
    const machine = new RemoteMachine({ name: 'quiet', destination: sock.path, ssh: pipe, remoteCommand: 'unused', clock, version: 'test' });
    cleanups.push(
      () => sock.close(),
      () => machine.stop(),
    );
    machine.start();
    await until(() => machine.status === 'connected', 'the welcome');
    const first = machine.process!;
    await clock.advance(13_000);
    expect(machine.status).toBe('connected');
    expect(first.exitCode === null && first.signalCode === null).toBe(true);
    await clock.advance(1_000);
    await until(() => machine.status === 'reconnecting', 'the dead link noticed');
    expect(first.signalCode ?? first.exitCode).not.toBeNull();
    await clock.advance(250);
    await until(() => connections === 2 && machine.status === 'connected', 'the reconnect after backoff');
  });

  test('a call waits through a link that is not up, within its bound: then it fails not_running (injected clock)', async () => {
    const clock = new ManualClock();
    // A remote that prints its start line and then nothing (a daemon hung before its hello).
    const sock = await linkSocket((socket) => {
      socket.write(startLine);
      socket.on('error', () => undefined);
    });
    const machine = new RemoteMachine({ name: 'hung', destination: sock.path, ssh: pipe, remoteCommand: 'unused', clock, version: 'test' });
    cleanups.push(
      () => sock.close(),
      () => machine.stop(),
    );
    machine.start();
    const outcome = machine.call('list', {}).then(
      () => 'answered',
      (error: { code: string; message: string }) => `${error.code}: ${error.message}`,
    );
    await clock.advance(119_000);
    let settled = false;
    void outcome.then(() => (settled = true));
    await clock.advance(0);
    expect(settled).toBe(false);
    await clock.advance(1_000);
    expect(await outcome).toBe('not_running: hung did not answer within 120 s.');
  });

  test('a hostile remote that sends malformed events and answers crashes nothing here: local shells live on, nothing malformed is shown, calls fail internal', async () => {
    // A remote that speaks the link's framing and handshake and then lies: every event and every
    // answer in a shape the contract does not have (the daemon's own code never sends these).
    const junk: Array<{ event: string; payload: unknown }> = [
      { event: 'agents', payload: { paired: [], connected: [], pairings: [], allowedOnce: [], deniedClaims: [], approvals: null, handoffs: [], ran: [] } },
      { event: 'roster', payload: { terminals: [null] } },
      { event: 'roster', payload: null },
      { event: 'agents', payload: { pairings: 'x' } },
      { event: 'output', payload: { attachmentId: 5, seq: 'x', data: null } },
      { event: 'attachmentClosed', payload: { attachmentId: 'a', error: null } },
      { event: 'settings', payload: { theme: 'dark' } },
    ];
    let seq = 0;
    const { machine, log } = await fakeRemote('evil', (message, socket) => {
      const send = (body: LinkBody) => socket.write(encodeMessage({ k: 'msg', s: ++seq, body }));
      if (message?.k === 'hello') {
        socket.write(encodeMessage({ k: 'welcome', session: 'evil', resumed: false, received: 0 }));
        for (const { event, payload } of junk) send({ t: 'event', event: event as EventName, payload: payload as never });
        // A roster of a million empty objects (under the 4 MiB frame bound): zod, asked for every
        // failure, built gigabytes of issues for it and the process died.
        send({ t: 'event', event: 'roster', payload: { terminals: new Array(1_000_000).fill({}) } as never });
      }
      if (message?.k === 'msg' && message.body.t === 'call') {
        const { id, op } = message.body;
        // A list answer with a terminal that is not one; an error that is not an error; others a bare string.
        if (op === 'list') send({ t: 'result', id, ok: true, value: { terminals: [{ id: 'x' }] } });
        // A timeline too deep for JSON, and an attach never answered (the other views go on meanwhile).
        else if (op === 'timeline') {
          // Written by hand: JSON.stringify itself cannot write it.
          const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
          const value = `{"records":[{"deep":${deep}}],"chains":[],"truncated":false}`;
          socket.write(encodeFrame(Buffer.from(`{"k":"msg","s":${++seq},"body":{"t":"result","id":${id},"ok":true,"value":${value}}}`)));
        } else if (op === 'attach') return;
        else if (op === 'rename') send({ t: 'result', id, ok: false, error: null as never });
        else send({ t: 'result', id, ok: true, value: 'not an answer' });
      }
    });
    const machines = new RemoteMachines();
    machines.add(machine);
    const rosters: TerminalView[][] = [];
    const panels: AgentsState[] = [];
    const ui: UiClient = {
      id: 'hostile-remote-ui',
      send: (event, payload) => {
        if (event === 'roster') rosters.push((payload as EventPayload<'roster'>).terminals);
        if (event === 'agents') panels.push(payload as AgentsState);
      },
    };
    const local = await startAgentFixture();
    const dispatcher = new Dispatcher(local.host, ui, { agents: local.layer, remote: machines });
    cleanups.push(
      () => machines.stop(),
      () => dispatcher.dispose(),
      () => local.close(),
    );
    const shell = await local.host.create({ shell: 'bash' });
    machines.start();
    await until(
      () => log.filter((line) => line.includes('is not Tandem')).length >= 7,
      () => `the junk events refused: ${log.join(' / ')}`,
    );
    // Nothing of it shows, and the panel still reads.
    expect(machines.roster()).toEqual([]);
    expect(machines.agentsOverlay(local.layer.state()).approvals).toEqual([]);
    expect(rosters.flat().some((view) => view.machine === 'evil')).toBe(false);
    // Its answers: refused as not Tandem's, never shown.
    for (const [op, args] of [
      ['create', { machine: 'evil', shell: 'bash' }],
      ['rename', { id: 'evil:x', title: 'y' }],
      ['setAgentPolicy', { machine: 'evil', name: 'a', policy: 'always' }],
      ['timeline', { terminalId: 'evil:x' }],
    ] as const) {
      const error = (await dispatcher.call(op, args).catch((e: unknown) => e)) as { code?: string; message?: string };
      expect(error.code, op).toBe('internal');
    }
    expect(((await dispatcher.call('list', {})) as { terminals: TerminalView[] }).terminals.map((view) => view.id)).toEqual([shell.id]);
    // An attach the remote never answers holds no other view: the transports hold nothing for it
    // (the machine keeps the view's own early frames until its result is out).
    expect(dispatcher.holdsAttach({ id: 'evil:x' })).toBe(false);
    expect(dispatcher.holdsAttach({ id: shell.id })).toBe(true);
    // The local shell lives on and answers.
    const session = local.host.get(shell.id).session;
    expect(session.status).not.toBe('exited');
    expect(await session.send({ text: 'echo alive-$((6*7))', waitMs: 30_000 })).toMatchObject({ status: 'done', output: 'alive-42' });
  });

  test.each([
    ['a part whose text is not text (its length would switch the 64 Mi bound off)', { t: 'part', text: 0, last: false }],
    ['a ping whose number is 4 MB of text (each pong echoed it back)', null],
  ] as const)('a remote that sends %s loses its link, not this side its memory', async (_what, body) => {
    const { machine, log } = await fakeRemote('liar', (message, socket) => {
      if (message?.k !== 'hello') return;
      socket.write(encodeMessage({ k: 'welcome', session: 'liar', resumed: false, received: 0 }));
      if (body) socket.write(encodeMessage({ k: 'msg', s: 1, body: body as never }));
      else socket.write(encodeMessage({ k: 'ping', n: 'x'.repeat(4_000_000) } as never));
    });
    const changes: string[] = [];
    machine.onChange(() => changes.push(machine.status));
    machine.start();
    await until(
      () => changes.includes('connected') && changes.at(-1) !== 'connected',
      () => `the link dropped: ${changes.join(' ')} / ${log.join(' / ')}`,
    );
  });

  test.each([
    ['a remote that ignores flow control loses the view once it sent past the bound, and the view is told why', false],
    ['a remote that keeps to flow control (1 Mi in flight) gets the same flood through, and the view stays', true],
  ] as const)('%s', async (_what, keepsToIt) => {
    // What a well-behaved remote host never does: send past 1 Mi unacknowledged characters
    // (it pauses the shell) or 8 Mi (it drops the viewer). The hostile one sends 12 Mi to a view
    // that acknowledges nothing; the desktop window's IPC has no bound of its own, so this side
    // must hold the line.
    const frameChars = 64 * 1024;
    const frames = 192;
    const calls: string[] = [];
    let info: TerminalView | null = null;
    let seq = 0;
    let sentFrames = 0;
    let ackedFrames = 0;
    const { machine, log } = await fakeRemote('flood', (message, socket) => {
      const send = (body: LinkBody) => socket.write(encodeMessage({ k: 'msg', s: ++seq, body }));
      const flood = () => {
        while (sentFrames < frames && (!keepsToIt || (sentFrames - ackedFrames) * frameChars < 1024 * 1024)) {
          sentFrames += 1;
          send({ t: 'event', event: 'output', payload: { attachmentId: 'r1', seq: sentFrames, data: String(sentFrames % 10).repeat(frameChars) } } as never);
        }
      };
      if (message?.k === 'hello') socket.write(encodeMessage({ k: 'welcome', session: 'flood', resumed: false, received: 0 }));
      // Alive however long the flood takes on a loaded machine (a quiet link is dropped after 14 s).
      if (message?.k === 'ping') socket.write(encodeMessage({ k: 'pong', n: message.n }));
      if (message?.k !== 'msg' || message.body.t !== 'call') return;
      const { id, op, args } = message.body;
      calls.push(op);
      if (op === 'attach') {
        send({
          t: 'result',
          id,
          ok: true,
          value: { attachmentId: 'r1', snapshot: '', seq: 0, writable: true, info: { ...info!, id: (args as { id: string }).id } },
        });
        flood();
        return;
      }
      send({ t: 'result', id, ok: true, value: op === 'list' ? { terminals: [] } : {} });
      if (op === 'ack') {
        ackedFrames = Math.max(ackedFrames, (args as { seq: number }).seq);
        flood();
      }
    });
    let received = 0;
    const closed: Array<{ code: string; message: string }> = [];
    let dispatcher: Dispatcher | null = null;
    const ui: UiClient = {
      id: 'flow-ui',
      send: (event, payload) => {
        if (event === 'output') {
          const frame = payload as EventPayload<'output'>;
          received += frame.data.length;
          // The hostile case's view acknowledges nothing (a page that stopped reading).
          if (keepsToIt) void dispatcher!.call('ack', { attachmentId: frame.attachmentId, seq: frame.seq }).catch(() => undefined);
        }
        if (event === 'attachmentClosed') closed.push((payload as EventPayload<'attachmentClosed'>).error);
      },
    };
    const side = await localSide(machine, ui);
    ({ info, dispatcher } = side);
    const { local } = side;
    side.start();
    await until(() => machine.status === 'connected', 'the link');
    await dispatcher.call('attach', { id: 'flood:x' });
    if (keepsToIt) {
      await until(
        () => received === frames * frameChars,
        () => `the whole flood (${received} characters so far; ${calls.join(' ')}; ${log.join(' / ')}; ${machine.status})`,
      );
      expect(closed).toEqual([]);
      expect(calls).not.toContain('detach');
    } else {
      await until(
        () => closed.length > 0 && calls.includes('detach'),
        () => `the view closed (${received} characters passed; ${calls.join(' ')}; ${log.join(' / ')}; ${machine.status})`,
      );
      expect(closed).toEqual([{ code: 'capacity', message: expect.stringContaining('sent this view more output than it acknowledged') }]);
      expect(received).toBeLessThanOrEqual(maxRemoteUnackedChars);
      expect(received).toBeGreaterThan(maxRemoteUnackedChars - frameChars);
    }
    // This side's own terminal is unharmed.
    expect(await local.get(info!.id).session.send({ text: 'echo alive-$((6*7))', waitMs: 30_000 })).toMatchObject({ status: 'done', output: 'alive-42' });
  });

  test('a remote whose frame numbers go down loses the view (a lower number would release what the page has not applied)', async () => {
    let seq = 0;
    let info: TerminalView | null = null;
    const calls: string[] = [];
    const { machine } = await fakeRemote('order', (message, socket) => {
      const send = (body: LinkBody) => socket.write(encodeMessage({ k: 'msg', s: ++seq, body }));
      if (message?.k === 'hello') socket.write(encodeMessage({ k: 'welcome', session: 'order', resumed: false, received: 0 }));
      if (message?.k === 'ping') socket.write(encodeMessage({ k: 'pong', n: message.n }));
      if (message?.k !== 'msg' || message.body.t !== 'call') return;
      const { id, op, args } = message.body;
      calls.push(op);
      if (op !== 'attach') {
        send({ t: 'result', id, ok: true, value: op === 'list' ? { terminals: [] } : {} });
        return;
      }
      send({
        t: 'result',
        id,
        ok: true,
        value: { attachmentId: 'r1', snapshot: '', seq: 0, writable: true, info: { ...info!, id: (args as { id: string }).id } },
      });
      send({ t: 'event', event: 'output', payload: { attachmentId: 'r1', seq: 5000, data: 'x'.repeat(60_000) } } as never);
      send({ t: 'event', event: 'output', payload: { attachmentId: 'r1', seq: 1, data: 'y' } } as never);
    });
    const frames: number[] = [];
    const closed: string[] = [];
    const ui: UiClient = {
      id: 'order-ui',
      send: (event, payload) => {
        if (event === 'output') frames.push((payload as EventPayload<'output'>).seq);
        if (event === 'attachmentClosed') closed.push((payload as EventPayload<'attachmentClosed'>).error.code);
      },
    };
    const side = await localSide(machine, ui);
    info = side.info;
    side.start();
    await until(() => machine.status === 'connected', 'the link');
    await side.dispatcher.call('attach', { id: 'order:x' });
    await until(
      () => closed.length > 0 && calls.includes('detach'),
      () => `the view closed (frames ${frames.join(' ')})`,
    );
    expect(closed).toEqual(['capacity']);
    // Frame 1 never reached the page (5000 did where the attach's answer was out before 1 came).
    expect(frames.filter((seq) => seq !== 5000)).toEqual([]);
  });

  test('a view attached while the link is still being set up is attached once, and gets its output', async () => {
    // The remote holds its answer to the link's first `list` until the view's attach is in: the
    // set-up then went on to attach every view "again", this new one too, and the frames of its
    // first attachment (still sending on the remote) were dropped here.
    const calls: string[] = [];
    let seq = 0;
    let heldList: (() => void) | null = null;
    let info: TerminalView | null = null;
    const { machine } = await fakeRemote('early', (message, socket) => {
      const send = (body: LinkBody) => socket.write(encodeMessage({ k: 'msg', s: ++seq, body }));
      if (message?.k === 'hello') socket.write(encodeMessage({ k: 'welcome', session: 'early', resumed: false, received: 0 }));
      if (message?.k !== 'msg' || message.body.t !== 'call') return;
      const { id, op, args } = message.body;
      calls.push(op);
      if (op === 'list' && calls.filter((call) => call === 'list').length === 1) {
        heldList = () => send({ t: 'result', id, ok: true, value: { terminals: [] } });
        return;
      }
      if (op === 'attach') {
        const n = calls.filter((call) => call === 'attach').length;
        send({
          t: 'result',
          id,
          ok: true,
          value: { attachmentId: `r${n}`, snapshot: '', seq: 0, writable: true, info: { ...info!, id: (args as { id: string }).id } },
        });
        send({ t: 'event', event: 'output', payload: { attachmentId: `r${n}`, seq: 1, data: `hello from r${n}` } } as never);
        heldList?.();
        heldList = null;
        return;
      }
      send({ t: 'result', id, ok: true, value: op === 'list' ? { terminals: [] } : {} });
    });
    const output: string[] = [];
    const ui: UiClient = { id: 'early-ui', send: (event, payload) => void (event === 'output' && output.push((payload as EventPayload<'output'>).data)) };
    const { dispatcher, ...side } = await localSide(machine, ui);
    info = side.info;
    side.start();
    await until(() => calls.includes('list'), "the link's first list");
    await dispatcher.call('attach', { id: 'early:x' });
    await until(
      () => output.length > 0 && calls.includes('agents'),
      () => `its output (${output.join('|')}; ${calls.join(' ')})`,
    );
    // Room for a second attach, had the set-up sent one: it follows the list's answer at once.
    await dispatcher.call('list', {});
    expect(calls.filter((call) => call === 'attach')).toHaveLength(1);
    expect(output).toEqual(['hello from r1']);
  });

  test('a remote of another link protocol is told in one sentence, not crashed on', async () => {
    const sock = await linkSocket((socket) => {
      socket.write(`motd\n${startLine}`);
      socket.write(encodeMessage({ k: 'server', protocol: LINK_PROTOCOL + 1, version: '9.0.0' }));
      socket.on('error', () => undefined);
    });
    const machine = new RemoteMachine({ name: 'newer', destination: sock.path, ssh: pipe, remoteCommand: 'unused', clock: systemClock, version: '0.1.0' });
    cleanups.push(
      () => sock.close(),
      () => machine.stop(),
    );
    machine.start();
    await until(() => machine.status === 'failed', 'the mismatch');
    expect(machine.problem).toBe(
      `newer runs Tandem 9.0.0 (link protocol ${LINK_PROTOCOL + 1}) and this computer Tandem 0.1.0 (link protocol ${LINK_PROTOCOL}); update Tandem on this computer (npm install -g tandem-terminal) so both speak the same protocol.`,
    );
  });

  test('past the remote replay bound a drop restarts each view from the remote snapshot: one reset frame, numbers contiguous', async () => {
    const host = new TerminalHost({ env: { ...process.env, PS1: '$ ' } });
    const server = new LinkServer({ host, clock: systemClock, version: host.version, idleMs: 3_600_000, onIdle: () => undefined, maxReplayBytes: 16 * 1024 });
    // Reconnects are held until the flood is over on the remote, so the remote always buffers
    // past its bound while the link is down (a reconnect 250 ms after the drop could otherwise
    // come before a loaded machine's shell had printed 16 KiB).
    let held: Promise<void> | null = null;
    const sock = await linkSocket((s) => {
      if (held) void held.then(() => server.accept(s));
      else server.accept(s);
    });
    const machines = new RemoteMachines();
    const machine = new RemoteMachine({ name: 'small', destination: sock.path, ssh: pipe, remoteCommand: 'unused', clock: systemClock, version: host.version });
    machines.add(machine);
    const frames: Array<{ seq: number; data: string }> = [];
    let dispatcher: Dispatcher | null = null;
    const client: UiClient = {
      id: 'ui',
      send: <K extends EventName>(event: K, payload: EventPayload<K>) => {
        if (event !== 'output') return;
        const { attachmentId, seq, data } = payload as EventPayload<'output'>;
        frames.push({ seq, data });
        void dispatcher!.call('ack', { attachmentId, seq }).catch(() => undefined);
      },
    };
    dispatcher = new Dispatcher(new TerminalHost(), client, { remote: machines });
    cleanups.push(
      () => host.shutdown(),
      () => sock.close(),
      () => server.close(),
      () => machine.stop(),
      () => dispatcher!.dispose(),
    );
    machines.start();
    await until(() => machine.status === 'connected', 'the link');
    const view = (await dispatcher.call('create', { machine: 'small', shell: 'bash' })) as TerminalView;
    await until(() => machine.terminals.some((t) => t.status === 'idle'), 'the shell ready', 60_000);
    const { attachmentId } = (await dispatcher.call('attach', { id: view.id })) as { attachmentId: string };
    let release = () => undefined as void;
    held = new Promise<void>((r) => (release = r));
    machine.process!.kill('SIGKILL');
    await until(() => machine.status !== 'connected', 'the drop');
    // While the link is down the remote buffers more than its bound for the session.
    const remote = host.get(host.list()[0]!.id);
    await remote.personInput('seq 1 20000; echo fl""ood-done\r', true);
    await until(() => remote.view().lastCommand?.command?.startsWith('seq 1 20000') === true, 'the flood to end on the remote', 60_000);
    release();
    await until(() => machine.status === 'connected', 'the reconnect', 60_000);
    await until(
      () =>
        frames
          .map((f) => f.data)
          .join('')
          .includes('flood-done'),
      'the end of the flood on the view',
      60_000,
    );
    const resets = frames.filter((f) => f.data.startsWith('\x1bc'));
    expect(resets).toHaveLength(1);
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i + 1));
    await dispatcher.call('detach', { attachmentId });
  }, 120_000);

  test("a remote terminal's timeline, recording list, pages and export come from its machine, their ids named by it", async () => {
    const root = mkdtempSync(join(tmpdir(), 'tandem-remote-rec-'));
    const store = (dir: string) => new RecordingStore(join(root, dir), { clock: systemClock, bounds: () => defaultSettings });
    const host = new TerminalHost({ env: { ...process.env, PS1: '$ ' }, recordings: store('remote') });
    const server = new LinkServer({ host, clock: systemClock, version: host.version, idleMs: 3_600_000, onIdle: () => undefined });
    const sock = await linkSocket((s) => server.accept(s));
    const machines = new RemoteMachines();
    const machine = new RemoteMachine({ name: 'rec', destination: sock.path, ssh: pipe, remoteCommand: 'unused', clock: systemClock, version: host.version });
    machines.add(machine);
    const local = new TerminalHost({ recordings: store('local') });
    const dispatcher = new Dispatcher(local, { id: 'ui', send: () => undefined }, { remote: machines });
    cleanups.push(
      () => host.shutdown(),
      () => local.shutdown(),
      () => sock.close(),
      () => server.close(),
      () => machine.stop(),
      () => dispatcher.dispose(),
      () => rmSync(root, { recursive: true, force: true }),
    );
    machines.start();
    await until(() => machine.status === 'connected', 'the link');
    const view = (await dispatcher.call('create', { machine: 'rec', shell: 'bash' })) as TerminalView;
    await until(() => machine.terminals.some((t) => t.status === 'idle'), 'the shell ready', 60_000);
    const remote = host.get(host.list()[0]!.id);
    // Over a link frame's 4 MiB: the export's answer goes in parts (a view's attach of a long
    // scrollback does the same; its size depends on how the remote's history keeps a flood).
    await remote.personInput(`python3 -c "print(('x' * 499 + '\\n') * 10000, end='')"; echo rec-$((6*7))\r`, true);
    type Timeline = { records: Array<{ type: string; command?: string; recordingId: string; terminalId: string }>; chains: Array<{ ok: boolean }> };
    let timeline: Timeline = { records: [], chains: [] };
    await until(async () => {
      timeline = (await dispatcher.call('timeline', { terminalId: view.id })) as Timeline;
      return timeline.records.some((r) => r.type === 'command' && r.command?.endsWith('echo rec-$((6*7))') === true);
    }, "the command's record");
    const recordingId = timeline.records[0]!.recordingId;
    expect(recordingId).toMatch(/^rec:/);
    expect(new Set(timeline.records.map((r) => r.terminalId))).toEqual(new Set([view.id]));
    expect(timeline.chains.every((c) => c.ok)).toBe(true);
    const { recordings } = (await dispatcher.call('listRecordings', {})) as { recordings: Array<{ id: string; terminalId: string }> };
    expect(recordings).toContainEqual(expect.objectContaining({ id: recordingId, terminalId: view.id }));
    const page = (await dispatcher.call('readRecordingCast', { id: recordingId, offset: 0 })) as { id: string; text: string };
    expect(page.id).toBe(recordingId);
    expect(page.text).toContain('rec-42');
    const exported = (await dispatcher.call('exportRecording', { id: recordingId })) as { id: string; cast: string; verification: { ok: boolean } };
    expect(exported).toMatchObject({ id: recordingId, verification: { ok: true } });
    expect(exported.cast).toContain('rec-42');
    expect(JSON.stringify(exported).length).toBeGreaterThan(maxFramePayload);
    // An id of no machine is this computer's: the local store says it does not know it.
    await expect(dispatcher.call('exportRecording', { id: 'nowhere:abc' })).rejects.toMatchObject({ code: 'invalid_argument' });
  }, 120_000);

  test("a remote agent's approval is answered in the local UI, and the command runs on the remote; pairing stays there", async () => {
    const remote = await startAgentFixture();
    const local = await startAgentFixture();
    const server = new LinkServer({
      host: remote.host,
      agents: remote.layer,
      clock: systemClock,
      version: remote.host.version,
      idleMs: 3_600_000,
      onIdle: () => undefined,
    });
    const sock = await linkSocket((s) => server.accept(s));
    const machines = new RemoteMachines();
    const machine = new RemoteMachine({
      name: 'far',
      destination: sock.path,
      ssh: pipe,
      remoteCommand: 'unused',
      clock: systemClock,
      version: remote.host.version,
    });
    machines.add(machine);
    const panels: AgentsState[] = [];
    const client: UiClient = {
      id: 'ui',
      send: <K extends EventName>(event: K, payload: EventPayload<K>) => {
        if (event === 'agents') panels.push(payload as AgentsState);
      },
    };
    const dispatcher = new Dispatcher(local.host, client, { agents: local.layer, remote: machines });
    cleanups.push(
      () => local.close(),
      () => remote.close(),
      () => sock.close(),
      () => server.close(),
      () => machine.stop(),
      () => dispatcher.dispose(),
    );
    machines.start();
    await until(() => machine.status === 'connected', 'the link');
    const token = remote.layer.pairAgent({ name: 'builder' }).token;
    remote.layer.setAgentPolicy({ name: 'builder', policy: 'ask' });
    const agent = await remote.client(token);
    const { id } = (await remote.call(agent, 'terminal_open', { title: 'far build' })) as { id: string };
    const sending = remote.call(agent, 'terminal_send', { id, text: 'echo approved-$((40+2))', waitMs: 55_000 });
    await until(() => panels.some((p) => p.approvals.length > 0), 'the remote approval in the local panel');
    const approval = panels[panels.length - 1]!.approvals[0]!;
    expect(approval).toMatchObject({ agent: 'builder@far', terminalId: `far:${id}`, command: 'echo approved-$((40+2))' });
    expect(approval.id.startsWith('far:')).toBe(true);
    // The local agents op shows it too; the remote's pairing is not answerable from here.
    const listed = (await dispatcher.call('agents', {})) as AgentsState;
    expect(listed.approvals.map((a) => a.id)).toContain(approval.id);
    expect(((await machine.call('pairAgent', { name: 'x' }).catch((e: unknown) => e)) as { code: string }).code).toBe('forbidden');
    await dispatcher.call('answerApproval', { requestId: approval.id, decision: 'approve' });
    expect(await sending).toMatchObject({ status: 'done', output: 'approved-42' });
    await until(() => panels[panels.length - 1]!.approvals.length === 0, 'the answered approval gone');
    // A policy change aimed at the remote agent's name here finds no local agent: it changes nothing there.
    const refused = (await dispatcher.call('setAgentPolicy', { name: approval.agent, policy: 'always' }).catch((e: unknown) => e)) as { code?: string };
    expect(refused.code).toBe('not_found');
    expect(remote.layer.state().paired.find((p) => p.name === 'builder')!.policy).toBe('ask');

    // An unknown key is refused, not dropped: a mistyped machine key never lands on this machine's agent of that name.
    local.layer.pairAgent({ name: 'builder' });
    for (const [op, args] of [
      ['setAgentPolicy', { name: 'builder', policy: 'always', Machine: 'far' }],
      ['revokeAgent', { name: 'builder', machines: 'far' }],
      ['pairAgent', { name: 'ghost', machine: 'far' }],
    ] as const) {
      const error = (await dispatcher.call(op, args).catch((e: unknown) => e)) as { code?: string };
      expect(error.code, op).toBe('invalid_argument');
    }
    expect(local.layer.state().paired.map((p) => [p.name, p.policy])).toEqual([['builder', 'ask-unless-allowed']]);

    // "Deny all" here denies the machine's waiting pairing requests too: they are in the same list.
    const asking = fetch(`${remote.url}/pair`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'flood', pid: 4242, exe: '/usr/bin/python3', cwd: '/tmp' }),
    }).catch(() => undefined);
    await until(() => panels.at(-1)?.pairings.some((r) => r.name === 'flood@far') === true, 'the remote pairing request in the local panel');
    await dispatcher.call('denyAllPairings', {});
    expect(remote.layer.state().pairings).toEqual([]);
    expect(remote.layer.state().pairingsPausedUntil).toBeTruthy();
    await asking;
  }, 120_000);

  test.skipIf(!existsSync(resolve(__dirname, '../../out/main/cli.js')))(
    "a remote agent's pairing request is answered in the local UI; its token stays on its machine",
    async () => {
      const home = mkdtempSync(join(tmpdir(), 'tandem-remote-pair-'));
      cleanups.push(() => rmSync(home, { recursive: true, force: true }));
      const remote = await startAgentFixture({ tandemHome: home });
      const local = await startAgentFixture();
      const server = new LinkServer({
        host: remote.host,
        agents: remote.layer,
        clock: systemClock,
        version: remote.host.version,
        idleMs: 3_600_000,
        onIdle: () => undefined,
      });
      const sock = await linkSocket((s) => server.accept(s));
      const machines = new RemoteMachines();
      const machine = new RemoteMachine({
        name: 'far',
        destination: sock.path,
        ssh: pipe,
        remoteCommand: 'unused',
        clock: systemClock,
        version: remote.host.version,
      });
      machines.add(machine);
      const frames: string[] = [];
      const panels: AgentsState[] = [];
      const client: UiClient = {
        id: 'ui',
        send: <K extends EventName>(event: K, payload: EventPayload<K>) => {
          frames.push(JSON.stringify(payload));
          if (event === 'agents') panels.push(payload as AgentsState);
        },
      };
      const dispatcher = new Dispatcher(local.host, client, { agents: local.layer, remote: machines });
      cleanups.push(
        () => local.close(),
        () => remote.close(),
        () => sock.close(),
        () => server.close(),
        () => machine.stop(),
        () => dispatcher.dispose(),
      );
      machines.start();
      await until(() => machine.status === 'connected', 'the link');
      // An agent on the far machine starts its stdio bridge there, as it would locally.
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [resolve(__dirname, '../../bin/tandem.js'), 'mcp', '--name', 'far-agent'],
        env: { PATH: process.env.PATH ?? '', HOME: home, TANDEM_HOME: home },
        stderr: 'pipe',
      });
      const agent = new Client({ name: 'far-agent', version: '1.0.0' });
      await agent.connect(transport);
      cleanups.push(() => agent.close());
      const list = async () => {
        const result = await agent.callTool({ name: 'terminal_list', arguments: {} }, undefined, { timeout: 70_000 });
        return { isError: result.isError === true, ...(result.structuredContent as Record<string, unknown>) };
      };
      expect(await list()).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
      await until(() => panels.some((p) => p.pairings.length > 0), 'the remote pairing request in the local panel');
      const request = panels[panels.length - 1]!.pairings[0]!;
      expect(request).toMatchObject({ name: 'far-agent@far' });
      expect(request.id.startsWith('far:')).toBe(true);
      await dispatcher.call('answerPairing', { requestId: request.id, decision: 'always' });
      await until(() => remote.layer.state().paired.some((p) => p.name === 'far-agent'), 'the agent paired on its machine');
      expect(await list()).toMatchObject({ isError: false, terminals: [] });
      // The bridge keeps the token it was given on the far machine; nothing the local UI received carries it.
      const token = readFileSync(join(home, 'agents', 'far-agent.token'), 'utf8').trim();
      expect(token.length).toBeGreaterThanOrEqual(20);
      expect(frames.join('\n')).not.toContain(token);
      expect(local.layer.state().paired.some((p) => p.name.startsWith('far-agent'))).toBe(false);
    },
    120_000,
  );
});
