import { type Clock, systemClock } from '../../src/main/clock.js';

/**
 * The real clock, watched: a test can wait until every timer set during some step has fired and
 * its callback (an async one included) has finished, so "nothing happened after X" is asserted
 * once the code's own decision about X was taken, never after a guessed sleep (issue 22). A
 * loaded machine only makes such a test slower.
 */
export class WatchedClock implements Clock {
  private readonly open = new Map<ReturnType<typeof setTimeout>, { step: number; done: Promise<void>; finish: () => void }>();
  private step = 0;

  now(): number {
    return systemClock.now();
  }

  setTimeout(fn: () => void, ms: number): ReturnType<typeof setTimeout> {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const handle = systemClock.setTimeout(() => {
      // A callback may be async: its decision is taken when its promise settles.
      const result = (fn as () => unknown)();
      void Promise.resolve(result)
        .catch(() => undefined)
        .finally(() => {
          this.open.delete(handle);
          finish();
        });
    }, ms);
    this.open.set(handle, { step: this.step, done, finish });
    return handle;
  }

  clearTimeout(handle: ReturnType<typeof setTimeout>): void {
    systemClock.clearTimeout(handle);
    this.open.get(handle)?.finish();
    this.open.delete(handle);
  }

  /** Runs `action`; resolves, after it, once every timer it set has fired (or been cleared) and finished. */
  async timersOf(action: () => Promise<void>): Promise<void> {
    const step = ++this.step;
    await action();
    this.step += 1;
    const set = [...this.open.values()].filter((timer) => timer.step === step).map((timer) => timer.done);
    await Promise.all(set);
  }
}
