import type { WireError } from '../../../shared/contract';

/** A contract error as the UI sees it: `code` from the contract, and one sentence for the person. */
export class TandemCallError extends Error {
  readonly code: WireError['code'];

  constructor(code: WireError['code'], message: string) {
    super(message);
    this.name = 'TandemCallError';
    this.code = code;
  }
}
