import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/main/clock.js';
import type { TtyModes } from '../../src/main/pty/termios.js';
import { canonicalRoom, lineEditorPollMs, longestLine, untilRaw } from '../../src/main/terminal/session/line-room.js';

/** A clock whose timers fire at once, moving time on by their delay. */
function jumpingClock(): Clock & { waited: number[] } {
  let now = 0;
  const waited: number[] = [];
  return {
    waited,
    now: () => now,
    setTimeout: (fn, ms) => {
      waited.push(ms);
      now += ms;
      queueMicrotask(fn);
      return 0 as unknown as ReturnType<typeof setTimeout>;
    },
    clearTimeout: () => undefined,
  };
}

const canonical: TtyModes = { echo: true, icanon: true, isig: true };
const raw: TtyModes = { echo: false, icanon: false, isig: true };

describe('the line mode room', () => {
  it('measures the longest line in bytes, CR and LF ending lines', () => {
    expect(longestLine('')).toBe(0);
    expect(longestLine('abc\r\ndefgh\nij')).toBe(5);
    expect(longestLine('é'.repeat(3))).toBe(6);
    expect(canonicalRoom('linux')).toBe(4095);
    expect(canonicalRoom('darwin')).toBe(1023);
    expect(canonicalRoom('win32')).toBeNull();
  });

  it('waits until the terminal reads raw, reading the modes every poll', async () => {
    const clock = jumpingClock();
    const seen = [canonical, canonical, raw];
    let reads = 0;
    expect(await untilRaw(async () => seen[reads++]!, clock, { ms: 1000 })).toBe('raw');
    expect(reads).toBe(3);
    expect(clock.waited).toEqual([lineEditorPollMs, lineEditorPollMs]);
  });

  it('gives up at its bound, and never waits past it', async () => {
    const clock = jumpingClock();
    let reads = 0;
    const outcome = await untilRaw(async () => (reads++, canonical), clock, { ms: 25 });
    expect(outcome).toBe('timeout');
    expect(clock.waited).toEqual([10, 10, 5]);
    expect(reads).toBe(4);
  });

  it('stops on an aborted signal before reading again, and takes unreadable modes as raw', async () => {
    const clock = jumpingClock();
    const stop = new AbortController();
    let reads = 0;
    const outcome = untilRaw(async () => (reads++ === 1 && stop.abort(), canonical), clock, { ms: 1000, signals: [undefined, stop.signal] });
    expect(await outcome).toBe('aborted');
    expect(reads).toBe(2);
    expect(await untilRaw(async () => null, clock, { ms: 0 })).toBe('raw');
  });
});
