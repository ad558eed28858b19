import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { figures } from '../../bench/figures/index.js';
import type { RowResult } from '../../bench/lib/types.js';
import { procfs, runs } from '../support/capabilities.js';

// Benchmarks are not timed assertions: this only checks that `npm run bench -- --quick` runs
// and reports every figure, as a number or an explicit pending/skipped/error status.
const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The quick run takes about a minute alone, two and a half beside the rest of the suite and
 * more than six on a machine loaded beyond that (seen: killed at 400 s with the suite's other
 * worker and a second suite on the same cores); a bound that catches a hang, not a speed target.
 */
const quickBoundMs = 900_000;

function runQuickBench(out: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--quick', '--out', out], {
      cwd: join(import.meta.dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), quickBoundMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// The leftover check (nothing the bench started outlived it) finds processes in /proc.
describe.runIf(runs('npm run bench -- --quick', procfs))('npm run bench -- --quick (needs /proc)', () => {
  it('runs and reports every figure', { timeout: quickBoundMs + 10_000 }, async () => {
    const out = join(dir, 'results.json');
    const { code, stdout, stderr } = await runQuickBench(out);
    expect(code, stderr).toBe(0);
    const results = JSON.parse(readFileSync(out, 'utf8')) as { mode: string; figures: RowResult[]; leftovers: string[] };
    expect(results.mode).toBe('quick');
    // Nothing the bench started (shells, host processes, bridges, tmux) outlived it.
    expect(results.leftovers).toEqual([]);
    const names = figures.flatMap((figure) => figure.rows.map((row) => row.name));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const row = results.figures.find((candidate) => candidate.name === name);
      expect(row, `${name} missing from results.json`).toBeDefined();
      if (row!.status === 'ok') {
        expect(typeof row!.median, name).toBe('number');
        expect(typeof row!.p90, name).toBe('number');
      } else {
        expect(['pending', 'skipped', 'error'], name).toContain(row!.status);
        expect(row!.note, name).toBeTruthy();
      }
      expect(stdout).toContain(name);
    }
  });
});
