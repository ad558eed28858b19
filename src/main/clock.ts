/** Time, injected wherever a decision depends on it. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): ReturnType<typeof setTimeout>;
  clearTimeout(handle: ReturnType<typeof setTimeout>): void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle),
};

export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}

/** How a `waitFor` ended: its condition met (with the value), its bound reached, or aborted. */
export type WaitOutcome<T> = { kind: 'met'; value: T } | { kind: 'timeout' } | { kind: 'aborted'; reason: unknown };

/** A condition to wait on: a promise, or a subscription that calls `met` and returns its unsubscribe. */
export type WaitCondition<T> = Promise<T> | ((met: (value: T) => void) => (() => void) | void);

/**
 * The one "timer + abort + wake" race: settles once, on whichever comes first, and always
 * removes its timer, its abort listener and its subscription. A rejected `until` rejects. `ms` of Infinity waits unbounded.
 */
export function waitFor<T = void>(clock: Clock, opts: { ms: number; signal?: AbortSignal; until?: WaitCondition<T> }): Promise<WaitOutcome<T>> {
  return new Promise((resolve, reject) => {
    let done = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    let unsubscribe: (() => void) | void;
    const settle = (): boolean => {
      if (done) return false;
      done = true;
      if (timer !== null) clock.clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (unsubscribe) unsubscribe();
      return true;
    };
    const finish = (outcome: WaitOutcome<T>) => {
      if (settle()) resolve(outcome);
    };
    const onAbort = () => finish({ kind: 'aborted', reason: opts.signal?.reason });
    if (opts.signal?.aborted) return onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (Number.isFinite(opts.ms)) timer = clock.setTimeout(() => finish({ kind: 'timeout' }), Math.max(0, opts.ms));
    const until = opts.until;
    if (typeof until === 'function') {
      unsubscribe = until((value) => finish({ kind: 'met', value }));
      // Met during the subscription itself: the unsubscribe arrived after finish ran.
      if (done && unsubscribe) unsubscribe();
    } else if (until) {
      until.then(
        (value) => finish({ kind: 'met', value }),
        (error: unknown) => {
          if (settle()) reject(error);
        },
      );
    }
  });
}
