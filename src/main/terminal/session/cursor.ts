/** Output cursors: a terminal's id prefix and an offset into its marker-free output. */
import { TandemError } from '../../../shared/errors.js';

export function encodeCursor(terminalId: string, offset: number): string {
  return `${terminalId.slice(0, 6)}.${offset}`;
}

/** The offset of a cursor this terminal handed out; at most `maxOffset`, the output so far. */
export function decodeCursor(terminalId: string, cursor: string, maxOffset: number): number {
  const match = /^([\w-]{1,6})\.(\d+)$/.exec(cursor);
  if (!match || match[1] !== terminalId.slice(0, 6) || Number(match[2]) > maxOffset) {
    throw new TandemError('invalid_argument', `since "${cursor}" is not a cursor of this terminal; pass the cursor of an earlier result.`);
  }
  return Number(match[2]);
}
