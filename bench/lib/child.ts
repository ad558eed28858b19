/** Runs a probe script in its own Node process (tsx, --expose-gc) and parses its result line. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function probePath(name: string): string {
  return fileURLToPath(new URL(`../probes/${name}`, import.meta.url));
}

export function runProbe<T>(script: string, args: string[], cwd: string, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
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
