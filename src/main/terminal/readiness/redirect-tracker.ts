/** The shell's reports of aliases, functions and PATH changes, and whether the last command's has come. */
import { type Clock, waitFor } from '../../clock.js';
import type { RedirectReport } from '../../shells/redirect-report.js';

export class RedirectTracker {
  private report: RedirectReport | null = null;
  private seq = -1;
  /** One per `fresh` call in flight, removed when it settles. */
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly clock: Clock,
    /** The sequence number of the last command that ended. */
    private readonly lastEndSeq: () => number,
  ) {}

  seen(seq: number, report: RedirectReport | null): void {
    this.seq = Math.max(this.seq, seq);
    if (report) this.report = report;
    for (const wake of [...this.waiters]) wake();
  }

  /** The last report; marked incomplete until the last command that ended has reported (bash reports just after its end marker). */
  get current(): RedirectReport | null {
    const report = this.report;
    return report && this.seq < this.lastEndSeq() ? { ...report, incomplete: true } : report;
  }

  /** The report for the last command, waiting up to `waitMs` for it. */
  async fresh(waitMs: number): Promise<RedirectReport | null> {
    if (!this.report || this.seq >= this.lastEndSeq()) return this.current;
    await waitFor(this.clock, {
      ms: waitMs,
      until: (met) => {
        const wake = () => {
          if (this.seq >= this.lastEndSeq()) met();
        };
        this.waiters.add(wake);
        return () => this.waiters.delete(wake);
      },
    });
    return this.current;
  }
}
