import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const projectRoot = resolve(import.meta.dirname, '../../..');
const cliPath = join(projectRoot, 'bin/tandem.js');
const builtCli = join(projectRoot, 'out/main/cli.js');
const builtRenderer = join(projectRoot, 'out/renderer/index.html');
const loginUrlPattern = /(http:\/\/127\.0\.0\.1:\d+)\/#login=(\S+)/;
const startTimeoutMs = 20_000;
const stopTimeoutMs = 10_000;

export interface TandemServe {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** The printed login link. */
  loginUrl: string;
  /** The private state directory (TANDEM_HOME). */
  home: string;
  stop(): Promise<void>;
}

/** Why the built app is unusable, or null. The tests run against the build, never the sources. */
export function missingBuild(): string | null {
  for (const file of [builtCli, builtRenderer]) {
    if (!existsSync(file)) return `${file} is missing: run \`npx electron-vite build\` first`;
  }
  return null;
}

/** Environment of the server: a private TANDEM_HOME and HOME (no personal rc files), bash as the default shell. */
export function serveEnv(home: string): NodeJS.ProcessEnv {
  const userHome = join(home, 'home');
  mkdirSync(userHome, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, TANDEM_HOME: home, HOME: userHome, SHELL: '/bin/bash' };
  for (const name of ['TANDEM_INSTANCE', 'TANDEM_TERMINAL_ID', 'TANDEM_TOKEN', 'ZDOTDIR', 'HISTFILE', 'PROMPT_COMMAND']) delete env[name];
  return env;
}

/** Starts the real `tandem serve --port 0` (with `extraEnv` over serveEnv's) and waits for the login link it prints. */
export async function startServe(extraEnv: NodeJS.ProcessEnv = {}): Promise<TandemServe> {
  const missing = missingBuild();
  if (missing) throw new Error(missing);
  const home = mkdtempSync(join(tmpdir(), 'tandem-ui-e2e-'));
  const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0'], {
    cwd: projectRoot,
    env: { ...serveEnv(home), ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    log = (log + chunk).slice(-4000);
  });
  try {
    const { origin, loginUrl } = await waitForLogin(child, () => log);
    return { origin, loginUrl, home, stop: () => stop(child, home) };
  } catch (error) {
    await stop(child, home);
    throw error;
  }
}

function waitForLogin(child: ChildProcess, log: () => string): Promise<{ origin: string; loginUrl: string }> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`tandem serve printed no login link within ${startTimeoutMs} ms; stderr:\n${log()}`)), startTimeoutMs);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = loginUrlPattern.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolvePromise({ origin: match[1]!, loginUrl: match[0] });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`tandem serve exited (code ${code}, signal ${signal}) before printing its link; stderr:\n${log()}`));
    });
  });
}

async function stop(child: ChildProcess, home: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolvePromise) => child.once('exit', () => resolvePromise()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
    await exited;
    clearTimeout(timer);
  }
  rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

/** The same link, with `?test` so the page exposes its read-only test hook. */
export function testUrl(loginUrl: string): string {
  const url = new URL(loginUrl);
  url.search = '?test';
  return url.toString();
}
