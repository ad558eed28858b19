import { describe, expect, it } from 'vitest';
import { StreamHistory } from '../../src/main/terminal/emulator/history.js';
import { decodeCursor, encodeCursor } from '../../src/main/terminal/session/cursor.js';

const id = 'abcdef123';

/** A history with `one` printed, a command's end marker after it, then nothing. */
function historyWithEnd(): StreamHistory {
  const history = new StreamHistory(1 << 20);
  history.append('one\n');
  history.record({ kind: 'end', seq: 1, exitCode: 0, cwd: '/', command: 'echo one' }, 0);
  return history;
}

describe('output cursors', () => {
  it('tell a position before a marker from one after it at the same offset', () => {
    const history = historyWithEnd();
    const after = history.position;
    const before = { offset: after.offset, events: 0 };
    expect(history.eventsAfter(before).map((event) => event.marker.kind)).toEqual(['end']);
    expect(history.eventsAfter(after)).toEqual([]);
    const decode = (cursor: string) => decodeCursor(id, cursor, history.position, (offset) => history.positionAt(offset));
    expect(decode(encodeCursor(id, after))).toEqual(after);
    expect(decode(encodeCursor(id, before))).toEqual(before);
  });

  it('reads a cursor with only an offset as lying before the markers there', () => {
    const history = historyWithEnd();
    const decoded = decodeCursor(id, 'abcdef.4', history.position, (offset) => history.positionAt(offset));
    expect(decoded).toEqual({ offset: 4, events: 0 });
  });

  it('refuses cursors of another terminal or past the stream', () => {
    const history = historyWithEnd();
    const decode = (cursor: string) => decodeCursor(id, cursor, history.position, (offset) => history.positionAt(offset));
    for (const cursor of ['zzzzzz.1.0', 'abcdef.5.0', 'abcdef.4.2', 'abcdef.-1', 'abcdef.4.', 'abcdef', '', 'abcdef.4.1.1']) {
      expect(() => decode(cursor), cursor).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    }
  });
});
