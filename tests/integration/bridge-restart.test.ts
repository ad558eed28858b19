import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { shuttingDownMessage } from '../../src/main/agent/mcp/mcp-socket.js';
import { discoveryDir, InstanceLock } from '../../src/main/host/instance.js';
import { processStartTime } from '../../src/main/host/process-start.js';
import { startAgentFixture } from './agent-helpers.js';

// Issue 22: a fresh bridge's first call got not_running ("Tandem closed the bridge channel"),
// the host's end closing after it took the hello and before it answered. No live Tandem does
// that (every refusal is an error line); one that is going away does. These tests take the real
// `tandem serve` down under a bridge that is saying hello, and a Tandem that exits after taking
// the hello while the next one starts, through the real bridge and the official SDK client.
const cli = resolve(__dirname, '../../bin/tandem.js');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function bridge(tandemHome: string, token?: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', '--name', 'claude-code'],
    env: { PATH: process.env.PATH ?? '', HOME: tandemHome, TANDEM_HOME: tandemHome, ...(token ? { TANDEM_TOKEN: token } : {}) },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'claude-code', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
  return { ...(result.isError ? { isError: true } : {}), ...(result.structuredContent as Record<string, unknown>) };
}

/** The real `tandem serve` in its own process, with its own TANDEM_HOME; resolves once instance.json is published. */
async function serve(home: string): Promise<ChildProcess> {
  mkdirSync(join(home, 'home'), { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, TANDEM_HOME: home, HOME: join(home, 'home'), SHELL: '/bin/bash' };
  for (const name of ['TANDEM_INSTANCE', 'TANDEM_TERMINAL_ID', 'TANDEM_TOKEN']) delete env[name];
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--trust-local-agents'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
  await new Promise<void>((ready, fail) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('#login=')) ready();
    });
    child.once('exit', () => fail(new Error(`tandem serve exited before it was ready: ${stderr}`)));
  });
  return child;
}

/** The first line a raw connection receives. */
function firstLine(socket: ReturnType<typeof connect>): Promise<Record<string, unknown>> {
  return new Promise((done, fail) => {
    let buffer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const at = buffer.indexOf('\n');
      if (at >= 0) done(JSON.parse(buffer.slice(0, at)) as Record<string, unknown>);
    });
    socket.once('close', () => fail(new Error(`closed without a line (had ${JSON.stringify(buffer)})`)));
  });
}

describe('bridge channel across a Tandem that stops or restarts', () => {
  // Failed in about half the runs before the fix: `tandem serve` printed its link (and had
  // published instance.json) before it took SIGINT/SIGTERM/SIGHUP, so a signal sent as soon as
  // it was ready killed it by Node's default action and the socket closed without a line.
  it('a Tandem shutting down tells a bridge saying hello so, with its instance.json already gone', async () => {
    const home = tempDir('tandem-stopping-');
    const host = await serve(home);
    const instancePath = join(discoveryDir({ TANDEM_HOME: home }), 'instance.json');
    const info = JSON.parse(readFileSync(instancePath, 'utf8')) as { bridgeSocket: string };
    // A bridge that connected and has not said hello yet when the shutdown begins.
    const socket = connect(info.bridgeSocket);
    socket.on('error', () => undefined);
    cleanups.push(() => void socket.destroy());
    await new Promise<void>((done) => socket.once('connect', () => done()));
    const answered = firstLine(socket).then((line) => ({ line, published: existsSync(instancePath) }));
    host.kill('SIGTERM');
    const { line, published } = await answered;
    // Before: nothing until the host's own 5 s hello timeout, then `forbidden`, with
    // instance.json still naming the closing host for fresh bridges to find.
    expect(line).toMatchObject({ error: { message: shuttingDownMessage, data: { code: 'not_running' } } });
    expect(published).toBe(false);
    await new Promise<void>((done) => (host.exitCode !== null || host.signalCode !== null ? done() : host.once('exit', () => done())));
    // A fresh bridge then hears that nothing runs, and where it looked.
    const client = await bridge(home);
    const result = await call(client, 'terminal_list');
    expect(result).toMatchObject({ isError: true, error: { code: 'not_running' } });
    expect(String((result.error as { message: string }).message)).toContain(instancePath);
  });

  it('a bridge whose Tandem exits after taking the hello finds the Tandem started after it', async () => {
    const home = tempDir('tandem-restarted-');
    mkdirSync(discoveryDir({ TANDEM_HOME: home }), { recursive: true, mode: 0o700 });
    const instancePath = join(discoveryDir({ TANDEM_HOME: home }), 'instance.json');
    // The next Tandem: real, running already, publishing its instance.json elsewhere until the
    // moment the old one goes.
    const nextHome = tempDir('tandem-next-');
    const next = await startAgentFixture({ tandemHome: nextHome });
    cleanups.push(() => next.close());
    const token = next.layer.pairAgent({ name: 'claude-code' }).token;
    next.layer.setAgentPolicy({ name: 'claude-code', policy: 'always' });
    const nextInfo = readFileSync(join(discoveryDir({ TANDEM_HOME: nextHome }), 'instance.json'), 'utf8');

    // The old Tandem at the moment it exits: it takes the hello, the next one publishes, and its
    // end closes without an answer. A stand-in (a few lines of socket server), since a real
    // host cannot be made to die between reading a line and answering it on cue.
    const oldSocket = join(tempDir('tandem-old-'), 'bridge.sock');
    const hellos: string[] = [];
    const old: Server = createServer((socket) => {
      socket.setEncoding('utf8').once('data', (hello: string) => {
        hellos.push(hello);
        const tmp = `${instancePath}.next.tmp`;
        writeFileSync(tmp, nextInfo, { mode: 0o600 });
        renameSync(tmp, instancePath);
        socket.end();
      });
    });
    await new Promise<void>((done) => old.listen(oldSocket, () => done()));
    cleanups.push(() => new Promise<void>((done) => old.close(() => done())));
    writeFileSync(
      instancePath,
      JSON.stringify({
        pid: process.pid,
        started: processStartTime(process.pid),
        version: 'old',
        mcpUrl: 'http://127.0.0.1:9/mcp',
        pairUrl: 'http://127.0.0.1:9/pair',
        bridgeSocket: oldSocket,
      }),
      { mode: 0o600 },
    );

    const client = await bridge(home, token);
    // Before the fix: not_running, "Tandem closed the bridge channel; call the tool again."
    expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
    expect(hellos).toHaveLength(1);
    expect(next.bridgeChannel!.sessionCount).toBe(1);
  });

  it('a stopping host takes down only an instance.json that is still its own', () => {
    const home = tempDir('tandem-unpublish-');
    const lock = new InstanceLock({ ...process.env, TANDEM_HOME: home });
    lock.acquire();
    cleanups.push(() => lock.release());
    lock.publish({ pid: process.pid, version: 'x', mcpUrl: 'http://127.0.0.1:1/mcp', pairUrl: 'http://127.0.0.1:1/pair' });
    lock.unpublish();
    expect(existsSync(lock.path)).toBe(false);
    // Another instance's file (a pid that is not ours) stays.
    const other = JSON.stringify({ pid: process.pid + 1, version: 'y', mcpUrl: 'http://127.0.0.1:2/mcp', pairUrl: 'http://127.0.0.1:2/pair' });
    writeFileSync(lock.path, other, { mode: 0o600 });
    lock.unpublish();
    expect(readFileSync(lock.path, 'utf8')).toBe(other);
  });
});
