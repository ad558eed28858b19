import type { LastCommand } from '../../../shared/types.js';

/**
 * The last command that ended at a prompt, for the person's view (`TerminalInfo.lastCommand`).
 * Its line comes from the end marker, else its start marker, else bash's later line marker.
 */
export class LastCommandTracker {
  private started: { seq: number; command: string | null } | null = null;
  private last: (LastCommand & { seq: number }) | null = null;

  constructor(private readonly wallNow: () => Date = () => new Date()) {}

  get value(): LastCommand | null {
    if (!this.last) return null;
    const { seq: _seq, ...value } = this.last;
    return value;
  }

  get exitCode(): number | null {
    return this.last?.exitCode ?? null;
  }

  start(seq: number, command: string | null): void {
    this.started = { seq, command };
  }

  end(seq: number, exitCode: number | null, command: string | null): void {
    const fromStart = this.started?.seq === seq ? this.started.command : null;
    this.last = { seq, command: command ?? fromStart, exitCode, finishedAt: this.wallNow().toISOString() };
  }

  /** bash names a finished command after its end marker. */
  line(seq: number, command: string): void {
    if (this.last?.seq === seq && this.last.command === null) this.last = { ...this.last, command };
  }
}
