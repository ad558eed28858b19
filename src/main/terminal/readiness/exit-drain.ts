/**
 * The shell's exit, drained: output can lag the PTY's exit event, so `exited` is reported once
 * the output has been quiet for 25 ms, and at most 500 ms after the exit.
 */
import type { Clock } from '../../clock.js';

const exitDrainQuietMs = 25;
const exitDrainMaxMs = 500;

export class ExitDrain {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private startedAt = 0;

  constructor(
    private readonly clock: Clock,
    private readonly onDrained: () => void,
  ) {}

  start(): void {
    this.startedAt = this.clock.now();
    this.rearm();
  }

  /** Output while draining: wait for quiet again, within the bound. */
  activity(): void {
    if (this.timer) this.rearm();
  }

  /** Drained (by the timer or a close): later output no longer rearms it. */
  done(): void {
    this.timer = null;
  }

  private rearm(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    const left = exitDrainMaxMs - (this.clock.now() - this.startedAt);
    this.timer = this.clock.setTimeout(() => this.onDrained(), Math.max(0, Math.min(exitDrainQuietMs, left)));
  }
}
