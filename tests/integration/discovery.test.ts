import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findInstance, pointerName } from '../../src/main/host/discovery.js';
import { isRunOf, parseInstance } from '../../src/main/host/instance.js';
import { proofOf } from '../../src/main/host/instance-proof.js';
import { processStartTime } from '../../src/main/host/process-start.js';
import { startRuntime } from '../../src/main/runtime.js';
import { discoverShells } from '../../src/main/shells/discovery.js';
import { which } from '../../src/main/shells/resolve.js';

describe('shell discovery on this machine', () => {
  it('puts the default shell first and lists bash, zsh and sh once each (and pwsh where installed)', () => {
    const found = discoverShells({ ...process.env, SHELL: '/bin/bash' }, 'linux');
    expect(found.defaultShell?.name).toBe('bash');
    const names = found.shells.map((shell) => shell.name);
    expect(names[0]).toBe('bash');
    for (const name of ['bash', 'zsh', 'sh']) if (which(name)) expect(names.filter((n) => n === name)).toHaveLength(1);
    if (which('pwsh')) expect(names).toContain('pwsh');
    expect(found.shells.find((shell) => shell.name === 'bash')?.dialect?.integration).toBe('full');
  });

  it('falls back to /bin/sh when SHELL names nothing usable, and lists fish without integration', () => {
    const found = discoverShells({ ...process.env, SHELL: '' }, 'linux');
    expect(found.defaultShell).not.toBeNull();
    const fish = found.shells.find((shell) => shell.name === 'fish');
    if (fish) expect(fish.dialect).toBeNull();
  });
});

/**
 * Finding the running host from a bridge started with a small environment (issue 27): the real
 * `tandem serve` as a child process with XDG_RUNTIME_DIR, the real bridge (bin/tandem.js mcp,
 * the build) started by the official SDK's StdioClientTransport with the SDK's default
 * environment plus TANDEM_TOKEN. And the other side: planted discovery files the bridge must
 * not trust (they name where it sends the agent's token).
 */
const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/tandem.js');
const builtCli = join(root, 'out/main/cli.js');
const isRoot = process.getuid?.() === 0;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-discovery-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `body` with process.env as an agent's would be: these variables set, the others in `drop` removed. */
async function withProcessEnv<T>(set: Record<string, string>, drop: string[], body: () => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  for (const name of drop) delete process.env[name];
  Object.assign(process.env, set);
  try {
    return await body();
  } finally {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  }
}

/** The real bridge, started as an MCP client built on the SDK starts it: default environment plus `env`. */
async function sdkBridge(env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--name', 'small-env'], env, stderr: 'pipe' });
  const client = new Client({ name: 'small-env', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
  return { ...(result.isError ? { isError: true } : {}), ...(result.structuredContent as Record<string, unknown>) };
}

function startServe(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--trust-local-agents'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`no login URL within 60 s; stderr: ${stderr}`)), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.includes('#login=')) return;
      clearTimeout(timer);
      resolvePromise(child);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tandem serve exited with ${code}: ${stderr}`));
    });
  });
}

/** A token as the bridge gets one: a pairing request on the bridge channel, allowed by --trust-local-agents. */
async function pairedToken(bridgeSocket: string): Promise<string> {
  const { connect } = await import('node:net');
  const reply = await new Promise<string>((resolve, reject) => {
    const socket = connect(bridgeSocket);
    let text = '';
    socket.on('error', reject);
    socket.on('connect', () =>
      socket.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tandem/pair', params: { name: 'small-env', pid: process.pid, exe: process.execPath, cwd: tmpdir() } })}\n`,
      ),
    );
    socket.on('data', (chunk) => (text += chunk));
    socket.on('close', () => resolve(text));
  });
  const outcome = (JSON.parse(reply) as { result: { state: string; token?: string } }).result;
  expect(outcome.state).toBe('allowed');
  return outcome.token!;
}

describe('a bridge started with the MCP SDK’s default environment finds Tandem', () => {
  beforeAll(() => {
    if (!existsSync(builtCli)) throw new Error(`${builtCli} is missing: run \`npm run build\` first`);
  });

  it('`tandem serve` with XDG_RUNTIME_DIR; the bridge without it (HOME, LOGNAME, PATH, SHELL, TERM, USER + TANDEM_TOKEN) lists terminals', async () => {
    const base = tempRoot();
    const home = join(base, 'home');
    const runtime = join(base, 'run');
    mkdirSync(home);
    mkdirSync(runtime, { mode: 0o700 });
    const hostEnv: NodeJS.ProcessEnv = { ...process.env, HOME: home, SHELL: '/bin/bash', XDG_RUNTIME_DIR: runtime };
    for (const name of ['TANDEM_HOME', 'TANDEM_INSTANCE', 'TANDEM_TOKEN', 'TANDEM_TERMINAL_ID', 'XDG_CONFIG_HOME']) delete hostEnv[name];
    const host = await startServe(hostEnv);
    const instancePath = join(runtime, 'tandem', 'instance.json');
    const info = JSON.parse(readFileSync(instancePath, 'utf8')) as { pid: number; pairUrl: string; bridgeSocket: string };
    expect(info.pid).toBe(host.pid);
    // instance.json is in the runtime directory only; the state directory holds the pointer to it.
    const pointer = join(home, '.config', 'Tandem', pointerName);
    expect(existsSync(join(home, '.config', 'Tandem', 'instance.json'))).toBe(false);
    expect(JSON.parse(readFileSync(pointer, 'utf8'))).toEqual({ instance: instancePath });
    expect(statSync(pointer).mode & 0o777).toBe(0o600);
    const token = await pairedToken(info.bridgeSocket);

    await withProcessEnv(
      { HOME: home },
      ['XDG_RUNTIME_DIR', 'XDG_CONFIG_HOME', 'TANDEM_HOME', 'TANDEM_INSTANCE', 'TANDEM_TOKEN', 'TANDEM_TERMINAL_ID'],
      async () => {
        // What the bridge gets: nothing that says where the runtime directory is.
        expect(Object.keys(getDefaultEnvironment()).every((name) => ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'].includes(name))).toBe(true);
        const client = await sdkBridge({ TANDEM_TOKEN: token });
        expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
        const opened = await call(client, 'terminal_open', { title: 'found', shell: 'bash', cwd: home });
        expect(opened).toHaveProperty('id');
        expect(await call(client, 'terminal_send', { id: opened.id, text: 'echo found-it' })).toMatchObject({ status: 'done', output: 'found-it' });

        // Stopped cleanly: instance.json and the pointer are gone, and `not_running` names where the bridge looked.
        const exited = new Promise((done) => host.once('exit', done));
        host.kill('SIGTERM');
        await exited;
        expect(existsSync(pointer)).toBe(false);
        const gone = await call(client, 'terminal_list');
        expect(gone).toMatchObject({ isError: true, error: { code: 'not_running' } });
        const message = (gone.error as { message: string }).message;
        expect(message).toContain(join(home, '.config', 'Tandem', 'instance.json'));
        expect(message).toContain(pointer);
      },
    );
  });

  it('finds an instance in /run/user/<uid> only when that directory is this uid’s own 0700 one', () => {
    const base = tempRoot();
    const uid = process.getuid!();
    const runUserRoot = join(base, 'run-user');
    const own = join(runUserRoot, String(uid));
    mkdirSync(join(own, 'tandem'), { recursive: true, mode: 0o700 });
    chmodSync(own, 0o700);
    writeFileSync(
      join(own, 'tandem', 'instance.json'),
      JSON.stringify({
        pid: process.pid,
        started: processStartTime(process.pid),
        version: 'x',
        mcpUrl: 'http://127.0.0.1:1/mcp',
        pairUrl: 'http://127.0.0.1:1/pair',
      }),
      { mode: 0o600 },
    );
    const from = { env: { HOME: join(base, 'home') }, platform: 'linux' as const, uid, home: join(base, 'home'), runUserRoot };
    const found = findInstance(from, parseInstance, (info) => isRunOf(info));
    expect(found).toMatchObject({ path: join(own, 'tandem', 'instance.json'), info: { pid: process.pid } });
    chmodSync(own, 0o755);
    const refused = findInstance(from, parseInstance, (info) => isRunOf(info));
    expect(refused).toMatchObject({ looked: [join(base, 'home', '.config', 'Tandem', 'instance.json'), join(base, 'home', '.config', 'Tandem', pointerName)] });
  });
});

describe('a planted discovery file is never trusted (it names where the bridge sends its token)', () => {
  const secret = 'tdm_secret-that-must-not-leave';
  /** The per-run key a planted file carries, so the control cases' listener can prove itself as a host does. */
  const instanceKey = 'planted-instance-key-0123456789abcdef';
  /** This process stands for the host: a live process of this uid, started when the file says. */
  const self = () => ({ pid: process.pid, started: processStartTime(process.pid), instanceKey });
  /** A stand-in for an attacker's listener: records every request it gets (the control case proves it would); answers POST /prove as the host whose key it holds. */
  async function listener(): Promise<{ url: string; seen: string[] }> {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      if (req.url === '/prove') {
        let body = '';
        req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        req.on('end', () =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ proof: proofOf(instanceKey, (JSON.parse(body) as { nonce: string }).nonce) })),
        );
        return;
      }
      res.writeHead(500).end();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    cleanups.push(() => new Promise<void>((done) => server.close(() => done())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
  }

  type Plant = (dir: string, file: string, body: string) => void;
  const write: Plant = (_dir, file, body) => writeFileSync(file, body, { mode: 0o600 });
  const cases: Array<[string, Plant, RegExp, boolean?]> = [
    [
      'mode 0644',
      (_dir, file, body) => {
        writeFileSync(file, body, { mode: 0o600 });
        chmodSync(file, 0o644);
      },
      /mode 0644/,
    ],
    [
      'a symlink to a 0600 file',
      (dir, file, body) => {
        const real = join(dir, '..', 'elsewhere.json');
        writeFileSync(real, body, { mode: 0o600 });
        symlinkSync(real, file);
      },
      /symlink/,
    ],
    [
      'a world-writable directory',
      (dir, file, body) => {
        writeFileSync(file, body, { mode: 0o600 });
        chmodSync(dir, 0o777);
      },
      /writable by others/,
    ],
    [
      'another uid’s file',
      (_dir, file, body) => {
        writeFileSync(file, body, { mode: 0o600 });
        chownSync(file, 65534, 65534);
      },
      /belongs to uid 65534/,
      isRoot,
    ],
  ];

  for (const [what, plant, why, runs = true] of cases) {
    it.runIf(runs)(`instance.json in the runtime directory as ${what}: not_running, and nothing reaches the listener it names`, async () => {
      const base = tempRoot();
      const runtime = join(base, 'run');
      const dir = join(runtime, 'tandem');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const planted = await listener();
      plant(dir, join(dir, 'instance.json'), JSON.stringify({ ...self(), version: 'x', mcpUrl: `${planted.url}/mcp`, pairUrl: `${planted.url}/pair` }));
      const client = await sdkBridge({ HOME: join(base, 'home'), XDG_RUNTIME_DIR: runtime, TANDEM_TOKEN: secret });
      const result = await call(client, 'terminal_list');
      expect(result).toMatchObject({ isError: true, error: { code: 'not_running', message: expect.stringMatching(why) } });
      expect(planted.seen).toEqual([]);
    });
  }

  it('a pointer as mode 0644, or naming a file in a world-writable directory: not followed', async () => {
    const base = tempRoot();
    const home = join(base, 'home');
    const state = join(home, '.config', 'Tandem');
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(state, { recursive: true, mode: 0o700 });
    mkdirSync(elsewhere, { mode: 0o700 });
    const planted = await listener();
    const target = join(elsewhere, 'instance.json');
    writeFileSync(target, JSON.stringify({ ...self(), version: 'x', mcpUrl: `${planted.url}/mcp`, pairUrl: `${planted.url}/pair` }), { mode: 0o600 });
    const pointer = join(state, pointerName);
    writeFileSync(pointer, JSON.stringify({ instance: target }), { mode: 0o600 });
    chmodSync(pointer, 0o644);
    const client = await sdkBridge({ HOME: home, TANDEM_TOKEN: secret });
    expect(await call(client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'not_running', message: expect.stringMatching(/mode 0644/) } });
    chmodSync(pointer, 0o600);
    chmodSync(elsewhere, 0o777);
    expect(await call(client, 'terminal_list')).toMatchObject({
      isError: true,
      error: { code: 'not_running', message: expect.stringMatching(/writable by others/) },
    });
    expect(planted.seen).toEqual([]);

    // Control: the same files with the modes the host writes are followed (so the refusals above are the checks at work).
    chmodSync(elsewhere, 0o700);
    expect(await call(client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'not_running' } });
    expect(planted.seen.some((line) => line.includes(`Bearer ${secret}`))).toBe(true);
  });

  it('control: a runtime-directory instance.json with the host’s modes is trusted and used', async () => {
    const base = tempRoot();
    const runtime = join(base, 'run');
    const dir = join(runtime, 'tandem');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const planted = await listener();
    write(dir, join(dir, 'instance.json'), JSON.stringify({ ...self(), version: 'x', mcpUrl: `${planted.url}/mcp`, pairUrl: `${planted.url}/pair` }));
    const client = await sdkBridge({ HOME: join(base, 'home'), XDG_RUNTIME_DIR: runtime, TANDEM_TOKEN: secret });
    await call(client, 'terminal_list');
    expect(planted.seen.some((line) => line.includes(`Bearer ${secret}`))).toBe(true);
  });
});

describe('a host with its own TANDEM_HOME prints configurations that carry it', () => {
  it('the Cursor entry and the generic one, run exactly as shown with the SDK, answer terminal_list', async () => {
    const base = tempRoot();
    const tandemHome = join(base, 'own-tandem-home');
    const home = join(base, 'home');
    mkdirSync(home);
    const env: NodeJS.ProcessEnv = { ...process.env, TANDEM_HOME: tandemHome, HOME: home, SHELL: '/bin/bash' };
    delete env.TANDEM_INSTANCE;
    const running = await startRuntime({
      env,
      port: 0,
      allowOrigins: [],
      trustLocalAgents: false,
      rendererDir: null,
      bridge: { command: process.execPath, args: [bin, 'mcp'] },
    });
    cleanups.push(() => running.stop());
    const { configs } = running.agents.pairAgent({ name: 'own-home' });
    const cursor = JSON.parse(`{${configs.find((entry) => entry.client === 'Cursor')!.text}}`) as {
      tandem: { command: string; args: string[]; env: Record<string, string> };
    };
    expect(cursor.tandem.env.TANDEM_HOME).toBe(tandemHome);
    const generic = configs.find((entry) => entry.client.startsWith('Other MCP clients'))!.text;
    expect(generic).toContain(`TANDEM_HOME=${tandemHome}`);
    for (const client of ['Claude Code', 'Codex', 'Gemini CLI'])
      expect(configs.find((entry) => entry.client === client)!.text).toContain(`TANDEM_HOME=${tandemHome}`);

    await withProcessEnv({ HOME: home }, ['TANDEM_HOME', 'TANDEM_INSTANCE', 'TANDEM_TOKEN', 'XDG_RUNTIME_DIR', 'XDG_CONFIG_HOME'], async () => {
      const transport = new StdioClientTransport({ command: cursor.tandem.command, args: cursor.tandem.args, env: cursor.tandem.env, stderr: 'pipe' });
      const client = new Client({ name: 'cursor', version: '1.0.0' });
      await client.connect(transport);
      cleanups.push(() => client.close());
      expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });

      // Without the variable (what was printed before), the same bridge does not find this host.
      const { TANDEM_HOME: _dropped, ...without } = cursor.tandem.env;
      const lost = new Client({ name: 'cursor', version: '1.0.0' });
      await lost.connect(new StdioClientTransport({ command: cursor.tandem.command, args: cursor.tandem.args, env: without, stderr: 'pipe' }));
      cleanups.push(() => lost.close());
      expect(await call(lost, 'terminal_list')).toMatchObject({
        isError: true,
        error: { code: 'not_running', message: expect.stringContaining('TANDEM_HOME') },
      });
    });
  });
});
