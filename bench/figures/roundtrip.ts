/**
 * Engine round trip for `echo`: session.send to `done`, against bare node-pty and tmux; and the
 * same in zsh, whose integration prints its prompt records without a subshell, so the zsh row
 * is the engine's own cost while bash's also holds one fork per prompt (the history line and the
 * redirect report's lists, tandem.bash). The second baseline of the zsh row is that fork alone:
 * a bare bash whose PROMPT_COMMAND runs the same subshell before its marker.
 */
import { which } from '../../src/main/shells/resolve.js';
import { BareMarkerShell } from '../lib/bare-pty.js';
import { EchoBaselines } from '../lib/echo-baselines.js';
import { expectStatus, SessionScope } from '../lib/engine.js';
import type { Measurement, Series } from '../lib/types.js';
import type { Figure } from '../lib/types.js';

/** What tandem.bash's precmd runs in its one subshell per prompt. */
const bashPromptFork = `__f=$(HISTTIMEFORMAT='' builtin history 1; builtin printf '\\x1f'; builtin compgen -b; builtin printf '\\x1f'; builtin compgen -A function)`;

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
    {
      name: 'roundtrip.engine.echo.zsh',
      unit: 'ms',
      target: { metric: 'ratio', op: '<=', value: 2 },
      description: 'the same in zsh (no fork per prompt): the engine against bare node-pty with a marker',
    },
  ],
  async run(opts) {
    const iterations = opts.pick(200, 20);
    const warmup = opts.pick(10, 3);
    const scope = new SessionScope(opts.home);
    let baselines: EchoBaselines | null = null;
    let forking: BareMarkerShell | null = null;
    const notes: string[] = [];
    const forkName = 'bare bash + marker after tandem.bash’s prompt subshell';
    try {
      const session = await scope.open('bash');
      baselines = await EchoBaselines.start(opts.home, notes, Math.min(iterations, opts.pick(100, 10)));
      forking = await BareMarkerShell.start(opts.home, 120, 30, bashPromptFork);
      const engine: number[] = [];
      const forkWithBash: number[] = [];
      for (let i = 0; i < warmup + iterations; i++) {
        const engineMs = await echoOnce(session);
        await baselines.measure(i, warmup);
        const forkMs = await timed(() => forking!.roundTrip('echo hi'));
        if (i < warmup) continue;
        engine.push(engineMs);
        forkWithBash.push(forkMs);
      }
      const out: Measurement[] = [
        {
          row: 'roundtrip.engine.echo',
          samples: engine,
          baselines: [...baselines.series(), { name: forkName, samples: forkWithBash }],
          note: notes.join('; ') || undefined,
        },
      ];
      if (!which('zsh')) {
        out.push({ row: 'roundtrip.engine.echo.zsh', status: 'skipped', note: 'zsh is not installed' });
        return out;
      }
      await scope.close(session);
      const zsh = await scope.open('zsh');
      const viaZsh: number[] = [];
      const bare: number[] = [];
      const fork: number[] = [];
      for (let i = 0; i < warmup + iterations; i++) {
        const zshMs = await echoOnce(zsh);
        const bareMs = await timed(() => baselines!.bareShell.roundTrip('echo hi'));
        const forkMs = await timed(() => forking!.roundTrip('echo hi'));
        if (i < warmup) continue;
        viaZsh.push(zshMs);
        bare.push(bareMs);
        fork.push(forkMs);
      }
      const series: Series[] = [
        { name: 'bare node-pty + prompt marker', samples: bare },
        { name: forkName, samples: fork },
      ];
      out.push({ row: 'roundtrip.engine.echo.zsh', samples: viaZsh, baselines: series });
      return out;
    } finally {
      await Promise.allSettled([scope.closeAll(), baselines?.close(), forking?.close()]);
    }
  },
};

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

async function echoOnce(session: Awaited<ReturnType<SessionScope['open']>>): Promise<number> {
  let result: Awaited<ReturnType<typeof session.send>> | null = null;
  const ms = await timed(async () => (result = await session.send({ text: 'echo hi' })));
  expectStatus(result!, 'done', 'echo');
  if (result!.output !== 'hi') throw new Error(`echo printed ${JSON.stringify(result!.output)}`);
  return ms;
}
