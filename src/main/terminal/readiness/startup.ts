/**
 * Waiting for a new shell: a verified prompt for agent terminals, the first output for a
 * person's (whose integration then has until the same deadline to report, or is dropped).
 */
import { TandemError } from '../../../shared/errors.js';
import { type Clock, waitFor } from '../../clock.js';

export interface StartupTarget {
  readonly clock: Clock;
  readonly shellName: string;
  /** Called with true at the first prompt, false when the shell exits first. */
  onReady(waiter: (ok: boolean) => void): void;
  onOutput(listener: () => void): () => void;
  /** Still before the first prompt. */
  starting(): boolean;
  exitCode(): number | null;
  banner(): string;
  /** What the shell printed while starting (for the error of one that never got ready). */
  printed(): string;
  close(): Promise<unknown>;
  /** A person's terminal whose integration never reported by the deadline. */
  integrationTimedOut(): void;
}

export async function awaitStartup(
  target: StartupTarget,
  opts: { timeoutMs: number; firstOutputMs?: number; agent: boolean; signal?: AbortSignal },
): Promise<void> {
  const { timeoutMs, signal } = opts;
  // A person's terminal waits for the first output, then gives the integration `timeoutMs` more.
  const waitMs = opts.agent ? timeoutMs : (opts.firstOutputMs ?? timeoutMs);
  // Aborted while the PTY was being spawned.
  if (signal?.aborted) {
    await target.close();
    throw signal.reason;
  }
  const waited = await waitFor<'ready' | 'exited' | 'output'>(target.clock, {
    ms: waitMs,
    signal,
    until: (met) => {
      target.onReady((ok) => met(ok ? 'ready' : 'exited'));
      if (opts.agent) return;
      // A person's terminal opens on first output, whatever the startup files do.
      return target.onOutput(() => met('output'));
    },
  });
  const outcome = waited.kind === 'met' ? waited.value : waited.kind;
  if (outcome === 'ready' || outcome === 'output') {
    if (outcome === 'output' && target.starting()) {
      const timer = target.clock.setTimeout(() => target.integrationTimedOut(), timeoutMs);
      target.onReady(() => target.clock.clearTimeout(timer));
    }
    return;
  }
  if (outcome === 'exited') {
    throw new TandemError('exited', `The shell exited during startup (exit code ${target.exitCode()}): ${target.banner().slice(0, 200) || 'no output'}.`);
  }
  await target.close();
  if (outcome === 'aborted') throw signal?.reason ?? new Error('aborted');
  const lastLine = target.printed().split('\n').filter(Boolean).at(-1)?.slice(0, 300);
  throw new TandemError(
    'startup_timeout',
    opts.agent
      ? `The ${target.shellName} shell did not show a verified prompt within ${waitMs} ms; its startup files may block or replace the integration${lastLine ? ` (it last printed: ${lastLine})` : ''}.`
      : `The ${target.shellName} shell printed nothing within ${waitMs} ms; its startup files may block.`,
  );
}
