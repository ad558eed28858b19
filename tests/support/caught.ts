import type { TandemError } from '../../src/shared/errors.js';

/** The error a call is refused with; fails the test if the call goes through. */
export async function caught(run: () => Promise<unknown>): Promise<TandemError> {
  try {
    await run();
  } catch (error) {
    return error as TandemError;
  }
  throw new Error('expected a refusal');
}
