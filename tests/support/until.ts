/**
 * Waiting for a condition instead of sleeping a fixed time and reading state that may not be there
 * yet (issue 22). The bounds catch a hang, not slowness: they leave room for a machine with two CPU
 * burners running or a single core, and a condition that holds returns at once.
 */

/** The default bound of a wait: 30 s, room for a loaded machine. */
export const waitBoundMs = 30_000;

/** Resolves once `check` holds (polled every 20 ms); throws naming `what` (or what it returns then) after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, what: string | (() => string) = 'condition', timeoutMs = waitBoundMs): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The first value of `get` that `ok` accepts (polled every 25 ms); throws with the last value after `timeoutMs`. */
export async function waitFor<T>(get: () => T | Promise<T>, ok: (value: T) => boolean, timeoutMs = waitBoundMs): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await get();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
