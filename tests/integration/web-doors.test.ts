/**
 * The doors of the browser UI (issue 23, attack 3): a login link works once and for at most 10
 * minutes, a session ends when idle (12 hours) and on revoke, and `tandem serve` prints no
 * reusable secret. Through the HTTP and WebSocket doors, with the clock injected into UiAuth;
 * the serve cases run the built CLI (run `npm run build` first).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as pty from 'node-pty';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { ManualClock } from '../support/manual-clock.js';
import { exitOf, login, openSocket, rawRequest, type Refusal, type TestServer, startTestServer, tokenOf, waitUntil } from './web-helpers.js';

const minute = 60_000;
const hour = 60 * minute;

function isRefusal(value: WebSocket | Refusal): value is Refusal {
  return 'status' in value && typeof (value as Refusal).status === 'number';
}

async function sessionCheck(port: number, secret: string): Promise<number> {
  return (await rawRequest(port, { path: '/session', headers: { 'X-Tandem-Session': secret } })).status;
}

describe('UI doors with an injected clock', () => {
  const clock = new ManualClock();
  let t: TestServer;
  let port: number;
  beforeAll(async () => {
    t = await startTestServer({ auth: { now: () => clock.now() } });
    port = t.server.port;
  });
  afterAll(async () => {
    await t.stop();
  });

  it('a link logs in once: the second use is refused and gives no session', async () => {
    const token = tokenOf(t.server.loginUrl());
    const first = await login(port, token);
    expect(first.status).toBe(200);
    const again = await login(port, token);
    expect(again.status).toBe(401);
    expect(again.secret).toBeNull();
    expect(again.body).toContain('works once');
    // The spent token is no UI credential at all (nor a WebSocket secret).
    expect(t.server.isUiCredential(token)).toBe(false);
    const socket = await openSocket(port, { secret: token });
    expect(isRefusal(socket) && socket.status).toBe(401);
  });

  it('a link expires after 10 minutes, used or not', async () => {
    const fresh = tokenOf(t.server.loginUrl());
    const stale = tokenOf(t.server.loginUrl());
    await clock.advance(10 * minute - 1);
    expect((await login(port, fresh)).status).toBe(200);
    await clock.advance(2);
    const refused = await login(port, stale);
    expect(refused.status).toBe(401);
    expect(refused.secret).toBeNull();
  });

  it('an idle session expires after 12 hours: the check and the WebSocket are refused', async () => {
    const { secret } = await login(port, tokenOf(t.server.loginUrl()));
    await clock.advance(12 * hour - 1);
    // A check is use: the idle time starts again.
    expect(await sessionCheck(port, secret!)).toBe(204);
    await clock.advance(12 * hour + 1);
    const socket = await openSocket(port, { secret });
    expect(isRefusal(socket) && socket.status).toBe(401);
    expect(await sessionCheck(port, secret!)).toBe(401);
  });

  it('a session with an open connection is not idle; 12 hours after the connection ends it is', async () => {
    const { secret } = await login(port, tokenOf(t.server.loginUrl()));
    const ws = await openSocket(port, { secret });
    if (isRefusal(ws)) throw new Error(`refused: ${ws.body}`);
    await clock.advance(30 * hour);
    const second = await openSocket(port, { secret });
    if (isRefusal(second)) throw new Error(`refused while in use: ${second.body}`);
    second.close();
    ws.close();
    // The server releases the session when it sees the close (its socket set is private).
    const clients = (t.server as unknown as { wss: { clients: Set<unknown> } }).wss.clients;
    await waitUntil(() => clients.size === 0, 10_000, 'the server to see both closes');
    await clock.advance(12 * hour + 1);
    const after = await openSocket(port, { secret });
    expect(isRefusal(after) && after.status).toBe(401);
  });

  it('revoke ends every session: open WebSockets are cut, new ones and unused links refused', async () => {
    const { secret } = await login(port, tokenOf(t.server.loginUrl()));
    const unused = tokenOf(t.server.loginUrl());
    const ws = await openSocket(port, { secret });
    if (isRefusal(ws)) throw new Error(`refused: ${ws.body}`);
    const closed = new Promise<void>((done) => ws.once('close', () => done()));
    t.server.auth.revokeAll();
    await closed;
    const again = await openSocket(port, { secret });
    expect(isRefusal(again) && again.status).toBe(401);
    expect(await sessionCheck(port, secret!)).toBe(401);
    expect((await login(port, unused)).status).toBe(401);
    // New links work after a revoke.
    expect((await login(port, tokenOf(t.server.loginUrl()))).status).toBe(200);
  });
});

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/tandem.js');
const builtCli = join(root, 'out/main/cli.js');
const linkPattern = /http:\/\/127\.0\.0\.1:\d+\/#login=[A-Za-z0-9_-]+/g;

describe('tandem serve prints one-time links only', () => {
  let base = '';
  const children: Array<{ kill(signal: 'SIGKILL'): unknown }> = [];
  beforeAll(() => {
    if (!existsSync(builtCli)) throw new Error(`${builtCli} is missing: run \`npm run build\` first`);
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });
  afterAll(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  function env(name: string): Record<string, string> {
    base ||= mkdtempSync(join(tmpdir(), 'tandem-doors-'));
    const home = join(base, name, 'home');
    mkdirSync(home, { recursive: true });
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) out[key] = value;
    return { ...out, TANDEM_HOME: join(base, name, 'state'), HOME: home, SHELL: '/bin/bash' };
  }

  it('in a terminal: the printed link works once; SIGUSR2 logs every browser out and prints a new one', async () => {
    const child = pty.spawn(process.execPath, [bin, 'serve'], { env: env('tty'), cols: 200, rows: 50, name: 'xterm' });
    children.push(child);
    let output = '';
    child.onData((data) => (output += data));
    const links = () => output.match(linkPattern) ?? [];
    await waitUntil(() => links().length === 1 && output.includes('kill -USR2'), 30_000, 'the first link');
    const first = links()[0]!;
    const port = Number(new URL(first).port);
    const { secret } = await login(port, tokenOf(first));
    expect(secret).not.toBeNull();
    expect((await login(port, tokenOf(first))).status).toBe(401);
    child.kill('SIGUSR2');
    await waitUntil(() => links().length === 2, 30_000, 'a second link');
    expect(await sessionCheck(port, secret!)).toBe(401);
    const second = links()[1]!;
    expect(second).not.toBe(first);
    expect((await login(port, tokenOf(second))).status).toBe(200);
  });

  it('with its output in a pipe (a log, nohup.out): SIGUSR2 prints no new link', async () => {
    const child: ChildProcess = spawn(process.execPath, [bin, 'serve'], { env: env('pipe'), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await waitUntil(() => (stdout.match(linkPattern) ?? []).length === 1 && stdout.includes('kill -USR2'), 30_000, 'the first link');
    const first = stdout.match(linkPattern)![0];
    const port = Number(new URL(first).port);
    const { secret } = await login(port, tokenOf(first));
    // An agent that reads the log and signals serve gets nothing it can log in with.
    child.kill('SIGUSR2');
    await waitUntil(() => stderr.includes('No new link is printed'), 30_000, 'the refusal note');
    expect(stdout.match(linkPattern)).toHaveLength(1);
    expect(stderr).not.toMatch(/#login=/);
    expect((await login(port, tokenOf(first))).status).toBe(401);
    expect(await sessionCheck(port, secret!)).toBe(401);
    child.kill('SIGTERM');
    expect(await exitOf(child, 15_000)).toBe(0);
  });
});
