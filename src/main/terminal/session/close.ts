/** Closing a terminal: one teardown of its process tree at a time (retried while processes are left), and who closed it. */
import type { ClosedBy } from '../../../shared/types.js';
import type { PtyPlatform } from '../../pty/platform.js';
import type { PtyProcess } from '../../pty/pump.js';
import { type Clock, waitFor } from '../../clock.js';
import type { CloseResult } from './session-types.js';

/** The parts of a session a close tears down. */
export interface CloseTarget {
  readonly id: string;
  readonly platform: PtyPlatform;
  readonly clock: Clock;
  readonly pty: PtyProcess;
  ptyExited(): boolean;
  /** Ends the exit drain now unless the terminal is exited already. */
  finishExit(): void;
  /** Frees the emulator and the terminal's files: only once no process of it is left. */
  release(): void;
}

export class Closing {
  private closing: Promise<CloseResult> | null = null;
  /** Who closed the terminal, when it did not exit by itself. */
  private closer: ClosedBy = null;

  constructor(private readonly target: CloseTarget) {}

  /** A close is under way (or done without orphans). */
  get pending(): boolean {
    return this.closing !== null;
  }

  get closedBy(): ClosedBy {
    return this.closer;
  }

  /** Tears the whole process tree down; a failed close can be retried. `by` is told to waiters. */
  close(by: ClosedBy): Promise<CloseResult> {
    if (!this.target.ptyExited()) this.closer ??= by;
    this.closing ??= this.teardown().then((result) => {
      if (result.orphans.length > 0) this.closing = null;
      return result;
    });
    return this.closing;
  }

  private async teardown(): Promise<CloseResult> {
    const { id, platform, clock, pty } = this.target;
    // The pid is read now, not at spawn: on Windows it is known only once ConPTY connected.
    const { orphans } = await platform.teardown({ rootPid: pty.pid, rootCreated: pty.created, terminalId: id, clock });
    if (!this.target.ptyExited()) {
      try {
        pty.kill();
      } catch {
        // Already gone.
      }
    }
    if (!this.target.ptyExited()) {
      await waitFor(clock, { ms: 1000, until: (met) => pty.onExit(() => met()) });
    }
    this.target.finishExit();
    if (orphans.length === 0) this.target.release();
    return { closed: orphans.length === 0, orphans };
  }
}
