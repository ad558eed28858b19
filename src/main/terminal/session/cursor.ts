/**
 * Output cursors: a terminal's id prefix, an offset into its marker-free output and, after a dot,
 * how many of its markers lie before the cursor (a cursor without it lies before the markers at
 * its offset).
 */
import { TandemError } from '../../../shared/errors.js';
import type { StreamPosition } from '../emulator/history.js';

export function encodeCursor(terminalId: string, position: StreamPosition): string {
  return `${terminalId.slice(0, 6)}.${position.offset}.${position.events}`;
}

/** The position of a cursor this terminal handed out; within `now`, the stream so far. */
export function decodeCursor(terminalId: string, cursor: string, now: StreamPosition, at: (offset: number) => StreamPosition): StreamPosition {
  const match = /^([\w-]{1,6})\.(\d+)(?:\.(\d+))?$/.exec(cursor);
  const offset = Number(match?.[2]);
  const events = match?.[3] === undefined ? null : Number(match[3]);
  if (!match || match[1] !== terminalId.slice(0, 6) || offset > now.offset || (events !== null && events > now.events)) {
    throw new TandemError('invalid_argument', `since "${cursor}" is not a cursor of this terminal; pass the cursor of an earlier result.`);
  }
  return events === null ? at(offset) : { offset, events };
}
