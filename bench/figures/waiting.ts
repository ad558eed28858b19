/** How soon a program that waits for input is noticed: bash's builtin `read`, at the engine. */
import { expectStatus, SessionScope } from '../lib/engine.js';
import type { Figure } from '../lib/types.js';

export const waitingFigure: Figure = {
  id: 'waiting',
  title: 'Waiting noticed (engine)',
  rows: [
    {
      name: 'readiness.waiting-latency.read',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 50 },
      description: 'session.send({text: "read -p \'name? \' x"}) until waiting_input (bash, clean startup files); baseline: `echo hi` until done, interleaved in the same terminal',
    },
  ],
  async run(opts) {
    const iterations = opts.pick(60, 5);
    const warmup = opts.pick(3, 1);
    const scope = new SessionScope(opts.home);
    const waiting: number[] = [];
    const echo: number[] = [];
    const evidence = new Map<string, number>();
    try {
      const session = await scope.open('bash');
      for (let i = 0; i < warmup + iterations; i++) {
        const t0 = performance.now();
        const result = expectStatus(await session.send({ text: "read -p 'name? ' x", waitMs: 5000 }), 'waiting_input', 'read');
        const waitMs = performance.now() - t0;
        evidence.set(result.evidence, (evidence.get(result.evidence) ?? 0) + 1);
        expectStatus(await session.send({ text: 'answer', waitMs: 5000 }), 'done', 'read answered');
        const t1 = performance.now();
        expectStatus(await session.send({ text: 'echo hi' }), 'done', 'echo');
        const echoMs = performance.now() - t1;
        if (i >= warmup) {
          waiting.push(waitMs);
          echo.push(echoMs);
        }
      }
    } finally {
      await scope.closeAll();
    }
    const seen = [...evidence].map(([name, count]) => `${name} ${count}`).join(', ');
    return [{ row: 'readiness.waiting-latency.read', samples: waiting, baselines: [{ name: 'engine echo round trip', samples: echo }], note: `evidence: ${seen}` }];
  },
};
