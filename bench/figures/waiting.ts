/** How soon a program that waits for input is noticed: bash's builtin `read`, at the engine, by the /proc tier and by the ps tier. */
import { posixPlatform } from '../../src/main/pty/platform.js';
import { builtProbe, runProbe } from '../lib/child.js';
import { expectStatus, SessionScope } from '../lib/engine.js';
import type { Figure, Measurement } from '../lib/types.js';

interface CpuResult {
  percent: number;
  status: string;
}

export const waitingFigure: Figure = {
  id: 'waiting',
  title: 'Waiting noticed (engine)',
  rows: [
    {
      name: 'readiness.waiting-latency.read',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 50 },
      description:
        'session.send({text: "read -p \'name? \' x"}) until waiting_input (bash, clean startup files); baseline: `echo hi` until done, interleaved in the same terminal',
    },
    {
      name: 'readiness.waiting-latency.read.ps',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 100 },
      description:
        "the same with the ps evidence tier (TANDEM_EVIDENCE=ps: one `ps -t` per look, as on macOS); baseline: the /proc tier's samples of the row above, interleaved",
    },
    {
      name: 'cpu.idle-running-terminal.ps',
      unit: '%',
      target: { metric: 'median', op: '<=', value: 0.5 },
      description:
        "the cpu figure's probe (one terminal running `sleep 600`, the watcher looking once a second, ps and stty children included) with TANDEM_EVIDENCE=ps; baseline: the same probe on the /proc tier, side by side",
    },
  ],
  async run(opts) {
    const iterations = opts.pick(60, 5);
    const warmup = opts.pick(3, 1);
    const scope = new SessionScope(opts.home);
    const waiting: number[] = [];
    const waitingPs: number[] = [];
    const echo: number[] = [];
    const evidence = new Map<string, number>();
    const count = (name: string) => evidence.set(name, (evidence.get(name) ?? 0) + 1);
    try {
      const session = await scope.open('bash');
      const psSession = await scope.open('bash', { platform: posixPlatform(process.platform, 'ps') });
      for (let i = 0; i < warmup + iterations; i++) {
        const t0 = performance.now();
        const result = expectStatus(await session.send({ text: "read -p 'name? ' x", waitMs: 5000 }), 'waiting_input', 'read');
        const waitMs = performance.now() - t0;
        count(`proc ${result.evidence}`);
        expectStatus(await session.send({ text: 'answer', waitMs: 5000 }), 'done', 'read answered');
        const t1 = performance.now();
        expectStatus(await session.send({ text: 'echo hi' }), 'done', 'echo');
        const echoMs = performance.now() - t1;
        const t2 = performance.now();
        const psResult = expectStatus(await psSession.send({ text: "read -p 'name? ' x", waitMs: 5000 }), 'waiting_input', 'read (ps)');
        const psMs = performance.now() - t2;
        count(`ps ${psResult.evidence}`);
        expectStatus(await psSession.send({ text: 'answer', waitMs: 5000 }), 'done', 'read answered (ps)');
        if (i >= warmup) {
          waiting.push(waitMs);
          echo.push(echoMs);
          waitingPs.push(psMs);
        }
      }
    } finally {
      await scope.closeAll();
    }
    const seen = [...evidence].map(([name, n]) => `${name} ${n}`).join(', ');
    const out: Measurement[] = [
      { row: 'readiness.waiting-latency.read', samples: waiting, baselines: [{ name: 'engine echo round trip', samples: echo }], note: `evidence: ${seen}` },
      { row: 'readiness.waiting-latency.read.ps', samples: waitingPs, baselines: [{ name: '/proc tier', samples: waiting }], note: `evidence: ${seen}` },
    ];
    out.push(await idleCpu(opts));
    return out;
  },
};

/** The cpu figure's probe in two processes side by side, one of them on the ps tier. */
async function idleCpu(opts: Parameters<NonNullable<Figure['run']>>[0]): Promise<Measurement> {
  const seconds = String(opts.pick(20, 1));
  const settle = String(opts.pick(15, 1));
  const runs = opts.pick(3, 1);
  const ps: number[] = [];
  const proc: number[] = [];
  const statuses = new Set<string>();
  try {
    const probe = await builtProbe('cpu-child.ts', opts.root);
    const measure = (tier: 'ps' | 'proc') => {
      // The probe inherits this process's environment at spawn (runProbe): the tier is chosen in it.
      const before = process.env.TANDEM_EVIDENCE;
      process.env.TANDEM_EVIDENCE = tier;
      try {
        return runProbe<CpuResult>(probe, ['running', '--home', opts.home, '--seconds', seconds, '--settle', settle], opts.root);
      } finally {
        if (before === undefined) delete process.env.TANDEM_EVIDENCE;
        else process.env.TANDEM_EVIDENCE = before;
      }
    };
    for (let i = 0; i < runs; i++) {
      const [a, b] = await Promise.all([measure('ps'), measure('proc')]);
      ps.push(a.percent);
      statuses.add(a.status);
      proc.push(b.percent);
    }
  } catch (error) {
    return { row: 'cpu.idle-running-terminal.ps', error: (error as Error).message };
  }
  return {
    row: 'cpu.idle-running-terminal.ps',
    samples: ps,
    baselines: [{ name: '/proc tier', samples: proc }],
    note: `${seconds} s windows; the ps terminal's status was ${[...statuses].join(', ')}`,
  };
}
