/**
 * terminal_read shows what arrived before the call, however long the parser takes: the wait is
 * for the parser's progress, not a time. The clock here fires every timer at once (a loaded
 * machine, where a short time bound has passed before xterm.js parses), and the emulator is real.
 */
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/main/clock.js';
import { Emulator } from '../../src/main/terminal/emulator/emulator.js';
import { StreamHistory } from '../../src/main/terminal/emulator/history.js';
import { readTerminal, type ReadSource } from '../../src/main/terminal/emulator/screen-read.js';

/**
 * Every timer of up to a second due at once: a catch-up bound a read could choose (the old one
 * was 200 ms) has passed before xterm.js parses. Longer ones (a safety bound) run as set.
 */
const hurriedClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms <= 1000 ? 0 : ms),
  clearTimeout: (handle) => clearTimeout(handle),
};

function source(emulator: Emulator): ReadSource {
  const history = new StreamHistory(1 << 20);
  return {
    clock: hurriedClock,
    emulator,
    history,
    rows: () => 10,
    decodeCursor: () => 0,
    cursor: () => 'c0',
    status: () => 'idle',
    agentSlice: (from) => history.slice(from),
    agentBuffer: () => Promise.resolve(null),
  };
}

describe('terminal_read and the parser', () => {
  it('reads the lines that arrived before the call, even when every time bound has passed', async () => {
    const emulator = new Emulator({ cols: 40, rows: 10, scrollback: 100, onReply: () => {} });
    try {
      let text = '';
      for (let i = 0; i < 200; i++) text += `line-${i} ${'x'.repeat(20)}\r\n`;
      emulator.feed(`${text}$ echo done-marker\r\ndone-marker\r\n$ `);
      const read = await readTerminal(source(emulator), { count: 3 });
      expect(read.text.split('\n')).toEqual(['$ echo done-marker', 'done-marker', '$']);
    } finally {
      emulator.dispose();
    }
  });
});
