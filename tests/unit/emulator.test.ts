import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { Emulator, floodCharsPerWindow, floodKeepScreens, floodWindowMs } from '../../src/main/terminal/emulator/emulator.js';
import { ManualClock } from '../support/manual-clock.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

async function replay(snapshot: string, cols: number, rows: number): Promise<string[]> {
  const t = new Terminal({ cols, rows, scrollback: 100_000, allowProposedApi: true });
  await new Promise<void>((resolve) => t.write(snapshot, resolve));
  const buffer = t.buffer.active;
  const lines: string[] = [];
  for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? '');
  t.dispose();
  return lines;
}

/** Lines without the empty rows below the last one written. */
function trimmed(lines: string[]): string[] {
  const out = [...lines];
  while (out.length > 0 && out.at(-1) === '') out.pop();
  return out;
}

describe('Emulator', () => {
  it('answers a cursor-position request split across chunks', async () => {
    const replies: string[] = [];
    const e = new Emulator({ cols: 80, rows: 24, scrollback: 0, onReply: (data) => replies.push(data) });
    e.feed('abc\x1b[');
    expect(e.mustDrainBeforeInput).toBe(true);
    e.feed('6n');
    await e.drained();
    expect(replies).toEqual(['\x1b[1;4R']);
    expect(e.mustDrainBeforeInput).toBe(false);
    e.dispose();
  });

  it('moves old scrollback to cold history without losing a line, even from one huge write', async () => {
    const e = new Emulator({ cols: 40, rows: 10, scrollback: 10_000, hotLines: 1000, onReply: () => {} });
    let text = '';
    for (let i = 1; i <= 6000; i++) text += `\x1b[3${i % 8}mline ${i}\x1b[0m\r\n`;
    e.feed(text);
    await e.drained();
    // The live buffer stays small: the hot window, an eviction batch at most, and the screen.
    expect(e.terminal.buffer.normal.length).toBeLessThan(1000 + 2 * 500 + 10);
    const lines = await replay(e.serialize(), 40, 10);
    expect(lines[0]).toBe('line 1');
    expect(lines[5999]).toBe('line 6000');
    expect(lines.filter((line) => line.startsWith('line ')).length).toBe(6000);
    e.dispose();
  });

  it('keeps every line of a burst that is no flood, in order, and the restored view equals the host line for line', async () => {
    const e = new Emulator({ cols: 40, rows: 10, scrollback: 10_000, hotLines: 500, onReply: () => {} });
    let text = '';
    // Empty lines, colours and lines wrapped across rows, around the cold batch boundaries.
    for (let i = 1; i <= 5000; i++) text += i % 97 === 0 ? '\r\n' : i % 89 === 0 ? `wrap ${i} ${'w'.repeat(70)}\r\n` : `\x1b[3${i % 8}mrow ${i}\x1b[0m\r\n`;
    for (let at = 0; at < text.length; at += 4096) e.feed(text.slice(at, at + 4096));
    await e.drained();
    const restored = await replay(e.serialize(), 40, 10);
    // The same output in one terminal that keeps everything: the reference, row for row.
    expect(trimmed(restored)).toEqual(trimmed(await replay(text, 40, 10)));
    const rows = restored.filter((line) => /^row \d+$/.test(line)).map((line) => Number(line.slice(4)));
    expect(rows).toEqual(Array.from({ length: 5000 }, (_, i) => i + 1).filter((i) => i % 97 !== 0 && i % 89 !== 0));
    expect(restored.filter((line) => line.includes('not kept'))).toEqual([]);
    e.dispose();
  });

  it('erases cold history with the scrollback (`clear`, CSI 3 J) and on a full reset', async () => {
    for (const erase of ['\x1b[H\x1b[2J\x1b[3J', '\x1bc']) {
      const e = new Emulator({ cols: 40, rows: 10, scrollback: 10_000, hotLines: 500, onReply: () => {} });
      let text = '';
      for (let i = 1; i <= 3000; i++) text += `old ${i}\r\n`;
      text += erase;
      for (let i = 1; i <= 2000; i++) text += `new ${i}\r\n`;
      for (let at = 0; at < text.length; at += 4096) e.feed(text.slice(at, at + 4096));
      await e.drained();
      const restored = await replay(e.serialize(), 40, 10);
      expect(restored.filter((line) => line.startsWith('old '))).toEqual([]);
      expect(restored.filter((line) => line.startsWith('new '))).toHaveLength(2000);
      expect(trimmed(restored)).toEqual(trimmed(await replay(text, 40, 10)));
      expect(restored.filter((line) => line.includes('not kept'))).toEqual([]);
      e.dispose();
    }
  });

  it('parses only the newest part of a flood, leaves a note, and ends on the right screen', async () => {
    const e = new Emulator({ cols: 40, rows: 10, scrollback: 10_000, onReply: () => {} });
    const line = (i: number) => `flood line ${i}\r\n`;
    let fed = 0;
    for (let i = 1; i <= 200_000; i++) {
      const chunk = line(i);
      fed += chunk.length;
      e.feed(chunk);
    }
    await e.drained();
    expect(e.skippedChars).toBeGreaterThan(fed / 2);
    const lines = await replay(e.serialize(), 40, 10);
    const notes = lines.map((text, at) => ({ at, match: /\[… (\d+) lines of a flood skipped …\]/.exec(text) })).filter((n) => n.match);
    expect(notes).toHaveLength(1);
    // The note counts exactly the lines between the last one kept before it and the first after.
    const numbered = (from: number, step: number) => {
      for (let i = from; i >= 0 && i < lines.length; i += step) {
        const found = /^flood line (\d+)$/.exec(lines[i]!);
        if (found) return Number(found[1]);
      }
      return 0;
    };
    const { at, match } = notes[0]!;
    expect(numbered(at + 1, 1) - numbered(at - 1, -1) - 1).toBe(Number(match![1]));
    expect(lines.filter((text) => text.startsWith('flood line')).at(-1)).toBe('flood line 200000');
    // The stream offsets still add up: a snapshot covers everything fed.
    expect((await e.snapshot()).offset).toBe(fed);
    e.dispose();
  });

  it('keeps a flood a flood while it lasts: later windows parse only their newest screens, and output after it is parsed as it comes', async () => {
    const clock = new ManualClock();
    const cols = 40;
    const rows = 10;
    const e = new Emulator({ cols, rows, scrollback: 10_000, onReply: () => {}, clock });
    const line = (i: number) => `flood line ${i}\r\n`;
    let i = 0;
    let fed = 0;
    /** One window: 2 MiB in 64 KiB chunks, the parser given real time between them as a PTY's reads would. */
    const floodWindow = async () => {
      for (let c = 0; c < 32; c++) {
        let chunk = '';
        while (chunk.length < 64 * 1024) chunk += line(++i);
        fed += chunk.length;
        e.feed(chunk);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await clock.advance(floodWindowMs);
    };
    await floodWindow();
    const parsedAfterFirst = fed - e.skippedChars;
    const windows = 8;
    for (let w = 0; w < windows; w++) await floodWindow();
    // Each later window parses its newest screens of lines and a note, nothing of its start.
    const perWindow = floodKeepScreens * rows * line(i).length + 100;
    expect(fed - e.skippedChars - parsedAfterFirst).toBeLessThan(windows * perWindow);
    expect(2 * 1024 * 1024).toBeGreaterThan(floodCharsPerWindow);
    await e.drained();
    expect(e.screenText()).toContain(`flood line ${i}`);
    // A window without output ends the flood: what comes next is parsed without waiting for one.
    await clock.advance(floodWindowMs + 1);
    e.feed('after the flood\r\n');
    await e.drained();
    expect(e.screenText()).toContain('after the flood');
    expect(clock.pending).toBe(0);
    e.dispose();
  });

  it('takes output that keeps its thread busy for a flood, though it arrives below the flood rate (a PTY read on its own thread)', async () => {
    /**
     * The same output, fed below the flood rate while the parser still has a backlog, once on a
     * thread the meter says is busy and once on one it says is idle. Time and busy time are both
     * the test's: the decision does not depend on how fast this machine parses.
     */
    const run = async (share: number) => {
      const clock = new ManualClock();
      const busy = () => ({ active: clock.now() * share, idle: clock.now() * (1 - share) });
      const e = new Emulator({ cols: 80, rows: 24, scrollback: 10_000, onReply: () => {}, clock, busy });
      let n = 0;
      const line = () => `\x1b[3${n % 8}m${++n}\r\n`;
      let fed = 0;
      // A fifth of the flood rate, in reads 10 ms apart, for ten flood windows. No real time
      // passes between reads, so the parser's backlog stays (as on a thread it keeps busy).
      const perRead = floodCharsPerWindow / 5 / (floodWindowMs / 10);
      for (let read = 0; read < 10 * (floodWindowMs / 10); read++) {
        let chunk = '';
        while (chunk.length < perRead) chunk += line();
        fed += chunk.length;
        e.feed(chunk);
        await clock.advance(10);
      }
      await clock.advance(floodWindowMs);
      await e.drained();
      const result = { fed, skipped: e.skippedChars, screen: e.screenText(), last: n, timers: clock.pending };
      e.dispose();
      return result;
    };
    const busy = await run(1);
    // Busy for floodBusyWindows windows in a row: the rest is a flood, and its older part is skipped.
    expect(busy.skipped).toBeGreaterThan(busy.fed / 4);
    expect(busy.screen).toContain(`${busy.last}`);
    expect(busy.timers).toBe(0);
    // An idle thread keeps up: the same output is parsed whole.
    const idle = await run(0.5);
    expect(idle.skipped).toBe(0);
    expect(idle.screen).toContain(`${idle.last}`);
  });

  it('bounds cold history to the scrollback setting', async () => {
    const e = new Emulator({ cols: 40, rows: 10, scrollback: 2000, hotLines: 500, onReply: () => {} });
    let text = '';
    for (let i = 1; i <= 8000; i++) text += `row ${i}\r\n`;
    e.feed(text);
    await e.drained();
    const lines = (await replay(e.serialize(), 40, 10)).filter((line) => line.startsWith('row '));
    expect(lines.at(-1)).toBe('row 8000');
    expect(lines.length).toBeGreaterThanOrEqual(2000);
    expect(lines.length).toBeLessThanOrEqual(2000 + 500);
    e.dispose();
  });
});
