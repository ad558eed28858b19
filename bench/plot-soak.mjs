#!/usr/bin/env node
/**
 * Draws a long soak's samples (`npm run bench -- --soak N` writes them to
 * bench/results/soak-<date>.json) as a PNG: host memory, descriptors and the agents' call rate
 * over time, with the person's floods and reloads marked. Made by hand after a soak, not in CI.
 *
 *   node bench/plot-soak.mjs bench/results/soak-<date>.json [bench/soak-<N>.png]
 *
 * Needs gnuplot with its cairo terminal (Debian: `apt-get install gnuplot-nox`); no network.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [input, output = `bench/soak-${Date.now()}.png`] = process.argv.slice(2);
if (!input) {
  process.stderr.write('usage: node bench/plot-soak.mjs SAMPLES.json [OUT.png]\n');
  process.exit(2);
}
const soak = JSON.parse(readFileSync(input, 'utf8'));
const samples = soak.samples;
if (!Array.isArray(samples) || samples.length < 2) {
  process.stderr.write(`${input}: fewer than two samples\n`);
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'tandem-plot-soak-'));
try {
  // Minutes; calls per second over each interval (the first sample's over the time since the start).
  const rows = samples.map((s, i) => {
    const previous = samples[i - 1] ?? { t: 0, calls: 0 };
    const rate = (s.calls - previous.calls) / Math.max(0.001, s.t - previous.t);
    const files = s.fds === null || s.sockets === null ? 'NaN' : s.fds - s.sockets;
    return [(s.t / 60).toFixed(3), s.heapMiB, s.rssMiB, s.heapTotalMiB, files, s.sockets ?? 'NaN', rate.toFixed(1), s.errors].join(' ');
  });
  writeFileSync(join(dir, 'samples.dat'), `${rows.join('\n')}\n`);
  const floods = (soak.floods ?? []).map((f) => `${(f.t / 60).toFixed(3)} ${(f.s / 60).toFixed(3)}`);
  writeFileSync(join(dir, 'floods.dat'), `${floods.join('\n') || '0 0'}\n`);
  const reloads = (soak.reloads ?? []).map((r) => `${(r.t / 60).toFixed(3)} ${r.ok ? 1 : 0}`);
  writeFileSync(join(dir, 'reloads.dat'), `${reloads.join('\n') || 'NaN NaN'}\n`);

  const minutes = soak.seconds / 60;
  const errors = soak.errors?.count ?? 0;
  const warnings = soak.warnings?.length ?? 0;
  const reloadsOk = (soak.reloads ?? []).filter((r) => r.ok).length;
  const title =
    `Tandem soak: ${minutes.toFixed(0)} min, 4 agents through stdio bridges + a person's terminal over /ws ` +
    `(seq 1 ${soak.floodLines} every ${soak.floodEveryS / 60} min, reload every ${soak.reloadEveryS / 60} min)\\n` +
    `${soak.calls} tool calls, ${errors} errors, ${warnings} warnings, ${(soak.floods ?? []).length} floods, ${reloadsOk}/${(soak.reloads ?? []).length} reloads right; host sampled every ${soak.sampleEveryS} s`;
  const q = (path) => `'${path.replaceAll("'", "''")}'`;
  const data = q(join(dir, 'samples.dat'));
  // Floods as shaded spans along the bottom of each panel, reloads as dashed vertical lines.
  const marks = () => [
    `set style rect fc rgb '#f0c080' fs solid 0.35 noborder`,
    ...(soak.floods ?? []).map(
      (f, i) => `set object ${i + 1} rect from ${(f.t / 60).toFixed(3)},graph 0 to ${((f.t + Math.max(f.s, 3)) / 60).toFixed(3)},graph 1 behind`,
    ),
    ...(soak.reloads ?? []).map(
      (r, i) =>
        `set arrow ${i + 1} from ${(r.t / 60).toFixed(3)},graph 0 to ${(r.t / 60).toFixed(3)},graph 1 nohead dt 2 lc rgb '${r.ok ? '#2a7f2a' : '#d00000'}' lw 1.5`,
    ),
  ];
  const script = [
    `set terminal pngcairo size 1400,1150 font 'Sans,11'`,
    `set output ${q(output)}`,
    `set multiplot layout 3,1 title "${title}" font 'Sans,12'`,
    `set grid ytics xtics lc rgb '#dddddd'`,
    `set xrange [0:${Math.max(minutes, samples.at(-1).t / 60).toFixed(2)}]`,
    `set key outside right top vertical`,
    `set lmargin 12`,
    `set rmargin 34`,
    // Panel 1: memory.
    ...marks(),
    `set ylabel 'MiB'`,
    `set yrange [0:*]`,
    `set title 'Host memory (heap after forced full GCs, V8 heap committed, RSS)'`,
    `plot ${data} using 1:3 with lines lw 2 lc rgb '#1f5fbf' title 'RSS (MiB)', ` +
      `${data} using 1:4 with lines lw 1.5 lc rgb '#8fa8d8' title 'V8 heap committed (MiB)', ` +
      `${data} using 1:2 with lines lw 2 lc rgb '#c0392b' title 'heap used after GC (MiB)', ` +
      `NaN with boxes fs solid 0.35 lc rgb '#f0c080' title 'flood (seq) running', ` +
      `NaN with lines dt 2 lw 1.5 lc rgb '#2a7f2a' title 'reload (snapshot checked)'`,
    `unset object`,
    `unset arrow`,
    // Panel 2: descriptors.
    ...marks(),
    `set ylabel 'descriptors'`,
    `set title 'Host descriptors (PTYs, pipes, files; sockets apart: the bridges'' and the viewer''s connections)'`,
    `plot ${data} using 1:5 with steps lw 2 lc rgb '#6a3d9a' title 'descriptors other than sockets', ` +
      `${data} using 1:6 with steps lw 1.5 lc rgb '#b2a0d0' title 'sockets'`,
    `unset object`,
    `unset arrow`,
    // Panel 3: calls and errors.
    ...marks(),
    `set xlabel 'time since the agents started (minutes)'`,
    `set ylabel 'calls/s'`,
    `set y2label 'errors (cumulative)'`,
    `set y2range [0:${Math.max(5, errors * 1.2)}]`,
    `set y2tics`,
    `set title 'Agents'' tool calls per second (four agents, between samples) and wrong or failed results'`,
    `plot ${data} using 1:7 with lines lw 1.5 lc rgb '#2c7f7f' title 'tool calls per second', ` +
      `${data} using 1:8 axes x1y2 with steps lw 2 lc rgb '#d00000' title 'errors so far (right axis)'`,
    `unset multiplot`,
  ].join('\n');
  writeFileSync(join(dir, 'plot.gp'), `${script}\n`);
  const result = spawnSync('gnuplot', [join(dir, 'plot.gp')], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    process.stderr.write(`gnuplot failed (apt-get install gnuplot-nox?): ${result.error?.message ?? result.stderr}\n`);
    process.exit(1);
  }
  process.stdout.write(`wrote ${output}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
