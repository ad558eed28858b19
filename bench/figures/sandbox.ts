/**
 * What confinement costs: startup of a confined bash (bubblewrap, workspace-write, network off,
 * the agent's own home, the workspace a git repository inside the home, so its `.git` is
 * protected) against an unconfined one in the same workspace, started alternately in the same
 * run, and the `echo` round trip in each. Skipped where bubblewrap cannot run.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertSandboxAvailable } from '../../src/main/sandbox/availability.js';
import type { SandboxRequest } from '../../src/main/sandbox/launch.js';
import { TerminalSession } from '../../src/main/terminal/session.js';
import { agentOptions, expectStatus, SessionScope } from '../lib/engine.js';
import type { Figure, Measurement } from '../lib/types.js';

const rows = ['sandbox.startup.bash', 'sandbox.startup.overhead', 'sandbox.roundtrip.echo'];

export const sandboxFigure: Figure = {
  id: 'sandbox',
  title: 'Confined agent terminals (bubblewrap) against unconfined ones',
  rows: [
    {
      name: 'sandbox.startup.bash',
      unit: 'ms',
      target: null,
      description: 'TerminalSession.start of a confined bash (workspace-write, network off) to its verified prompt; baseline: the same unconfined',
    },
    {
      name: 'sandbox.startup.overhead',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 30 },
      description: 'confined minus unconfined startup, paired start by start',
    },
    {
      name: 'sandbox.roundtrip.echo',
      unit: 'ms',
      target: { metric: 'ratio', op: '<=', value: 1.1 },
      description: 'session.send({text: "echo hi"}) until done in a confined bash; baseline: the same unconfined',
    },
  ],
  async run(opts) {
    try {
      assertSandboxAvailable(false);
    } catch (error) {
      return rows.map((row): Measurement => ({ row, status: 'skipped', note: (error as Error).message }));
    }
    const stateDir = mkdtempSync(join(tmpdir(), 'tandem-bench-sandbox-'));
    const sandbox: SandboxRequest = { mode: 'workspace-write', network: false, agent: 'bench', stateDir, discoveryDir: join(stateDir, 'discovery') };
    const scope = new SessionScope(opts.home);
    // A workspace inside the home: only then does the agent get its own home in place of it.
    const workspace = join(opts.home, 'sandbox-project');
    mkdirSync(workspace, { recursive: true });
    execFileSync('git', ['init', '-q', workspace]);
    try {
      const starts = opts.pick(20, 3);
      const confined: number[] = [];
      const plain: number[] = [];
      const overhead: number[] = [];
      // One untimed start of each warms caches and the one-time availability probe.
      const timedStart = async (extra: Parameters<typeof agentOptions>[2]) => {
        const t0 = performance.now();
        const session = await TerminalSession.start(agentOptions(opts.home, 'bash', { cwd: workspace, ...extra }));
        const ms = performance.now() - t0;
        await session.close();
        return ms;
      };
      for (let i = -1; i < starts; i++) {
        // Alternate which goes first, so neither always starts on a machine the other just loaded.
        const plainFirst = i % 2 === 0;
        const plainMs = plainFirst ? await timedStart({}) : NaN;
        const confinedMs = await timedStart({ sandbox });
        const plainAfter = plainFirst ? plainMs : await timedStart({});
        if (i < 0) continue;
        plain.push(plainAfter);
        confined.push(confinedMs);
        overhead.push(confinedMs - plainAfter);
      }
      const iterations = opts.pick(200, 20);
      const warmup = opts.pick(10, 3);
      const inBox = await scope.open('bash', { sandbox, cwd: workspace });
      const outside = await scope.open('bash', { cwd: workspace });
      const echo = { confined: [] as number[], plain: [] as number[] };
      for (let i = 0; i < warmup + iterations; i++) {
        const pair = [[inBox, echo.confined], [outside, echo.plain]] as const;
        for (const [session, into] of i % 2 === 0 ? pair : [...pair].reverse()) {
          const t0 = performance.now();
          const result = expectStatus(await session.send({ text: 'echo hi' }), 'done', 'echo');
          const ms = performance.now() - t0;
          if (result.output !== 'hi') throw new Error(`echo printed ${JSON.stringify(result.output)}`);
          if (i >= warmup) into.push(ms);
        }
      }
      return [
        { row: 'sandbox.startup.bash', samples: confined, baselines: [{ name: 'unconfined bash', samples: plain }] },
        { row: 'sandbox.startup.overhead', samples: overhead },
        { row: 'sandbox.roundtrip.echo', samples: echo.confined, baselines: [{ name: 'unconfined bash', samples: echo.plain }] },
      ];
    } finally {
      await scope.closeAll();
      rmSync(stateDir, { recursive: true, force: true });
    }
  },
};
