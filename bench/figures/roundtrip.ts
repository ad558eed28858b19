/** Engine round trip for `echo`: session.send to `done`, against bare node-pty and tmux. */
import { BareMarkerShell } from '../lib/bare-pty.js';
import { expectStatus, SessionScope } from '../lib/engine.js';
import { startTmuxBaseline, type TmuxLoop } from '../lib/tmux.js';
import type { Figure, Series } from '../lib/types.js';

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
    let bare: BareMarkerShell | null = null;
    let tmux: TmuxLoop | null = null;
    const notes: string[] = [];
    try {
      const session = await scope.open('bash');
      bare = await BareMarkerShell.start(opts.home);
      tmux = await startTmuxBaseline(opts.home, notes);
      const engine: number[] = [];
      const floor: number[] = [];
      const viaTmux: number[] = [];
      const tmuxIterations = Math.min(iterations, opts.pick(100, 10));
      for (let i = 0; i < warmup + iterations; i++) {
        // Interleaved, so drift on a shared machine hits every series alike.
        let t0 = performance.now();
        const result = await session.send({ text: 'echo hi' });
        const engineMs = performance.now() - t0;
        expectStatus(result, 'done', 'echo');
        if (result.output !== 'hi') throw new Error(`echo printed ${JSON.stringify(result.output)}`);

        t0 = performance.now();
        await bare.roundTrip('echo hi');
        const bareMs = performance.now() - t0;

        let tmuxMs = Number.NaN;
        if (tmux && i < warmup + tmuxIterations) {
          t0 = performance.now();
          await tmux.roundTrip();
          tmuxMs = performance.now() - t0;
        }
        if (i < warmup) continue;
        engine.push(engineMs);
        floor.push(bareMs);
        if (!Number.isNaN(tmuxMs)) viaTmux.push(tmuxMs);
      }
      const baselines: Series[] = [{ name: 'bare node-pty + prompt marker', samples: floor }];
      if (tmux) baselines.push({ name: 'tmux send-keys/capture-pane', samples: viaTmux });
      return [{ row: 'roundtrip.engine.echo', samples: engine, baselines, note: notes.join('; ') || undefined }];
    } finally {
      await scope.closeAll();
      await bare?.close();
      await tmux?.close();
    }
  },
};
