/**
 * The person's Clear on the host's emulator (issue 28, point 10): it erases scrollback, cold
 * history and screen exactly at the output offset where it was asked, between parser writes,
 * and counts as no output. Real @xterm/headless throughout.
 */
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { Emulator, floodCharsPerWindow, floodWindowMs } from '../../src/main/terminal/emulator/emulator.js';
import { ManualClock } from '../support/manual-clock.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

async function replay(snapshot: string, cols: number, rows: number): Promise<{ lines: string[]; terminal: HeadlessTerminal }> {
  const terminal = new Terminal({ cols, rows, scrollback: 100_000, allowProposedApi: true });
  await new Promise<void>((resolve) => terminal.write(snapshot, resolve));
  const buffer = terminal.buffer.active;
  const lines: string[] = [];
  for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? '');
  return { lines, terminal };
}

async function linesOf(snapshot: string, cols = 40, rows = 10): Promise<string[]> {
  const { lines, terminal } = await replay(snapshot, cols, rows);
  terminal.dispose();
  return lines.map((line) => line.trimEnd()).filter((line) => line !== '');
}

function numbered(prefix: string, from: number, to: number): string {
  let text = '';
  for (let i = from; i <= to; i++) text += `${prefix} ${i}\r\n`;
  return text;
}

const emulator = (clock?: ManualClock) =>
  new Emulator({ cols: 40, rows: 10, scrollback: 10_000, hotLines: 500, onReply: () => {}, ...(clock ? { clock } : {}) });

describe('Emulator.clear (the menu Clear)', () => {
  it('erases scrollback, cold history and screen but the prompt line, and moves no offset', async () => {
    const e = emulator();
    const before = numbered('old', 1, 3000) + 'prompt$ ';
    e.feed(before);
    await e.drained();
    expect((await linesOf(e.serialize())).filter((line) => line.startsWith('old '))).toHaveLength(3000);
    e.clear();
    const snapshot = await e.snapshot();
    // No output was added: the snapshot still covers exactly what was fed.
    expect(snapshot.offset).toBe(before.length);
    expect(await linesOf(snapshot.data)).toEqual(['prompt$']);
    expect(e.cursor()).toEqual({ row: 0, col: 'prompt$ '.length });
    // Output after it streams as before, on the prompt line the shell still edits.
    e.feed('ls\r\n' + numbered('new', 1, 20));
    const after = await e.snapshot();
    expect(after.offset).toBe(before.length + 'ls\r\n'.length + numbered('new', 1, 20).length);
    expect(await linesOf(after.data)).toEqual(['prompt$ ls', ...Array.from({ length: 20 }, (_, i) => `new ${i + 1}`)]);
    e.dispose();
  });

  it('applies at the offset where it was asked while the parser is busy, not where the parser stands', async () => {
    // Output before the Clear takes many parser writes; the Clear is asked at once, and more output follows.
    const a = numbered('old', 1, 5000);
    const b = numbered('new', 1, 1500);
    const e = emulator();
    for (let at = 0; at < a.length; at += 4096) e.feed(a.slice(at, at + 4096));
    e.clear();
    // A snapshot asked for now already shows the Clear, wherever the parser is.
    const early = e.snapshot();
    for (let at = 0; at < b.length; at += 4096) e.feed(b.slice(at, at + 4096));
    const earlyLines = await linesOf((await early).data);
    expect(earlyLines.filter((line) => line.startsWith('old '))).toEqual([]);
    await e.drained();
    const lines = await linesOf(e.serialize());
    expect(lines.filter((line) => line.startsWith('old '))).toEqual([]);
    expect(lines).toEqual(Array.from({ length: 1500 }, (_, i) => `new ${i + 1}`));
    expect((await e.snapshot()).offset).toBe(a.length + b.length);
    // The same as clearing an idle emulator between the two: the reference, cell for cell.
    const reference = emulator();
    reference.feed(a);
    await reference.drained();
    reference.clear();
    reference.feed(b);
    await reference.drained();
    expect(e.serialize()).toBe(reference.serialize());
    e.dispose();
    reference.dispose();
  });

  it('is no input to the parser: an escape sequence split across the Clear still completes', async () => {
    const e = emulator();
    e.feed('old line\r\nred: \x1b[3');
    e.clear();
    e.feed('1mRED\x1b[0m');
    await e.drained();
    const { lines, terminal } = await replay(e.serialize(), 40, 10);
    expect(lines.filter((line) => line !== '')).toEqual(['red: RED']);
    const cell = terminal.buffer.active.getLine(0)!.getCell(5)!;
    expect(cell.getChars()).toBe('R');
    expect(cell.isFgPalette() && cell.getFgColor()).toBe(1);
    terminal.dispose();
    e.dispose();
  });

  it('leaves a full-screen program its screen and erases the shell scrollback under it', async () => {
    const e = emulator();
    e.feed(numbered('old', 1, 2000) + '$ vim\r\n\x1b[?1049h\x1b[Hvim top row\x1b[5;1Hvim row 5');
    await e.drained();
    e.clear();
    expect(e.altScreen).toBe(true);
    expect(e.screenText()).toContain('vim top row');
    expect(e.screenText()).toContain('vim row 5');
    // The program ends: the shell screen comes back, without the scrollback above it.
    e.feed('\x1b[?1049l$ ');
    await e.drained();
    const lines = await linesOf(e.serialize());
    expect(lines.length).toBeLessThanOrEqual(10);
    expect(lines.filter((line) => line.startsWith('old ')).length).toBeLessThan(10);
    expect(lines.slice(-2)).toEqual(['$ vim', '$']);
    e.dispose();
  });

  it('clears what came before it in a flood, and keeps the flood after it', async () => {
    const clock = new ManualClock();
    const e = emulator(clock);
    e.feed(numbered('old', 1, 3000));
    await e.drained();
    // A flood window: far more than the parser keeps, with the Clear asked in the middle.
    const chunk = (prefix: string, from: number) => numbered(prefix, from, from + 999);
    let fed = numbered('old', 1, 3000).length;
    let n = 1;
    while (fed < numbered('old', 1, 3000).length + floodCharsPerWindow + 1) {
      const text = chunk('pre', n);
      e.feed(text);
      fed += text.length;
      n += 1000;
    }
    e.clear();
    for (let i = 0; i < 3; i++) {
      const text = chunk('post', 1 + i * 1000);
      e.feed(text);
      fed += text.length;
    }
    clock.advance(floodWindowMs + 1);
    await e.drained();
    clock.advance(3 * floodWindowMs);
    await e.drained();
    expect(e.skippedChars).toBeGreaterThan(0);
    const lines = await linesOf(e.serialize());
    expect(lines.filter((line) => line.startsWith('old ') || line.startsWith('pre '))).toEqual([]);
    expect(lines.at(-1)).toBe('post 3000');
    expect((await e.snapshot()).offset).toBe(fed);
    e.dispose();
  });
});
