/** Memory: host RSS with 8 idle terminals, and per terminal with a full 10,000-line scrollback. */
import { probePath, runProbe } from '../lib/child.js';
import { summarize } from '../lib/stats.js';
import type { Figure, Measurement } from '../lib/types.js';

const idleTerminals = 8;
/** Terminals whose growth is reported apart: the process's one-time heap growth lands in them. */
const warmTerminals = 2;
const lines = 10_000;
const cols = 160;

interface IdleResult {
  terminals: number;
  emptyMiB: number;
  withTerminalsMiB: number;
}

interface PerTerminalResult {
  terminals: number;
  perTerminalMiB: number[];
  heapPerTerminalMiB: number[];
  bufferLines: number[];
}

export const memoryFigure: Figure = {
  id: 'memory',
  title: 'Memory (RSS of a separate Node process, after GC)',
  rows: [
    {
      name: 'memory.idle8.host-rss',
      unit: 'MiB',
      target: null,
      description: `RSS of a Node process holding ${idleTerminals} idle engine terminals (bash); baseline: the same process before opening any`,
    },
    {
      name: 'memory.scrollback10k.per-terminal',
      unit: 'MiB',
      target: { metric: 'median', op: '<=', value: 8 },
      description: `RSS growth per engine terminal (${cols} cols, scrollback 10,000) after ${lines} lines of ${cols} chars through the PTY, after the first ${warmTerminals} terminals; baseline: a bare @xterm/headless terminal holding the same`,
    },
    {
      name: 'memory.scrollback10k.first-terminals',
      unit: 'MiB',
      target: null,
      description: `RSS growth of each of the first ${warmTerminals} such terminals of a process: besides the terminal, V8's young generation grows for good (to 2 x 16 MiB) while their lines survive collections`,
    },
  ],
  async run(opts) {
    const probe = probePath('memory-child.ts');
    const out: Measurement[] = [];
    try {
      const runs = opts.pick(3, 1);
      const held: number[] = [];
      const empty: number[] = [];
      for (let i = 0; i < runs; i++) {
        const r = await runProbe<IdleResult>(probe, ['idle', '--home', opts.home, '--terminals', String(idleTerminals)], opts.root);
        held.push(r.withTerminalsMiB);
        empty.push(r.emptyMiB);
      }
      const perIdle = held.map((value, i) => (value - empty[i]!) / idleTerminals);
      perIdle.sort((a, b) => a - b);
      out.push({
        row: 'memory.idle8.host-rss',
        samples: held,
        baselines: [{ name: 'same process, no terminals', samples: empty }],
        note: `about ${perIdle[Math.floor(perIdle.length / 2)]!.toFixed(1)} MiB per idle terminal`,
      });
    } catch (error) {
      out.push({ row: 'memory.idle8.host-rss', error: (error as Error).message });
    }
    try {
      const terminals = warmTerminals + opts.pick(6, 1);
      const args = ['--home', opts.home, '--terminals', String(terminals), '--lines', String(lines), '--cols', String(cols)];
      const engine = await runProbe<PerTerminalResult>(probe, ['scrollback', ...args], opts.root);
      const bare = await runProbe<PerTerminalResult>(probe, ['xterm', ...args], opts.root);
      const kept = Math.min(...engine.bufferLines);
      const list = (values: number[]) => values.map((v) => v.toFixed(1)).join(', ');
      const heap = (r: PerTerminalResult) => summarize(r.heapPerTerminalMiB.slice(warmTerminals))?.median.toFixed(1) ?? '?';
      out.push({
        row: 'memory.scrollback10k.per-terminal',
        samples: engine.perTerminalMiB.slice(warmTerminals),
        baselines: [{ name: '@xterm/headless 160 cols, scrollback 10000', samples: bare.perTerminalMiB.slice(warmTerminals) }],
        note:
          `RSS growth per terminal in opening order: engine ${list(engine.perTerminalMiB)}, bare xterm ${list(bare.perTerminalMiB)} MiB ` +
          `(the first ${warmTerminals} are the next row); live JS heap + external per terminal: engine ${heap(engine)} MiB, ` +
          `bare xterm ${heap(bare)} MiB; the engine retained ${kept} lines per terminal (live buffer plus cold history)`,
      });
      out.push({
        row: 'memory.scrollback10k.first-terminals',
        samples: engine.perTerminalMiB.slice(0, warmTerminals),
        baselines: [{ name: '@xterm/headless, its first terminals', samples: bare.perTerminalMiB.slice(0, warmTerminals) }],
      });
    } catch (error) {
      out.push({ row: 'memory.scrollback10k.per-terminal', error: (error as Error).message });
      out.push({ row: 'memory.scrollback10k.first-terminals', error: (error as Error).message });
    }
    return out;
  },
};
