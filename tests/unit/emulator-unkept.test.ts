/**
 * Output so long that its start would scroll past the whole scrollback before it is parsed
 * (`yes`, `seq`): the emulator drops that start unparsed (emulator.ts `dropUnkept`). What it keeps
 * must be what parsing everything keeps: the newest lines of the scrollback and the screen, line
 * for line, as an emulator fed the same output in pieces small enough that nothing waits to be
 * parsed, at least the scrollback's worth (cold history keeps whole batches, so where they start
 * depends on how many lines went through it).
 */
import { describe, expect, it } from 'vitest';
import { Emulator, unkeptMinChars } from '../../src/main/terminal/emulator/emulator.js';
import { ManualClock } from '../support/manual-clock.js';

/** An emulator whose flood windows never open: a clock that does not move, a thread never busy, and under a flood window's characters in all. */
function emulator(): Emulator {
  return new Emulator({
    cols: 40,
    rows: 10,
    scrollback: 2000,
    hotLines: 500,
    onReply: () => undefined,
    clock: new ManualClock(),
    busy: () => ({ active: 0, idle: 1 }),
  });
}

/** Fed in pieces, each parsed before the next: nothing is ever dropped. */
async function piecewise(text: string): Promise<string> {
  const e = emulator();
  for (let at = 0; at < text.length; at += 8192) {
    e.feed(text.slice(at, at + 8192));
    await e.drained();
  }
  expect(e.skippedChars).toBe(0);
  const out = e.serialize();
  e.dispose();
  return out;
}

/** Fed at once, as a main thread that was busy hands the parser its whole backlog. */
async function atOnce(text: string): Promise<{ serialized: string; skipped: number }> {
  const e = emulator();
  e.feed(text);
  await e.drained();
  const out = { serialized: e.serialize(), skipped: e.skippedChars };
  e.dispose();
  return out;
}

/** The lines a serialization shows, colours aside (a cold batch starts with the colour in force). */
function shown(serialized: string): string[] {
  return serialized.replace(/\x1b\[[0-9;]*m/g, '').split('\r\n');
}

/** The kept lines are the newest of everything parsing every line keeps, and at least the scrollback and the screen. */
function expectNewest(dropped: string, all: string): void {
  const kept = shown(dropped);
  expect(kept.length).toBeGreaterThanOrEqual(2000 + 10);
  expect(shown(all).slice(-kept.length)).toEqual(kept);
}

function lines(from: number, count: number, line: (i: number) => string): string {
  let text = '';
  for (let i = from; i < from + count; i++) text += `${line(i)}\r\n`;
  return text;
}

describe('output past the scrollback, dropped before parsing', () => {
  it('keeps the same scrollback and screen as parsing every line, with the prompt after it', async () => {
    const text = `${lines(1, 60_000, (i) => `y ${i}`)}$ `;
    expect(text.length).toBeGreaterThan(unkeptMinChars);
    const all = await piecewise(text);
    const dropped = await atOnce(text);
    expect(dropped.skipped).toBeGreaterThan(text.length / 2);
    expectNewest(dropped.serialized, all);
    expect(all).toContain('y 60000\r\n$ ');
  }, 120_000);

  it('parses an escape sequence where it stands: a colour set without a reset still colours the lines kept after it', async () => {
    const text = `${lines(1, 30_000, (i) => `a ${i}`)}\x1b[31m${lines(1, 30_000, (i) => `b ${i}`)}`;
    const all = await piecewise(text);
    const dropped = await atOnce(text);
    expect(dropped.skipped).toBeGreaterThan(0);
    expectNewest(dropped.serialized, all);
    // Still red: the colour reached the kept lines.
    expect(dropped.serialized.slice(0, 12)).toContain('31m');
  }, 120_000);

  it('drops nothing without a CRLF to cut at: after a bare LF the column carries on, which only parsing knows', async () => {
    const text = `${'x'.repeat(17)}${'z\n'.repeat(150_000)}end`;
    expect((await atOnce(text)).skipped).toBe(0);
  }, 120_000);
});
