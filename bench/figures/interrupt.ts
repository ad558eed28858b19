/**
 * Interrupt under a `yes` flood: interrupt() until the send's wait reports `done`. Nothing is
 * typed after the send, so Ctrl+C goes as a key first and the modes are read after it, for the
 * escalation (interrupt.ts). Each round also interrupts with the modes read by one `stty` per
 * reading (the path before the kept tcgetattr reader, pty/termios.ts; its process start blocks
 * the main thread), in alternating order, so the two compare in one run.
 */
import { closeTtyModeReader, setTtyModeSource, type TtyModeSource } from '../../src/main/pty/termios.js';
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
      target: { metric: 'median', op: '<=', value: 10 },
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
      const viaStty: number[] = [];
      const sttyCalls: number[] = [];
      const floor: number[] = [];
      const round = async (modes: TtyModeSource, total: number[], call: number[]): Promise<void> => {
        setTtyModeSource(modes);
        const sent = await session.send({ text: 'yes', waitMs: floodMs });
        expectStatus(sent, 'running', 'yes');
        const t0 = performance.now();
        const waited = session.wait({ since: sent.cursor, waitMs: 10_000 });
        await session.interrupt();
        call.push(performance.now() - t0);
        const result = await waited;
        total.push(performance.now() - t0);
        expectStatus(result, 'done', 'interrupted yes');
        // Let the emulator finish the backlog so the next round starts from a quiet terminal.
        await session.drained();
        expectStatus(await session.send({ text: 'true' }), 'done', 'sync');
      };
      for (let i = 0; i < iterations; i++) {
        if (i % 2 === 0) {
          await round('reader', engine, calls);
          await round('stty', viaStty, sttyCalls);
        } else {
          await round('stty', viaStty, sttyCalls);
          await round('reader', engine, calls);
        }
        setTtyModeSource('reader');

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
      const sttyCall = summarize(sttyCalls);
      return [
        {
          row: 'interrupt.yes-flood',
          samples: engine,
          baselines: [
            { name: 'bare node-pty: SIGINT to fg group', samples: floor },
            { name: 'engine, modes by one stty per reading', samples: viaStty },
          ],
          note:
            call && sttyCall
              ? `the interrupt() call itself (the key goes first; it returns once the modes chose the escalation): median ${call.median.toFixed(1)} ms (with stty ${sttyCall.median.toFixed(1)} ms)`
              : undefined,
        },
      ];
    } finally {
      setTtyModeSource('reader');
      closeTtyModeReader();
      await scope.closeAll();
      await bare?.close();
    }
  },
};
