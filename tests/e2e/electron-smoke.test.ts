import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitOf } from '../integration/web-helpers.js';

const projectRoot = resolve(import.meta.dirname, '../..');
const builtMain = join(projectRoot, 'out/main/index.js');
const readyTimeoutMs = 20_000;
const secondInstanceExitTimeoutMs = 10_000;

/**
 * The Electron runtime binary, or why it is unavailable. Reads electron's own path.txt
 * instead of `require('electron')`, which starts a download when the binary is missing.
 */
function findElectronBinary(): { path: string } | { reason: string } {
  try {
    const packageDir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
    const pathFile = join(packageDir, 'path.txt');
    if (!existsSync(pathFile)) return { reason: `the Electron runtime is not installed (${pathFile} is missing)` };
    const relative = readFileSync(pathFile, 'utf8');
    const distDir = process.env.ELECTRON_OVERRIDE_DIST_PATH ?? join(packageDir, 'dist');
    const binary = join(distDir, relative);
    return existsSync(binary) ? { path: binary } : { reason: `the Electron binary ${binary} does not exist` };
  } catch (error) {
    return { reason: `the electron package cannot be resolved (${String(error)})` };
  }
}

const electron = findElectronBinary();
const electronAvailable = 'path' in electron;
if (!electronAvailable) {
  console.warn(`Skipping the Electron smoke test: ${electron.reason}. Run \`node node_modules/electron/install.js\` to install it.`);
}

interface ReadyReport {
  webPreferences: Record<string, unknown>;
  page: { hasRequire: boolean; hasProcess: boolean; bridgeKeys: string[] };
}

interface Launched {
  child: ChildProcess;
  stderr: () => string;
}

function launch(binary: string, tandemHome: string): Launched {
  const env: NodeJS.ProcessEnv = { ...process.env, TANDEM_HOME: tandemHome, TANDEM_E2E: '1' };
  // Either would make the binary load something other than the built app.
  delete env.ELECTRON_RUN_AS_NODE;
  delete env.ELECTRON_RENDERER_URL;
  const child = spawn(binary, [projectRoot], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  return { child, stderr: () => stderr };
}

function waitForReady({ child, stderr }: Launched): Promise<ReadyReport> {
  return new Promise((resolvePromise, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => {
      reject(new Error(`no TANDEM_READY line within ${readyTimeoutMs} ms; stderr:\n${stderr()}`));
    }, readyTimeoutMs);
    lines.on('line', (line) => {
      if (!line.startsWith('TANDEM_READY ')) return;
      clearTimeout(timer);
      resolvePromise(JSON.parse(line.slice('TANDEM_READY '.length)) as ReadyReport);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`Electron exited (code ${code}, signal ${signal}) before TANDEM_READY; stderr:\n${stderr()}`));
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill();
  await exitOf(child, secondInstanceExitTimeoutMs).catch(() => child.kill('SIGKILL'));
}

describe.skipIf(!electronAvailable)('Electron app smoke', () => {
  let tandemHome = '';
  let first: Launched | undefined;
  let ready: ReadyReport;

  beforeAll(async () => {
    if (!('path' in electron)) return;
    if (!existsSync(builtMain)) throw new Error(`${builtMain} is missing: run \`npm run build\` first`);
    tandemHome = mkdtempSync(join(tmpdir(), 'tandem-e2e-'));
    first = launch(electron.path, tandemHome);
    ready = await waitForReady(first);
  });

  afterAll(async () => {
    if (first) await stop(first.child);
    if (tandemHome) rmSync(tandemHome, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('opens the window with an isolated, sandboxed renderer', () => {
    expect(ready.webPreferences).toEqual({
      contextIsolation: true,
      nodeIntegration: false,
      sandbox: true,
      webSecurity: true,
    });
    expect(ready.page).toEqual({ hasRequire: false, hasProcess: false, bridgeKeys: ['platform', 'versions', 'call', 'on'] });
  });

  /** tools/list through a bridge started the way an agent's configuration starts it. */
  async function bridgeTools(command: string, args: string[], env: Record<string, string>): Promise<string[]> {
    const client = new Client({ name: 'tandem-e2e', version: '1.0.0' });
    // The SDK passes a minimal environment; `--mcp` on Linux needs the display like any window.
    const display = Object.fromEntries(
      ['DISPLAY', 'XAUTHORITY', 'WAYLAND_DISPLAY', 'XDG_RUNTIME_DIR'].flatMap((key) => (process.env[key] ? [[key, process.env[key]!]] : [])),
    );
    await client.connect(new StdioClientTransport({ command, args, env: { TANDEM_HOME: tandemHome, ...display, ...env } }));
    try {
      return (await client.listTools()).tools.map((tool) => tool.name);
    } finally {
      await client.close();
    }
  }

  it('serves the stdio bridge from `--mcp` (the window process itself has no stdin on Windows)', async () => {
    if (!('path' in electron)) return;
    expect(await bridgeTools(electron.path, [projectRoot, '--mcp', '--name', 'e2e'], {})).toContain('terminal_send');
  });

  it('serves the stdio bridge as the app binary run as Node, as configured agents start it', async () => {
    if (!('path' in electron)) return;
    expect(await bridgeTools(electron.path, [join(projectRoot, 'bin', 'tandem.js'), 'mcp', '--name', 'e2e'], { ELECTRON_RUN_AS_NODE: '1' })).toContain(
      'terminal_send',
    );
  });

  it('hands a second launch to the running instance and exits', async () => {
    if (!('path' in electron)) return;
    const second = launch(electron.path, tandemHome);
    let printedReady = false;
    createInterface({ input: second.child.stdout! }).on('line', (line) => {
      if (line.startsWith('TANDEM_READY')) printedReady = true;
    });
    try {
      expect(await exitOf(second.child, secondInstanceExitTimeoutMs)).toBe(0);
      expect(printedReady).toBe(false);
    } finally {
      await stop(second.child);
    }
  });
});
