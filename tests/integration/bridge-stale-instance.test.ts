import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../src/main/host/instance.js';
import { processStartTime } from '../../src/main/host/process-start.js';

// Tandem killed with -9 leaves instance.json and bridge.sock behind. Whoever then holds its pid
// and its TCP port must get nothing from a bridge: attacked through the real `tandem mcp`
// (out/main, built by `npm run build`) driven by the official SDK client, with a raw TCP
// listener on the port instance.json names that records every byte it is sent.
const bin = resolve(__dirname, '../../bin/tandem.js');
const token = 'tdm_stale-instance-token-that-must-not-leave';
const isRoot = process.getuid?.() === 0;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A squatter on a TCP port: keeps every byte it is sent and answers each request with a 500 (so a bridge that did send fails fast). */
async function squatter(): Promise<{ port: number; received: () => string; connections: () => number }> {
  let bytes = '';
  let connections = 0;
  const open = new Set<import('node:net').Socket>();
  const server = createServer((socket) => {
    connections++;
    open.add(socket);
    socket.on('data', (chunk) => {
      bytes += chunk.toString('latin1');
      socket.end('HTTP/1.1 500 Squatted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        server.close(() => done());
        for (const socket of open) socket.destroy();
      }),
  );
  return { port: (server.address() as AddressInfo).port, received: () => bytes, connections: () => connections };
}

/** A socket file left as a host killed with -9 leaves it: bound, nobody listening. */
async function staleSocket(path: string, uid?: number): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('ready'))`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    ...(uid === undefined ? {} : { uid, gid: uid }),
  });
  await new Promise<void>((done) => createInterface({ input: child.stdout! }).once('line', () => done()));
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGKILL');
  await exited;
  expect(lstatSync(path).isSocket()).toBe(true);
}

function sleeper(args: string[] = []): ChildProcess {
  const child = spawn(args.length ? args[0]! : 'sleep', args.length ? [...args.slice(1), 'sleep', '300'] : ['300'], { stdio: 'ignore' });
  cleanups.push(() => void child.kill('SIGKILL'));
  return child;
}

async function bridge(env: Record<string, string>, asUser?: { uid: number; gid: number }): Promise<Client> {
  const command = asUser ? 'setpriv' : process.execPath;
  const args = asUser
    ? [`--reuid=${asUser.uid}`, `--regid=${asUser.gid}`, '--clear-groups', process.execPath, bin, 'mcp', '--name', 'victim']
    : [bin, 'mcp', '--name', 'victim'];
  const transport = new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'pipe' });
  const client = new Client({ name: 'victim', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

async function call(client: Client, name: string): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: {} }, undefined, { timeout: 60_000 });
  return { ...(result.isError ? { isError: true } : {}), ...(result.structuredContent as Record<string, unknown>) };
}

/** The dead host's files: instance.json (0600) naming `pid` and `port`, and its stale bridge.sock, in a 0700 TANDEM_HOME. */
function deadHost(home: string, fields: { pid: number; started: string | null; port: number; socket: string }): string {
  const path = join(home, 'instance.json');
  const info = {
    pid: fields.pid,
    ...(fields.started ? { started: fields.started } : {}),
    instanceKey: 'key-of-the-dead-run-0123456789abcdef',
    version: 'x',
    mcpUrl: `http://127.0.0.1:${fields.port}/mcp`,
    pairUrl: `http://127.0.0.1:${fields.port}/pair`,
    bridgeSocket: fields.socket,
  };
  writeFileSync(path, JSON.stringify(info), { mode: 0o600 });
  return path;
}

function tempHome(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-stale-'));
  chmodSync(dir, 0o700);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function startOf(pid: number): string {
  for (let i = 0; i < 50; i++) {
    const started = processStartTime(pid);
    if (started) return started;
  }
  throw new Error(`no start time for ${pid}`);
}

describe.runIf(isRoot)('a stale instance.json whose pid is now another user’s process (the attack after kill -9)', () => {
  // The victim runs the bridge as an ordinary user; mallory holds the dead host's pid.
  const victim = { name: `tdmv${process.pid}`, uid: 0, gid: 0 };
  const mallory = { name: `tdmm${process.pid}`, uid: 0, gid: 0 };
  beforeAll(() => {
    for (const user of [victim, mallory]) {
      execFileSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', user.name]);
      user.uid = Number(execFileSync('id', ['-u', user.name], { encoding: 'utf8' }).trim());
      user.gid = Number(execFileSync('id', ['-g', user.name], { encoding: 'utf8' }).trim());
    }
  });
  afterAll(() => {
    for (const user of [victim, mallory]) execFileSync('userdel', [user.name]);
  });

  it('the bridge sends nothing to the squatted port, answers not_running and names the stale file', async () => {
    const home = tempHome();
    chownSync(home, victim.uid, victim.gid);
    const socket = join(home, 'bridge.sock');
    await staleSocket(socket, victim.uid);
    const squat = await squatter();
    // Mallory's process holds the pid; the file records that process's own start time, so only
    // "not this uid" tells it from the host (a forked child's start time is all she can't pick).
    const taker = sleeper(['setpriv', `--reuid=${mallory.uid}`, `--regid=${mallory.gid}`, '--clear-groups']);
    await new Promise((done) => taker.once('spawn', done));
    const pid = taker.pid!;
    await expect
      .poll(() => {
        try {
          return readOwner(pid);
        } catch {
          return -1;
        }
      })
      .toBe(mallory.uid);
    const path = deadHost(home, { pid, started: startOf(pid), port: squat.port, socket });
    chownSync(path, victim.uid, victim.gid);

    const client = await bridge({ HOME: home, TANDEM_HOME: home, TANDEM_TOKEN: token }, victim);
    const result = await call(client, 'terminal_list');
    expect(result).toMatchObject({ isError: true, error: { code: 'not_running' } });
    const message = (result.error as { message: string }).message;
    expect(message).toContain(path);
    expect(message).toMatch(/Stale/);
    expect(message).toContain(`pid ${pid}`);
    expect(squat.connections()).toBe(0);
    expect(squat.received()).toBe('');
    expect(squat.received()).not.toContain(token);
  });
});

/** The uid owning /proc/<pid> (the process's real owner). */
function readOwner(pid: number): number {
  return lstatSync(`/proc/${pid}`).uid;
}

describe('a stale instance.json whose pid this user reused (another process of the same uid)', () => {
  it('a start time that differs: not trusted, nothing reaches the squatted port; control: the matching start time is trusted', async () => {
    const home = tempHome();
    const socket = join(home, 'bridge.sock');
    await staleSocket(socket);
    const squat = await squatter();
    const reuse = sleeper();
    await new Promise((done) => reuse.once('spawn', done));
    const pid = reuse.pid!;
    expect(isAlive(pid)).toBe(true);
    // The dead host's start time: any other process's (this test's own) stands for it.
    const path = deadHost(home, { pid, started: startOf(process.pid), port: squat.port, socket });
    const client = await bridge({ HOME: home, TANDEM_HOME: home, TANDEM_TOKEN: token });
    const result = await call(client, 'terminal_list');
    expect(result).toMatchObject({ isError: true, error: { code: 'not_running' } });
    expect((result.error as { message: string }).message).toContain(`${path} (pid ${pid})`);
    expect(squat.connections()).toBe(0);

    // A file without a start time (an older host) is not trusted either.
    deadHost(home, { pid, started: null, port: squat.port, socket });
    expect(await call(client, 'terminal_list')).toMatchObject({
      isError: true,
      error: { code: 'not_running', message: expect.stringContaining(`${path} (pid ${pid})`) },
    });
    expect(squat.connections()).toBe(0);

    // Control: the process's own start time makes the file trusted (so the refusals above are the
    // start-time check at work). Its socket refuses: still no HTTP, the token stays here.
    deadHost(home, { pid, started: startOf(pid), port: squat.port, socket });
    const refused = await call(client, 'terminal_list');
    expect(refused).toMatchObject({
      isError: true,
      error: { code: 'not_running', message: expect.stringContaining(`bridge channel ${socket} does not answer`) },
    });
    expect(squat.connections()).toBe(0);
    expect(squat.received()).not.toContain(token);
  });
});

describe('over HTTP (instance.json names no bridge channel) the token goes only to a server that proves the run', () => {
  it('a listener that cannot answer the proof gets POST /prove and nothing else; no Authorization, no token', async () => {
    const home = tempHome();
    const seen: string[] = [];
    let body = '';
    const server = createHttpServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      // What a squatter can do: answer anything, but not the HMAC of a key it never read.
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ proof: 'x'.repeat(43) })));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    cleanups.push(() => new Promise<void>((done) => server.close(() => done())));
    const port = (server.address() as AddressInfo).port;
    const path = join(home, 'instance.json');
    writeFileSync(
      path,
      JSON.stringify({
        pid: process.pid,
        started: startOf(process.pid),
        instanceKey: 'key-the-listener-never-read-0123456789',
        version: 'x',
        mcpUrl: `http://127.0.0.1:${port}/mcp`,
        pairUrl: `http://127.0.0.1:${port}/pair`,
      }),
      { mode: 0o600 },
    );
    mkdirSync(home, { recursive: true });
    const client = await bridge({ HOME: home, TANDEM_HOME: home, TANDEM_TOKEN: token });
    const result = await call(client, 'terminal_list');
    expect(result).toMatchObject({ isError: true, error: { code: 'not_running', message: expect.stringContaining('did not prove') } });
    expect(seen).toEqual(['POST /prove ']);
    expect(body).not.toContain(token);
  });
});
