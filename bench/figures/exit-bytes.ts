/**
 * Bytes at exit: `big-command; exit` in an engine terminal, one run at a time, while a
 * CPU-burning process competes for the cores. Every byte printed must reach the history.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { SessionScope } from '../lib/engine.js';
import type { Figure } from '../lib/types.js';

const printed = 3_000_000;

export const exitBytesFigure: Figure = {
  id: 'exit-bytes',
  title: 'Output kept when a shell exits right after a 3 MB print (under CPU load)',
  rows: [
    {
      name: 'exit.bytes-kept',
      unit: '%',
      target: { metric: 'median', op: '>=', value: 100 },
      description: `runs in which all ${printed / 1e6} MB of \`head -c ${printed} /dev/zero | tr '\\0' x; exit\` reached the terminal's history, with a busy loop at nice 19 on the side`,
    },
  ],
  async run(opts) {
    const runs = opts.pick(50, 1);
    const scope = new SessionScope(opts.home);
    let burner: ChildProcess | null = null;
    const losses: number[] = [];
    const t0 = performance.now();
    try {
      burner = spawn('nice', ['-n', '19', 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' });
      for (let i = 0; i < runs; i++) {
        const session = await scope.open('bash');
        const from = session.streamOffset;
        const result = await session.send({ text: `head -c ${printed} /dev/zero | tr '\\0' x; exit`, waitMs: 30_000, maxOutputBytes: 1024 });
        if (result.status !== 'exited') throw new Error(`run ${i + 1}: expected exited, got ${result.status}`);
        // The runs of x the print made (the echoed command line has a few x of its own).
        const kept = (session.outputSince(from).match(/x{64,}/g) ?? []).join('').length;
        if (kept !== printed) losses.push(printed - kept);
        await scope.close(session);
      }
    } finally {
      if (burner && burner.exitCode === null && burner.signalCode === null) {
        // Waited for, not only signalled: until Node reaps it, the killed loop still stands in
        // /proc, where the bench's leftover check found it on a loaded machine.
        const gone = new Promise((resolve) => burner!.once('exit', resolve));
        burner.kill('SIGKILL');
        await gone;
      }
      await scope.closeAll();
    }
    const seconds = ((performance.now() - t0) / 1000).toFixed(0);
    return [
      {
        row: 'exit.bytes-kept',
        samples: [(100 * (runs - losses.length)) / runs],
        count: runs,
        note: `${runs} runs in ${seconds} s; ${losses.length === 0 ? 'none lost a byte' : `lost bytes per failing run: ${losses.join(', ')}`}`,
      },
    ];
  },
};
