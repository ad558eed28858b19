/** Idle CPU of a terminal whose command runs quietly: the status watcher's cost (status-watcher.ts). */
import { builtProbe, runProbe } from '../lib/child.js';
import type { Figure, Measurement } from '../lib/types.js';

interface CpuResult {
  percent: number;
  status: string;
}

export const cpuFigure: Figure = {
  id: 'cpu',
  title: 'Idle CPU (a separate Node process, % of one core)',
  rows: [
    {
      name: 'cpu.idle-running-terminal',
      unit: '%',
      target: { metric: 'median', op: '<=', value: 0.5 },
      description:
        'CPU of a plain Node process (the probe bundled, no TypeScript loader) holding one engine terminal running `sleep 600`, measured over 20 s after 15 s of settling (V8 keeps collecting for seconds after start-up; a clock tick is 0.05% of such a window); the watcher looks once a second; stty children included; baseline: the same with the terminal at its prompt, in a process of its own at the same time',
    },
  ],
  async run(opts) {
    const seconds = String(opts.pick(20, 1));
    const settle = String(opts.pick(15, 1));
    const runs = opts.pick(3, 1);
    const running: number[] = [];
    const prompt: number[] = [];
    const statuses = new Set<string>();
    try {
      const probe = await builtProbe('cpu-child.ts', opts.root);
      const measure = (mode: 'running' | 'prompt') =>
        runProbe<CpuResult>(probe, [mode, '--home', opts.home, '--seconds', seconds, '--settle', settle], opts.root);
      for (let i = 0; i < runs; i++) {
        // Side by side: both are idle, so neither takes CPU the other would see.
        const [r, p] = await Promise.all([measure('running'), measure('prompt')]);
        running.push(r.percent);
        statuses.add(r.status);
        prompt.push(p.percent);
      }
    } catch (error) {
      return [{ row: 'cpu.idle-running-terminal', error: (error as Error).message }];
    }
    const out: Measurement = {
      row: 'cpu.idle-running-terminal',
      samples: running,
      baselines: [{ name: 'terminal at its prompt', samples: prompt }],
      note: `${seconds} s windows; the running terminal's status was ${[...statuses].join(', ')}`,
    };
    return [out];
  },
};
