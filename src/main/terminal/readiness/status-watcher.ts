import type { Clock } from '../../clock.js';
import type { TtyModes } from '../../pty/termios.js';
import type { ProbeBaseline, WaitEvidence } from './probe.js';

/** Probe intervals while a command runs and is quiet: at most 4 looks a second, backing off to 1. */
export const watchFirstMs = 250;
export const watchMaxMs = 1000;
/**
 * Where a look starts a process (the ps evidence tier: one `ps` of about 17 ms CPU), quiet
 * commands are looked at every 5 s once backed off, so a terminal running `sleep` stays under
 * 0.5% of a core (bench: cpu.idle-running-terminal.ps). Sends have their own, faster looks.
 */
export const watchMaxMsSpawning = 5000;
/** Terminal modes are re-read (one stty run) at most this often for the same foreground job. */
export const modesMaxAgeMs = 5000;

export interface WatchTarget {
  clock: Clock;
  /** Taken when a command starts: shells that read the terminal in the background need proof of progress. */
  baseline(): ProbeBaseline | null;
  /** One look at the foreground job, `quietMs` after the last output or input. */
  probe(baseline: ProbeBaseline | null, quietMs: number): Promise<WaitEvidence | null>;
  /** Output so far: a look that saw output arrive meanwhile proves nothing. */
  offset(): number;
  /** The evidence changed: republish the terminal's status. */
  onChange(): void;
  /** The longest interval between looks once backed off (`watchMaxMs` unless a look is costly). */
  maxIntervalMs?: number;
}

/**
 * Keeps `waiting_input` current for a terminal whether or not a send is in flight, from the
 * same evidence sends use (probe.ts). It looks only while a command runs and output is quiet.
 */
export class StatusWatcher {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private intervalMs = watchFirstMs;
  private lastActivityAt: number;
  private evidence: WaitEvidence | null = null;
  private watching = false;
  private probing = false;
  private base: ProbeBaseline | null = null;

  constructor(private readonly target: WatchTarget) {
    this.lastActivityAt = target.clock.now();
  }

  /** What the running command waits with, or null (running, or not watched). */
  get waiting(): WaitEvidence | null {
    return this.watching ? this.evidence : null;
  }

  /** A command runs: look until `stop`. Idempotent. */
  start(): void {
    if (this.watching) return;
    this.watching = true;
    this.evidence = null;
    this.base = this.target.baseline();
    this.intervalMs = watchFirstMs;
    this.schedule(watchFirstMs);
  }

  /** Nothing runs any more (a prompt, exit). */
  stop(): void {
    this.watching = false;
    this.evidence = null;
    if (this.timer) this.target.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** A send settled on waiting evidence: the status says so at once. */
  adopt(evidence: WaitEvidence): void {
    if (!this.watching || this.evidence === evidence) return;
    this.evidence = evidence;
    this.target.onChange();
  }

  /** Output or input: evidence sampled before it is stale. Cheap: called for every chunk. */
  activity(): void {
    this.lastActivityAt = this.target.clock.now();
    if (!this.watching) return;
    if (this.evidence) {
      this.evidence = null;
      this.target.onChange();
    }
    if (this.intervalMs > watchFirstMs) {
      this.intervalMs = watchFirstMs;
      this.schedule(watchFirstMs);
    }
  }

  private schedule(ms: number): void {
    if (this.timer) this.target.clock.clearTimeout(this.timer);
    this.timer = this.target.clock.setTimeout(() => {
      this.timer = null;
      void this.look();
    }, ms);
  }

  private async look(): Promise<void> {
    if (!this.watching || this.probing) return;
    const quietMs = this.target.clock.now() - this.lastActivityAt;
    // Output still flows: look once it has been quiet for a first interval.
    if (quietMs < watchFirstMs) return this.schedule(watchFirstMs - quietMs);
    this.probing = true;
    const offset = this.target.offset();
    let evidence: WaitEvidence | null = null;
    try {
      evidence = await this.target.probe(this.base, quietMs);
    } finally {
      this.probing = false;
    }
    if (!this.watching) return;
    if (offset === this.target.offset() && evidence !== this.evidence) {
      this.evidence = evidence;
      this.target.onChange();
    }
    this.intervalMs = Math.min(this.target.maxIntervalMs ?? watchMaxMs, Math.round(this.intervalMs * 1.5));
    this.schedule(this.intervalMs);
  }
}

/**
 * Terminal modes for the watcher's looks, read again only when the foreground job changed or
 * the last reading is old: a quiet `sleep` must not cost one stty run a second.
 */
export function cachedModes(
  clock: Clock,
  foreground: () => number | null,
  read: (tty: string) => Promise<TtyModes | null>,
): (tty: string) => Promise<TtyModes | null> {
  let last: { key: string; at: number; modes: TtyModes | null } | null = null;
  return async (tty) => {
    const key = `${tty}:${foreground() ?? ''}`;
    const now = clock.now();
    if (last && last.key === key && now - last.at < modesMaxAgeMs) return last.modes;
    const modes = await read(tty);
    last = { key, at: now, modes };
    return modes;
  };
}
