/** `tandem serve` as a real child process: bin/tandem.js → out/main/cli.js (run `npm run build` first). */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitOf, isAlive, login, rawRequest, TestClient, tokenOf, waitUntil } from './web-helpers.js';
import { bridgeSocketPath } from '../../src/main/launch/socket-path.js';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/tandem.js');
const builtCli = join(root, 'out/main/cli.js');

interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

function serveEnv(tandemHome: string, home: string): NodeJS.ProcessEnv {
  return { ...process.env, TANDEM_HOME: tandemHome, HOME: home, SHELL: '/bin/bash', ZDOTDIR: undefined, HISTFILE: undefined };
}

function startServe(env: NodeJS.ProcessEnv): Promise<Served> {
  const child = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`no login URL within 60 s; stderr: ${stderr}`)), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /(http:\/\/127\.0\.0\.1:\d+\/#login=[A-Za-z0-9_-]+)/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolvePromise({ child, url: match[1]!, stderr: () => stderr });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tandem serve exited with ${code}: ${stderr}`));
    });
  });
}

describe('tandem serve (child process)', () => {
  let base = '';
  let tandemHome = '';
  let home = '';
  let served: Served | undefined;

  beforeAll(async () => {
    if (!existsSync(builtCli)) throw new Error(`${builtCli} is missing: run \`npm run build\` first`);
    base = mkdtempSync(join(tmpdir(), 'tandem-serve-'));
    tandemHome = join(base, 'state');
    home = join(base, 'home');
    mkdirSync(home);
    served = await startServe(serveEnv(tandemHome, home));
  });

  afterAll(async () => {
    if (served && served.child.exitCode === null) {
      served.child.kill('SIGKILL');
      await exitOf(served.child, 5000).catch(() => undefined);
    }
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it('prints the login URL and publishes instance.json (0600 in a 0700 directory, no secret)', async () => {
    const { url } = served!;
    const port = Number(new URL(url).port);
    const file = join(tandemHome, 'instance.json');
    expect(statSync(tandemHome).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const info = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(info).toEqual({
      pid: served!.child.pid,
      version: expect.any(String),
      mcpUrl: `http://127.0.0.1:${port}/mcp`,
      pairUrl: `http://127.0.0.1:${port}/pair`,
      uiUrl: `http://127.0.0.1:${port}/`,
      bridgeSocket: bridgeSocketPath(process.platform, tandemHome).path,
      evidence: expect.stringMatching(/^(proc|ps|none)$/),
      // The run's start time (a reused pid is not this run) and its key for /prove (the file is 0600).
      started: expect.any(String),
      instanceKey: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/),
    });
    expect(statSync(info.bridgeSocket as string).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain(tokenOf(url));
    const page = await rawRequest(port, { path: '/' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('refuses a second instance with the same TANDEM_HOME in one line', () => {
    const second = spawnSync(process.execPath, [bin, 'serve'], { env: serveEnv(tandemHome, home), encoding: 'utf8', timeout: 20_000 });
    expect(second.status).toBe(1);
    expect(second.stdout).toBe('');
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`pid ${served!.child.pid}`);
    expect(existsSync(join(tandemHome, 'instance.json'))).toBe(true);
  });

  it('rejects bad arguments of serve and of mcp', () => {
    const badPort = spawnSync(process.execPath, [bin, 'serve', '--port', 'abc'], { env: serveEnv(join(base, 'other'), home), encoding: 'utf8' });
    expect(badPort.status).toBe(2);
    expect(badPort.stderr).toMatch(/--port abc/);
    const mcp = spawnSync(process.execPath, [bin, 'mcp', '--bogus'], { env: serveEnv(join(base, 'other'), home), encoding: 'utf8' });
    expect(mcp.status).toBe(2);
    expect(mcp.stderr).toMatch(/tandem mcp: .*bogus/);
  });

  it('on SIGTERM tears the terminals down, removes the discovery file and exits 0', async () => {
    const { url, child, stderr } = served!;
    const port = Number(new URL(url).port);
    const { secret } = await login(port, tokenOf(url));
    const client = await TestClient.connect(port, secret!);
    const info = await client.call('create', { shell: 'bash' });
    // The built bundle reads PTYs on its pump thread (a broken thread falls back and says so).
    expect(stderr()).not.toMatch(/PTY thread/);
    const { attachmentId } = await client.call('attach', { id: info.id });
    // A background child of the shell must go too.
    await client.call('input', { attachmentId, data: 'sleep 300 & echo "bg=$!"\r', typed: true });
    const text = await client.waitForOutput(attachmentId, /bg=\d+/);
    const sleepPid = Number(/bg=(\d+)/.exec(text)![1]);
    // The markers name the command line: the built code sourced its integration from out/resources.
    const listed = async () => (await client.call('list', {})).terminals.find((terminal) => terminal.id === info.id);
    await expect.poll(async () => (await listed())?.lastCommand?.command, { timeout: 30_000 }).toMatch(/^sleep 300 & echo/);
    expect(isAlive(info.pid)).toBe(true);
    expect(isAlive(sleepPid)).toBe(true);

    child.kill('SIGTERM');
    expect(await exitOf(child, 15_000)).toBe(0);
    expect(existsSync(join(tandemHome, 'instance.json'))).toBe(false);
    await waitUntil(() => !isAlive(info.pid) && !isAlive(sleepPid), 30_000, 'the shell and its child to be gone');
    await client.waitForClose();
  });
});
