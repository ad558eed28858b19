/** Engine round trip for `echo`: session.send to `done`, against bare node-pty and tmux. */
import { EchoBaselines } from '../lib/echo-baselines.js';
import { expectStatus, SessionScope } from '../lib/engine.js';
import type { Figure } from '../lib/types.js';

export const roundtripFigure: Figure = {
  id: 'roundtrip',
  title: 'Engine round trip for echo',
  rows: [
    {
      name: 'roundtrip.engine.echo',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 1 },
      description: 'session.send({text: "echo hi"}) until done (bash, clean startup files)',
    },
  ],
  async run(opts) {
    const iterations = opts.pick(200, 20);
    const warmup = opts.pick(10, 3);
    const scope = new SessionScope(opts.home);
    let baselines: EchoBaselines | null = null;
    const notes: string[] = [];
    try {
      const session = await scope.open('bash');
      baselines = await EchoBaselines.start(opts.home, notes, Math.min(iterations, opts.pick(100, 10)));
      const engine: number[] = [];
      for (let i = 0; i < warmup + iterations; i++) {
        const t0 = performance.now();
        const result = await session.send({ text: 'echo hi' });
        const engineMs = performance.now() - t0;
        expectStatus(result, 'done', 'echo');
        if (result.output !== 'hi') throw new Error(`echo printed ${JSON.stringify(result.output)}`);
        await baselines.measure(i, warmup);
        if (i >= warmup) engine.push(engineMs);
      }
      return [{ row: 'roundtrip.engine.echo', samples: engine, baselines: baselines.series(), note: notes.join('; ') || undefined }];
    } finally {
      await scope.closeAll();
      await baselines?.close();
    }
  },
};
