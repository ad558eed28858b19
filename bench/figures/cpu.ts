/** Idle CPU of a terminal whose command runs quietly: the status watcher's cost (status-watcher.ts). */
import { probePath, runProbe } from '../lib/child.js';
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
      description: 'CPU of a process holding one engine terminal running `sleep 600` (the watcher looks once a second; stty children included); baseline: the same with the terminal at its prompt',
    },
  ],
  async run(opts) {
    const probe = probePath('cpu-child.ts');
    const seconds = String(opts.pick(10, 1));
    const settle = String(opts.pick(3, 1));
    const runs = opts.pick(3, 1);
    const running: number[] = [];
    const prompt: number[] = [];
    const statuses = new Set<string>();
    try {
      for (let i = 0; i < runs; i++) {
        const r = await runProbe<CpuResult>(probe, ['running', '--home', opts.home, '--seconds', seconds, '--settle', settle], opts.root);
        running.push(r.percent);
        statuses.add(r.status);
        prompt.push((await runProbe<CpuResult>(probe, ['prompt', '--home', opts.home, '--seconds', seconds, '--settle', settle], opts.root)).percent);
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
