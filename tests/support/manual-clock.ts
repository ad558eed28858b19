import type { Clock } from '../../src/main/clock.js';

/** A clock the test moves by hand: decisions that depend on time depend only on it. */
export class ManualClock implements Clock {
  private t = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private next = 1;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): ReturnType<typeof setTimeout> {
    const id = this.next++;
    this.timers.set(id, { at: this.t + ms, fn });
    return id as unknown as ReturnType<typeof setTimeout>;
  }
  clearTimeout(handle: ReturnType<typeof setTimeout>): void {
    this.timers.delete(handle as unknown as number);
  }
  /** Timers not yet fired or cleared: a race that forgot its timer leaves one here. */
  get pending(): number {
    return this.timers.size;
  }
  /** Moves time on, firing due timers in order (and letting their promises settle). */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, timer]) => timer.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
      for (let i = 0; i < 5; i++) await Promise.resolve();
    }
    this.t = end;
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
}
