/**
 * `npm run bench [-- --quick] [--out FILE] [--only id,id] [--soak SECONDS]`: runs every figure in
 * figures/index.ts, prints a table (stdout; progress goes to stderr) and writes results.json.
 * Benchmarks are ratios to baselines measured in the same run: absolute times drift on a
 * shared machine, the ratios much less.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { closeTtyModeReader } from '../src/main/pty/termios.js';
import { figures } from './figures/index.js';
import { descendantsOf, processesMatching, sleep } from './lib/procs.js';
import { buildRows, errorRows, pendingRows, renderTable } from './lib/report.js';
import { tmuxSocketLabel, tmuxSocketPath } from './lib/tmux.js';
import type { BenchOptions, Figure, RowResult } from './lib/types.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    only: { type: 'string' },
    // The long soak (bench/README.md): only the soak figure unless --only says otherwise.
    soak: { type: 'string' },
    'soak-flood-every': { type: 'string', default: '60' },
    'soak-reload-every': { type: 'string', default: '300' },
    'soak-out': { type: 'string' },
  },
});
const quick = values.quick ?? false;
const outPath = resolve(values.out ?? join(benchDir, 'results.json'));
function seconds(text: string, option: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${option} takes a number of seconds, not ${JSON.stringify(text)}`);
  return value;
}
const soakSeconds = values.soak === undefined ? null : seconds(values.soak, 'soak');
const only = values.only ? new Set(values.only.split(',').map((id) => id.trim())) : soakSeconds !== null ? new Set(['soak']) : null;
const soak =
  soakSeconds === null
    ? undefined
    : {
        seconds: soakSeconds,
        floodEveryS: seconds(values['soak-flood-every']!, 'soak-flood-every'),
        reloadEveryS: seconds(values['soak-reload-every']!, 'soak-reload-every'),
        out: resolve(values['soak-out'] ?? join(benchDir, 'results', `soak-${new Date().toISOString().slice(0, 16).replace(':', '')}.json`)),
      };

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function runFigure(figure: Figure, opts: BenchOptions): Promise<RowResult[]> {
  if (figure.pending || !figure.run) return pendingRows(figure, `pending: ${figure.pending ?? 'not implemented'}`);
  const t0 = performance.now();
  opts.log(`${figure.title}…`);
  try {
    // The long soak runs as long as asked, plus its floods' tail and teardown.
    const limitMs = figure.id === 'soak' && opts.soak ? opts.soak.seconds * 1000 + 600_000 : quick ? 90_000 : 900_000;
    const measurements = await withTimeout(figure.run(opts), limitMs, figure.id);
    return buildRows(figure, measurements);
  } catch (error) {
    return errorRows(figure, (error as Error).message);
  } finally {
    opts.log(`${figure.title}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
}

/** Nothing the bench started may outlive it: report (and end) stray children and the tmux server. */
async function leftovers(): Promise<string[]> {
  await sleep(100);
  // tsx's esbuild service is a child of this process from the start; it is not the bench's.
  const stray = [...descendantsOf(process.pid).filter((p) => p.comm !== 'esbuild'), ...processesMatching(tmuxSocketLabel())];
  for (const p of stray) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  const found = stray.map((p) => `${p.comm}(${p.pid})`);
  if (existsSync(tmuxSocketPath())) found.push(`tmux socket ${tmuxSocketPath()}`);
  return found;
}

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'tandem-bench-home-'));
  const opts: BenchOptions = {
    quick,
    home,
    root,
    pick: (full, quickCount) => (quick ? quickCount : full),
    log: (message) => process.stderr.write(`bench: ${message}\n`),
    soak,
  };
  const started = new Date();
  const rows: RowResult[] = [];
  try {
    for (const figure of figures) {
      if (only && !only.has(figure.id)) continue;
      rows.push(...(await runFigure(figure, opts)));
    }
  } finally {
    // A shell that ended with its figure can still be writing its history there: retry.
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
  // The engine's kept tty-mode reader (pty/termios.ts) is the bench process's own, not a figure's.
  closeTtyModeReader();
  const stray = await leftovers();
  const results = {
    mode: quick ? 'quick' : 'full',
    startedAt: started.toISOString(),
    durationS: Number(((Date.now() - started.getTime()) / 1000).toFixed(1)),
    machine: { node: process.version, platform: `${process.platform}-${process.arch}`, cpus: cpus().length, cpu: cpus()[0]?.model ?? null, loadavg: loadavg() },
    figures: rows,
    leftovers: stray,
  };
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(outPath, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nTandem bench (${results.mode}, ${results.durationS} s, ${results.machine.cpus} CPUs, node ${process.version})\n\n`);
  process.stdout.write(`${renderTable(rows)}\n\nwrote ${outPath}\n`);
  if (stray.length > 0) process.stderr.write(`bench: WARNING: left behind (now killed): ${stray.join(', ')}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
