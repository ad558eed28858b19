/**
 * Startup to a published prompt with clean startup files. Baselines: the bare shell spawned on
 * node-pty, to its first output (bash, zsh: that is their prompt) or, for pwsh, until its prompt
 * text `PS …> ` shows (pwsh prints mode switches long before; its line editor asks for the
 * cursor position before drawing the prompt, so the baseline answers that as a terminal would).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type ResolvedShell, resolveShell, which } from '../../src/main/shells/resolve.js';
import { TerminalSession } from '../../src/main/terminal/session/session.js';
import { spawnUntil, type SpawnUntilOptions } from '../lib/bare-pty.js';
import { agentOptions } from '../lib/engine.js';
import type { Figure, Measurement } from '../lib/types.js';

interface ShellCase {
  name: 'bash' | 'zsh' | 'pwsh';
  locate(): string | null;
  /** The bare baseline: the same shell with no startup files at all. */
  bareArgs: string[];
  /** When the bare baseline counts as started (default: its first output). */
  bareUntil: SpawnUntilOptions;
  /** The baseline's name in the table. */
  bareName: string;
  full: number;
  quick: number;
}

function findPwsh(): string | null {
  const dotnet = join(homedir(), '.dotnet', 'tools', 'pwsh');
  return which('pwsh') ?? (existsSync(dotnet) ? dotnet : null);
}

const cases: ShellCase[] = [
  {
    name: 'bash',
    locate: () => which('bash'),
    bareArgs: ['--noprofile', '--norc', '-i'],
    bareUntil: {},
    bareName: 'bare node-pty bash to first output',
    full: 20,
    quick: 3,
  },
  { name: 'zsh', locate: () => which('zsh'), bareArgs: ['-f', '-i'], bareUntil: {}, bareName: 'bare node-pty zsh to first output', full: 20, quick: 3 },
  {
    name: 'pwsh',
    locate: findPwsh,
    bareArgs: ['-NoLogo', '-NoProfile'],
    bareUntil: { until: /PS [^\n]*> /, answerCpr: true },
    bareName: 'bare node-pty pwsh -NoLogo -NoProfile to its prompt',
    full: 5,
    quick: 1,
  },
];

export const startupFigure: Figure = {
  id: 'startup',
  title: 'Startup to a published prompt (clean startup files)',
  rows: [
    {
      name: 'startup.bash',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 150 },
      description: 'TerminalSession.start (agent, clean) until the verified prompt; baseline: bash --noprofile --norc -i to first output',
    },
    {
      name: 'startup.zsh',
      unit: 'ms',
      target: null,
      description: 'TerminalSession.start (agent, clean) until the verified prompt; baseline: zsh -f -i to first output',
    },
    {
      name: 'startup.pwsh',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 1500 },
      description: 'TerminalSession.start (agent, clean) until the verified prompt; baseline: pwsh -NoLogo -NoProfile until `PS …> ` shows (CPR answered)',
    },
  ],
  async run(opts) {
    const out: Measurement[] = [];
    for (const shellCase of cases) {
      const row = `startup.${shellCase.name}`;
      const path = shellCase.locate();
      if (!path) {
        out.push({ row, status: 'skipped', note: `${shellCase.name} is not installed` });
        continue;
      }
      try {
        let resolved: ResolvedShell = resolveShell(path);
        const engineReady = resolved.dialect !== null && resolved.dialect.integration !== 'none';
        const iterations = opts.pick(shellCase.full, shellCase.quick);
        const engine: number[] = [];
        const bare: number[] = [];
        // One untimed start of each, so caches (and pwsh's first-run setup in the private HOME) are
        // warm. Quick mode skips it: it only shows that the figure runs, and pwsh starts are slow.
        if (!opts.quick) {
          await spawnUntil(path, shellCase.bareArgs, opts.home, shellCase.bareUntil);
          if (engineReady) await (await TerminalSession.start({ ...agentOptions(opts.home), shell: resolved })).close();
        }
        for (let i = 0; i < iterations; i++) {
          bare.push(await spawnUntil(path, shellCase.bareArgs, opts.home, shellCase.bareUntil));
          if (!engineReady) continue;
          resolved = resolveShell(path);
          const t0 = performance.now();
          const session = await TerminalSession.start({ ...agentOptions(opts.home), shell: resolved });
          engine.push(performance.now() - t0);
          await session.close();
        }
        const baselines = [{ name: shellCase.bareName, samples: bare }];
        if (engineReady) out.push({ row, samples: engine, baselines });
        else
          out.push({
            row,
            status: 'pending',
            baselines,
            note: `no engine dialect for ${shellCase.name} yet (resolveShell().dialect is null); baseline measured`,
          });
      } catch (error) {
        out.push({ row, error: (error as Error).message });
      }
    }
    return out;
  },
};
