/** Runs a probe script in its own Node process (tsx, --expose-gc) and parses its result line. */
import { spawn } from 'node:child_process';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export function probePath(name: string): string {
  return fileURLToPath(new URL(`../probes/${name}`, import.meta.url));
}

/**
 * The probe bundled into plain JavaScript under out/bench (dependencies stay packages), for
 * figures where the TypeScript loader's own cost would count: tsx keeps an idle Node process at
 * about 1.3% of a core, more than the figure it would hide. Under out/ the code finds the built
 * resources as the app does. The host of the MCP figures runs this way too: the app runs its
 * built code, and tsx's source maps make each first error stack and first call of a module
 * slower than the app's (the first command of a fresh host paid them).
 */
export function builtProbe(name: string, root: string): Promise<string> {
  const outfile = join(root, 'out', 'bench', basename(name).replace(/\.ts$/, '.mjs'));
  let built = builds.get(outfile);
  if (!built) {
    built = build({
      entryPoints: [probePath(name)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'error',
    }).then(() => outfile);
    builds.set(outfile, built);
  }
  return built;
}

/** Each probe is bundled once per bench run. */
const builds = new Map<string, Promise<string>>();

/** `script` runs through tsx unless it is JavaScript already (builtProbe). */
export function runProbe<T>(script: string, args: string[], cwd: string, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
    const child = spawn(process.execPath, ['--expose-gc', ...loader, script, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`probe ${script} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH-RESULT '));
      if (code !== 0 || !line) {
        reject(new Error(`probe exited ${code}: ${(stderr.trim().split('\n').slice(-3).join(' ') || stdout.trim()).slice(0, 300)}`));
        return;
      }
      resolve(JSON.parse(line.slice('BENCH-RESULT '.length)) as T);
    });
  });
}
