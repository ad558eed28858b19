/** Interrupt under a `yes` flood: interrupt() until the send's wait reports `done`. */
import { BareMarkerShell } from '../lib/bare-pty.js';
import { expectStatus, SessionScope } from '../lib/engine.js';
import { foregroundGroup, sleep } from '../lib/procs.js';
import { summarize } from '../lib/stats.js';
import type { Figure } from '../lib/types.js';

const floodMs = 30;

export const interruptFigure: Figure = {
  id: 'interrupt',
  title: 'Interrupt under a yes flood',
  rows: [
    {
      name: 'interrupt.yes-flood',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 50 },
      description: `send "yes" (returns running after ${floodMs} ms), then interrupt() + wait() until done`,
    },
  ],
  async run(opts) {
    const iterations = opts.pick(30, 3);
    const scope = new SessionScope(opts.home);
    let bare: BareMarkerShell | null = null;
    try {
      const session = await scope.open('bash');
      bare = await BareMarkerShell.start(opts.home);
      const engine: number[] = [];
      const calls: number[] = [];
      const floor: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const sent = await session.send({ text: 'yes', waitMs: floodMs });
        expectStatus(sent, 'running', 'yes');
        const t0 = performance.now();
        const waited = session.wait({ since: sent.cursor, waitMs: 10_000 });
        await session.interrupt();
        calls.push(performance.now() - t0);
        const result = await waited;
        engine.push(performance.now() - t0);
        expectStatus(result, 'done', 'interrupted yes');
        // Let the emulator finish the backlog so the next round starts from a quiet terminal.
        await session.drained();
        expectStatus(await session.send({ text: 'true' }), 'done', 'sync');

        // Baseline: the same flood on bare node-pty; SIGINT to the foreground group, wait for the marker.
        const marker = bare.expectMarker(10_000);
        const before = bare.received;
        bare.write('yes\r');
        const deadline = performance.now() + 5000;
        let fg = foregroundGroup(bare.pid);
        while (bare.received - before < 64 * 1024 || !fg || fg === bare.pid) {
          if (performance.now() > deadline) throw new Error('bare bash: the yes flood did not start');
          await sleep(5);
          fg = foregroundGroup(bare.pid);
        }
        await sleep(Math.max(0, floodMs - 5));
        const b0 = performance.now();
        process.kill(-fg, 'SIGINT');
        await marker;
        floor.push(performance.now() - b0);
        await bare.roundTrip('true');
      }
      const call = summarize(calls);
      return [
        {
          row: 'interrupt.yes-flood',
          samples: engine,
          baselines: [{ name: 'bare node-pty: SIGINT to fg group', samples: floor }],
          note: call ? `the interrupt() call itself: median ${call.median.toFixed(1)} ms, the rest is until the wait settles` : undefined,
        },
      ];
    } finally {
      await scope.closeAll();
      await bare?.close();
    }
  },
};
