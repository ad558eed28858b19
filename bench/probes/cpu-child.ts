/**
 * Idle CPU probe, run in its own process so nothing else counts:
 *   node --import tsx bench/probes/cpu-child.ts <prompt|running> --home DIR [--seconds N] [--settle N]
 * `prompt`: one engine terminal at its prompt; `running`: one running a quiet command (`sleep`),
 * which the status watcher looks at. Prints `BENCH-RESULT {"percent": …}`: CPU of this process
 * and the children it waited for (stty), as % of one core, over the window.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { expectStatus, SessionScope } from '../lib/engine.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { home: { type: 'string' }, seconds: { type: 'string', default: '10' }, settle: { type: 'string', default: '3' } },
});
const mode = positionals[0];
const ticksPerSecond = 100;

/** utime + stime + cutime + cstime of this process, in seconds (Linux clock ticks). */
function cpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / ticksPerSecond;
}

async function main(): Promise<void> {
  if (!values.home || (mode !== 'prompt' && mode !== 'running')) throw new Error('usage: cpu-child.ts <prompt|running> --home DIR');
  const scope = new SessionScope(values.home);
  try {
    const session = await scope.open('bash');
    if (mode === 'running') expectStatus(await session.send({ text: 'sleep 600', waitMs: 300 }), 'running', 'sleep');
    // Past the watcher's back-off: what a quiet command costs for as long as it runs.
    await new Promise((resolve) => setTimeout(resolve, Number(values.settle) * 1000));
    const seconds = Number(values.seconds);
    const before = cpuSeconds();
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const percent = ((cpuSeconds() - before) / ((performance.now() - t0) / 1000)) * 100;
    process.stdout.write(`BENCH-RESULT ${JSON.stringify({ mode, percent, status: session.status })}\n`);
  } finally {
    await scope.closeAll();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
