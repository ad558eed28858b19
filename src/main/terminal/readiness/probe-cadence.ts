/**
 * When a send's probe looks next (probe.ts does the looking). Nothing in sight: back off from
 * 10 ms to 100 ms. A reader that only lacks its quiet period: look the moment it has it, not a
 * back-off step later. Evidence seen once: confirm on a second look soon after. Any output in
 * between still voids it (session.ts clears the candidate on output), and the second look
 * comes only after the PTY delivered what it held at the first (`PtyProcess.sync`), so output
 * written just before the program blocked cannot lose the race to it.
 */
export const probeFirstIntervalMs = 10;
export const probeMaxIntervalMs = 100;
/** The least time between two looks, a floor on their cost (after the PTY sync for a confirming one). */
export const confirmGapMs = 2;
/** Early looks per reset: a reader under a steady trickle of output must not be looked at every few ms. */
export const earlyLooksPerReset = 3;

export interface ProbeRound {
  /** A look found evidence that awaits its confirming look. */
  confirming: boolean;
  /** The soonest a reader seen in this round passes its quiet period (probe.ts `quietDueMs`). */
  quietDueMs: number | null;
}

export class ProbeCadence {
  private intervalMs = probeFirstIntervalMs;
  private earlyLeft = earlyLooksPerReset;

  /** A write or a command start: look soon again. */
  reset(): void {
    this.intervalMs = probeFirstIntervalMs;
    this.earlyLeft = earlyLooksPerReset;
  }

  /** The delay before the next look. */
  get nextMs(): number {
    return this.intervalMs;
  }

  /** After a round of looks: the delay before the next one. */
  after(round: ProbeRound): number {
    if (round.confirming) {
      this.intervalMs = probeFirstIntervalMs;
      return confirmGapMs;
    }
    const backoff = Math.min(probeMaxIntervalMs, Math.ceil(this.intervalMs * 1.5));
    this.intervalMs = backoff;
    if (round.quietDueMs === null || round.quietDueMs >= backoff || this.earlyLeft === 0) return backoff;
    this.earlyLeft--;
    return Math.max(confirmGapMs, Math.ceil(round.quietDueMs));
  }
}
