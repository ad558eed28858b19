/**
 * Engine round trip for `echo`: session.send to `done`, against bare node-pty and tmux; and the
 * same in zsh against a bare zsh. tandem.bash reads its prompt's lists back from a scratch file
 * (no fork); the third baseline of the bash row is a bare bash whose PROMPT_COMMAND forks the
 * subshell it used before, for scale. `back to back` rows send with nothing between the sends,
 * as an agent's sequence of commands does: work a prompt leaves behind (a fork) shows there and
 * is hidden in the interleaved rows, where the baselines run between the engine's sends.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { which } from '../../src/main/shells/resolve.js';
import { BareMarkerShell } from '../lib/bare-pty.js';
import { EchoBaselines } from '../lib/echo-baselines.js';
import { expectStatus, SessionScope } from '../lib/engine.js';
import type { Measurement, Series } from '../lib/types.js';
import type { Figure } from '../lib/types.js';

/** What tandem.bash's precmd ran in one subshell per prompt before the scratch file. */
const bashPromptFork = `__f=$(HISTTIMEFORMAT='' builtin history 1; builtin printf '\\x1f'; builtin compgen -b; builtin printf '\\x1f'; builtin compgen -A function)`;

/** How many functions the person's startup files define in the person-startup row. */
const personFunctions = 150;

export const roundtripFigure: Figure = {
  id: 'roundtrip',
  title: 'Engine round trip for echo',
  rows: [
    {
      name: 'roundtrip.engine.echo',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 1 },
      description: 'session.send({text: "echo hi"}) until done (bash, clean startup files), the baselines run between sends',
    },
    {
      name: 'roundtrip.engine.echo.back-to-back',
      unit: 'ms',
      target: { metric: 'ratio', op: '<=', value: 2 },
      description: 'the same sent back to back (blocks of 10, each followed by 10 on the bare shell): the engine against bare node-pty with a marker',
    },
    {
      name: 'roundtrip.engine.echo.person-startup',
      unit: 'ms',
      target: { metric: 'ratio', op: '<=', value: 2 },
      description: `the same back to back in bash with the person's startup files: ${personFunctions} functions (bash-completion defines more) and a prompt hook (zoxide's kind), against a bare bash running the same hook`,
    },
    {
      name: 'roundtrip.engine.echo.zsh',
      unit: 'ms',
      target: { metric: 'ratio', op: '<=', value: 2 },
      description: 'the same in zsh, back to back: the engine against a bare zsh with a marker',
    },
  ],
  async run(opts) {
    const iterations = opts.pick(200, 20);
    const warmup = opts.pick(10, 3);
    const scope = new SessionScope(opts.home);
    let baselines: EchoBaselines | null = null;
    let forking: BareMarkerShell | null = null;
    let bareZsh: BareMarkerShell | null = null;
    const notes: string[] = [];
    const forkName = 'bare bash + marker after the prompt subshell tandem.bash ran before';
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
      const bare = baselines.bareShell;
      const inBlocks = await backToBack(
        iterations,
        warmup,
        () => echoOnce(session),
        () => timed(() => bare.roundTrip('echo hi')),
      );
      const out: Measurement[] = [
        {
          row: 'roundtrip.engine.echo',
          samples: engine,
          baselines: [...baselines.series(), { name: forkName, samples: forkWithBash }],
          note: notes.join('; ') || undefined,
        },
        {
          row: 'roundtrip.engine.echo.back-to-back',
          samples: inBlocks.engine,
          baselines: [{ name: 'bare node-pty + prompt marker, back to back', samples: inBlocks.bare }],
        },
      ];
      await scope.close(session);
      const person = await personStartup(opts.home, iterations, warmup);
      out.push(person);
      if (!which('zsh')) {
        out.push({ row: 'roundtrip.engine.echo.zsh', status: 'skipped', note: 'zsh is not installed' });
        return out;
      }
      const zsh = await scope.open('zsh');
      bareZsh = await BareMarkerShell.start(opts.home, 120, 30, '', 'zsh');
      const zshBlocks = await backToBack(
        iterations,
        warmup,
        () => echoOnce(zsh),
        () => timed(() => bareZsh!.roundTrip('echo hi')),
      );
      const series: Series[] = [{ name: 'bare zsh + prompt marker, back to back', samples: zshBlocks.bare }];
      out.push({ row: 'roundtrip.engine.echo.zsh', samples: zshBlocks.engine, baselines: series });
      return out;
    } finally {
      await Promise.allSettled([scope.closeAll(), baselines?.close(), forking?.close(), bareZsh?.close()]);
    }
  },
};

/**
 * An agent's bash with the person's startup files: many functions (the prompt lists them for the
 * redirect report) and a PROMPT_COMMAND hook (the credential scrub runs around it).
 */
async function personStartup(home: string, iterations: number, warmup: number): Promise<Measurement> {
  const personHome = mkdtempSync(join(home, 'person-'));
  const functions = Array.from({ length: personFunctions }, (_, i) => `_comp_helper_${i}() { :; }`).join('\n');
  writeFileSync(join(personHome, '.bashrc'), `${functions}\n__person_hook() { :; }\nPROMPT_COMMAND=__person_hook\n`);
  const scope = new SessionScope(personHome);
  let bare: BareMarkerShell | null = null;
  try {
    const session = await scope.open('bash', { startupFiles: 'user' });
    bare = await BareMarkerShell.start(personHome, 120, 30, '__person_hook() { :; }; __person_hook');
    const blocks = await backToBack(
      iterations,
      warmup,
      () => echoOnce(session),
      () => timed(() => bare!.roundTrip('echo hi')),
    );
    return {
      row: 'roundtrip.engine.echo.person-startup',
      samples: blocks.engine,
      baselines: [{ name: 'bare node-pty + the same prompt hook + marker, back to back', samples: blocks.bare }],
    };
  } finally {
    await Promise.allSettled([scope.closeAll(), bare?.close()]);
  }
}

/** Blocks of 10 sends back to back on each side in turn, so drift on a shared machine hits both alike. */
async function backToBack(iterations: number, warmup: number, engine: () => Promise<number>, bare: () => Promise<number>) {
  const out = { engine: [] as number[], bare: [] as number[] };
  for (let done = -warmup; done < iterations; done += 10) {
    const keep = done >= 0;
    for (let i = 0; i < 10; i++) {
      const ms = await engine();
      if (keep) out.engine.push(ms);
    }
    for (let i = 0; i < 10; i++) {
      const ms = await bare();
      if (keep) out.bare.push(ms);
    }
  }
  return out;
}

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
