/**
 * The loopback door's connections (src/main/web/server.ts): another user's are closed before a
 * byte is read (the kernel's TCP table names the uid at the other end, Linux), and however many
 * a process opens, at most `maxConnections` stay. Found black-box (round 4): another user held
 * 20,000 idle connections, the host's descriptors ran out, and every agent and page was locked
 * out until they let go. The attacks use real sockets and a real second uid (setpriv).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TerminalHost } from '../../src/main/host/host.js';
import { WebServer } from '../../src/main/web/server.js';
import { procfs, root, runs, setpriv } from '../support/capabilities.js';
import { until } from '../support/until.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(opts: { maxConnections?: number } = {}): Promise<{ server: WebServer; port: number }> {
  const host = new TerminalHost();
  const server = await WebServer.start({ host, rendererDir: null, heartbeatMs: 0, ...opts });
  cleanups.push(
    () => server.close(),
    () => host.shutdown(),
  );
  return { server, port: Number(new URL(server.origin).port) };
}

/** An HTTP answer to a plain GET, or null when the server closed the connection without one. */
function get(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('connect', () => socket.write(`GET /nothing-here HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`));
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text === '' ? null : text.split('\r\n')[0]!));
  });
}

/** Idle connections held open; `closed` counts those the server ended. */
async function hold(port: number, count: number): Promise<{ sockets: Socket[]; closed: () => number }> {
  let closed = 0;
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve) => {
          const socket = connect(port, '127.0.0.1', () => resolve(socket));
          socket.on('error', () => undefined);
          socket.on('close', () => (closed += 1));
        }),
    ),
  );
  cleanups.push(() => sockets.forEach((socket) => socket.destroy()));
  return { sockets, closed: () => closed };
}

/** Another user: holds `count` connections to the port, then tries a GET; prints what it saw. */
const attackerSource = `
import { connect } from 'node:net';
const [port, count] = process.argv.slice(2).map(Number);
let closed = 0, answered = 0;
const sockets = [];
await Promise.all(Array.from({ length: count }, () => new Promise((resolve) => {
  const s = connect(port, '127.0.0.1');
  s.on('connect', resolve);
  s.on('error', () => resolve());
  s.on('close', () => { closed += 1; resolve(); });
  sockets.push(s);
})));
const text = await new Promise((resolve) => {
  const s = connect(port, '127.0.0.1');
  let got = '';
  s.on('connect', () => s.write('GET / HTTP/1.1\\r\\nHost: 127.0.0.1:' + port + '\\r\\nConnection: close\\r\\n\\r\\n'));
  s.on('data', (d) => (got += d));
  s.on('error', () => undefined);
  s.on('close', () => resolve(got));
});
await new Promise((r) => setTimeout(r, 500));
process.stdout.write(JSON.stringify({ closed, count, answer: text }));
for (const s of sockets) s.destroy();
`;

function attackerUser(): { uid: number; gid: number } {
  const name = 'tandem-attacker';
  if (spawnSync('id', ['-u', name]).status !== 0) execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  return { uid: Number(execFileSync('id', ['-u', name]).toString()), gid: Number(execFileSync('id', ['-g', name]).toString()) };
}

describe('the loopback door’s connections', () => {
  it.runIf(runs("another user's connections", root, setpriv, procfs))(
    'closes every connection of another user before reading it, so holding many takes nothing from the host',
    async () => {
      const { port } = await start();
      const user = attackerUser();
      const dir = mkdtempSync(join(tmpdir(), 'tandem-attacker-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      chmodSync(dir, 0o755);
      writeFileSync(join(dir, 'attack.mjs'), attackerSource, { mode: 0o644 });
      const child = spawn(
        'setpriv',
        [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', process.execPath, join(dir, 'attack.mjs'), String(port), '300'],
        {
          cwd: dir,
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      expect(await new Promise<number | null>((resolve) => child.on('close', resolve))).toBe(0);
      const seen = JSON.parse(out) as { closed: number; count: number; answer: string };
      // Every one was closed by the host, and its request got no answer at all.
      expect(seen).toEqual({ closed: 300, count: 300, answer: '' });
      // The person's own connection is served as before.
      expect(await get(port)).toMatch(/^HTTP\/1\.1 \d{3}/);
    },
  );

  it('keeps at most maxConnections open: past it new ones are closed as they come, and the door serves again once they go', async () => {
    const { port } = await start({ maxConnections: 16 });
    const flood = await hold(port, 40);
    await until(
      () => flood.closed() >= 24,
      () => `the connections past the bound closed (${flood.closed()} of 40)`,
    );
    // Those it kept stay open: 16 of them, no more closed than the bound asks.
    expect(flood.closed()).toBe(24);
    expect(await get(port)).toBeNull();
    for (const socket of flood.sockets) socket.destroy();
    await until(async () => (await get(port)) !== null, 'the door serving again');
    expect(await get(port)).toMatch(/^HTTP\/1\.1 \d{3}/);
  });
});
