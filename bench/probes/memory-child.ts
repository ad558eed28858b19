/**
 * Memory probe, run in its own process so the figures are clean:
 *   node --expose-gc --import tsx bench/probes/memory-child.ts <mode> --home DIR [--terminals N] [--lines N] [--cols N]
 * Modes: `idle` (N idle engine terminals), `scrollback` (N engine terminals each filled with
 * `lines` full-width lines through the PTY), `xterm` (N bare @xterm/headless terminals holding
 * the same lines). Prints one line `BENCH-RESULT <json>` on stdout; RSS in MiB after forced GC.
 */
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { parseArgs } from 'node:util';
import { DEFAULT_LIMITS } from '../../src/shared/limits.js';
import type { TerminalSession } from '../../src/main/terminal/session/session.js';
import { expectStatus, SessionScope } from '../lib/engine.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    home: { type: 'string' },
    terminals: { type: 'string', default: '8' },
    lines: { type: 'string', default: '10000' },
    cols: { type: 'string', default: '160' },
  },
});
const mode = positionals[0];
const home = values.home;
const terminals = Number(values.terminals);
const lineCount = Number(values.lines);
const cols = Number(values.cols);
const rows = 32;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

/** Live JS heap plus external memory (xterm's typed arrays): what is retained, not what the allocator keeps. */
let lastHeapMiB = 0;

async function rssMiB(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  const usage = process.memoryUsage();
  lastHeapMiB = (usage.heapUsed + usage.external) / 2 ** 20;
  return usage.rss / 2 ** 20;
}

function report(value: unknown): void {
  process.stdout.write(`BENCH-RESULT ${JSON.stringify(value)}\n`);
}

async function idle(scope: SessionScope): Promise<void> {
  const emptyMiB = await rssMiB();
  const held: TerminalSession[] = [];
  for (let i = 0; i < terminals; i++) {
    const session = await scope.open('bash');
    expectStatus(await session.send({ text: 'true' }), 'done', 'true');
    held.push(session);
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  const withTerminalsMiB = await rssMiB();
  report({ mode, terminals: held.length, emptyMiB, withTerminalsMiB });
}

async function scrollback(scope: SessionScope): Promise<void> {
  const samples: number[] = [];
  const heapSamples: number[] = [];
  let before = await rssMiB();
  let heapBefore = lastHeapMiB;
  const bufferLines: number[] = [];
  const held: TerminalSession[] = [];
  for (let i = 0; i < terminals; i++) {
    const session = await scope.open('bash', { cols, rows, scrollback: DEFAULT_LIMITS.scrollbackLines });
    // Paced below the emulator's flood threshold, so the whole scrollback is parsed and kept
    // (a flood would keep only its newest part; that is a different figure).
    const text = `for s in $(seq 0 500 ${lineCount - 1}); do seq -f '%0${cols}.0f' $((s + 1)) $((s + 500 < ${lineCount} ? s + 500 : ${lineCount})); sleep 0.1; done`;
    const result = await session.send({ text, waitMs: 55_000, maxOutputBytes: 1024 });
    expectStatus(result, 'done', 'seq');
    await session.drained();
    held.push(session);
    const after = await rssMiB();
    samples.push(after - before);
    heapSamples.push(lastHeapMiB - heapBefore);
    before = after;
    heapBefore = lastHeapMiB;
  }
  // Lines retained (live buffer plus any cold history), counted after every RSS sample.
  for (const session of held) bufferLines.push(session.headless.serialize().split('\n').length);
  report({ mode, terminals: held.length, perTerminalMiB: samples, heapPerTerminalMiB: heapSamples, bufferLines, scrollback: DEFAULT_LIMITS.scrollbackLines });
}

async function xterm(): Promise<void> {
  const line = (n: number) => String(n).padStart(cols, '0');
  const samples: number[] = [];
  const bufferLines: number[] = [];
  const held: HeadlessTerminal[] = [];
  const heapSamples: number[] = [];
  let before = await rssMiB();
  let heapBefore = lastHeapMiB;
  for (let i = 0; i < terminals; i++) {
    const term = new Terminal({ cols, rows, scrollback: lineCount, allowProposedApi: true });
    // PTY-sized chunks, as the host would receive them.
    let chunk = '';
    for (let n = 1; n <= lineCount; n++) {
      chunk += `${line(n)}\r\n`;
      if (chunk.length >= 64 * 1024 || n === lineCount) {
        const data = chunk;
        chunk = '';
        await new Promise<void>((resolve) => term.write(data, resolve));
      }
    }
    bufferLines.push(term.buffer.normal.length);
    held.push(term);
    const after = await rssMiB();
    samples.push(after - before);
    heapSamples.push(lastHeapMiB - heapBefore);
    before = after;
    heapBefore = lastHeapMiB;
  }
  report({ mode, terminals: held.length, perTerminalMiB: samples, heapPerTerminalMiB: heapSamples, bufferLines });
  for (const term of held) term.dispose();
}

async function main(): Promise<void> {
  if (mode === 'xterm') return xterm();
  if (!home) throw new Error('--home is required');
  const scope = new SessionScope(home);
  try {
    if (mode === 'idle') await idle(scope);
    else if (mode === 'scrollback') await scrollback(scope);
    else throw new Error(`unknown mode ${mode}`);
  } finally {
    await scope.closeAll();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`memory-child: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
