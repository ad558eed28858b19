/**
 * The emulator's side of command marks: a followed line keeps pointing at the same text while
 * it is live, after it moved to cold history (the snapshot's line numbers still land on it), and
 * is gone once the scrollback drops it or a Clear erases it. The marks list is bounded.
 */
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { CommandMarks } from '../../src/main/terminal/emulator/command-marks.js';
import { Emulator } from '../../src/main/terminal/emulator/emulator.js';
import { commandLineOffset, endStatus } from '../../src/shared/command-marks.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

/** Feeds `text` and returns the stream offset after it. */
function feeder(e: Emulator): (text: string) => number {
  let offset = 0;
  return (text) => {
    e.feed(text);
    offset += text.length;
    return offset;
  };
}

/** Each snapshot mark's line as a view shows it: placed relative to the view's cursor, as the renderer does. */
async function viewLines(
  snapshot: { data: string },
  marks: { cursorLine: number; list: Array<{ line: number }> },
  cols: number,
  rows: number,
  scrollback = 100_000,
): Promise<Array<string | null>> {
  const t = new Terminal({ cols, rows, scrollback, allowProposedApi: true });
  await new Promise<void>((resolve) => t.write(snapshot.data, resolve));
  const buffer = t.buffer.active;
  const lines = marks.list.map((mark) => {
    if (buffer.baseY + buffer.cursorY + mark.line - marks.cursorLine < 0) return null;
    const marker = t.registerMarker(mark.line - marks.cursorLine)!;
    return buffer.getLine(marker.line)!.translateToString(true);
  });
  t.dispose();
  return lines;
}

/** A command as a shell shows it: the prompt line, the start marker's place, output, the end's place. */
function command(feed: (text: string) => number, marks: CommandMarks, seq: number, name: string, outputLines: number, exitCode = 0): void {
  feed(`$ ${name}\r\n`);
  marks.start(feed(''), seq, name);
  let out = '';
  for (let i = 0; i < outputLines; i++) out += `${name}-out${i}\r\n`;
  marks.end(feed(out), seq, exitCode, null);
}

describe('command marks in the emulator', () => {
  it('places the mark on the command line, a wrapped one on its first row', async () => {
    const e = new Emulator({ cols: 20, rows: 10, scrollback: 100, onReply: () => {} });
    const feed = feeder(e);
    const marks = new CommandMarks(e);
    feed('$ short\r\n');
    marks.start(feed(''), 1, 'short');
    marks.end(feed('out\r\n'), 1, 0, null);
    feed(`$ ${'x'.repeat(45)}\r\n`);
    marks.start(feed(''), 2, 'long');
    marks.end(feed('out\r\n'), 2, 1, null);
    await e.drained();
    const snapshot = await e.snapshot();
    const list = marks.inSnapshot(snapshot);
    expect(list.list.map((mark) => [mark.line, mark.endLine, mark.status, mark.exitCode])).toEqual([
      [0, 2, 'success', 0],
      [2, 6, 'failure', 1],
    ]);
    expect(await viewLines(snapshot, list, 20, 10)).toEqual(['$ short', `$ ${'x'.repeat(18)}`]);
    e.dispose();
  });

  it('follows lines into cold history, and drops marks whose lines the scrollback dropped', async () => {
    // A hot window of 50 lines, 2000 in all: most of the commands end up cold, the oldest dropped.
    const e = new Emulator({ cols: 40, rows: 10, scrollback: 2000, hotLines: 50, onReply: () => {} });
    const feed = feeder(e);
    const marks = new CommandMarks(e);
    // 700 commands of 4 lines: 2800 lines, far past what the emulator keeps live (hot 50 + a batch of 500): most marks follow cold lines.
    const total = 700;
    for (let i = 0; i < total; i++) command(feed, marks, i, `cmd${i}`, 3, i % 3 === 0 ? 1 : 0);
    await e.drained();
    const snapshot = await e.snapshot();
    const list = marks.inSnapshot(snapshot);
    // About 2000 lines are kept; the oldest marks went.
    expect(list.list.length).toBeGreaterThan(400);
    expect(list.list.length).toBeLessThan(560);
    expect(marks.size).toBe(list.list.length);
    const shown = await viewLines(snapshot, list, 40, 10);
    const first = total - list.list.length;
    expect(shown).toEqual(list.list.map((_, index) => `$ cmd${first + index}`));
    expect(list.list.map((mark) => mark.status)).toEqual(list.list.map((_, index) => ((first + index) % 3 === 0 ? 'failure' : 'success')));
    // A view keeping less scrollback than the snapshot still places the marks it has lines for.
    const small = await viewLines(snapshot, list, 40, 10, 100);
    expect(small.filter((line) => line !== null).length).toBeGreaterThan(20);
    for (const [index, line] of small.entries()) if (line !== null) expect(line).toBe(`$ cmd${first + index}`);
    e.dispose();
  });

  it('a Clear erases the marks with their lines', async () => {
    const e = new Emulator({ cols: 40, rows: 10, scrollback: 400, hotLines: 50, onReply: () => {} });
    const feed = feeder(e);
    const marks = new CommandMarks(e);
    for (let i = 0; i < 30; i++) command(feed, marks, i, `cmd${i}`, 3);
    await e.drained();
    e.clear();
    await e.drained();
    const list = marks.inSnapshot(await e.snapshot());
    expect(list.list).toEqual([]);
    expect(marks.size).toBe(0);
    command(feed, marks, 99, 'after', 1);
    await e.drained();
    const snapshot = await e.snapshot();
    const after = marks.inSnapshot(snapshot);
    expect(await viewLines(snapshot, after, 40, 10)).toEqual(['$ after']);
    e.dispose();
  });

  it('keeps at most its cap of marks, oldest dropped first', async () => {
    const e = new Emulator({ cols: 40, rows: 10, scrollback: 1000, onReply: () => {} });
    const feed = feeder(e);
    const marks = new CommandMarks(e, 5);
    for (let i = 0; i < 12; i++) command(feed, marks, i, `cmd${i}`, 1);
    await e.drained();
    const list = marks.inSnapshot(await e.snapshot());
    expect(list.list.map((mark) => mark.command)).toEqual(['cmd7', 'cmd8', 'cmd9', 'cmd10', 'cmd11']);
    e.dispose();
  });

  it('says how a command ended', () => {
    expect(endStatus(0, false)).toBe('success');
    expect(endStatus(2, false)).toBe('failure');
    expect(endStatus(130, false)).toBe('interrupted');
    expect(endStatus(1, true)).toBe('interrupted');
    expect(endStatus(0, true)).toBe('success');
    expect(endStatus(null, false)).toBe('success');
    const line = (isWrapped: boolean) => ({ isWrapped });
    expect(commandLineOffset({ cursorX: 0, cursorY: 3, baseY: 0, getLine: (y) => line(y === 2) })).toBe(-2);
    expect(commandLineOffset({ cursorX: 4, cursorY: 3, baseY: 0, getLine: () => line(false) })).toBe(0);
  });
});
