/**
 * Cold history's line serializer against real headless terminals: output full of styles, wide
 * characters, wrapped lines and painted blanks, serialized and replayed into a fresh terminal,
 * must show the same cells (character, width, every attribute) and the same wrapping.
 */
import xtermHeadless from '@xterm/headless';
import type { IBufferCell, Terminal as HeadlessTerminal } from '@xterm/headless';
import unicode11Addon from '@xterm/addon-unicode11';
import type { Unicode11Addon as Unicode11AddonType } from '@xterm/addon-unicode11';
import { describe, expect, it } from 'vitest';
import { serializeLines } from '../../src/main/terminal/emulator/line-serializer.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };
const { Unicode11Addon } = unicode11Addon as unknown as { Unicode11Addon: typeof Unicode11AddonType };

function terminal(cols: number): HeadlessTerminal {
  const t = new Terminal({ cols, rows: 8, scrollback: 10_000, allowProposedApi: true });
  t.loadAddon(new Unicode11Addon());
  t.unicode.activeVersion = '11';
  return t;
}

const write = (t: HeadlessTerminal, data: string) => new Promise<void>((resolve) => t.write(data, resolve));

/** What a person sees in a cell, described with the public getters one by one. */
function look(cell: IBufferCell): string {
  const flags = [
    cell.isBold(),
    cell.isDim(),
    cell.isItalic(),
    cell.isUnderline(),
    cell.isBlink(),
    cell.isInverse(),
    cell.isInvisible(),
    cell.isStrikethrough(),
    cell.isOverline(),
  ]
    .map((f) => (f ? 1 : 0))
    .join('');
  const chars = cell.getChars() || ' ';
  return `${chars}/${cell.getWidth()}/${cell.getFgColorMode()}:${cell.getFgColor()}/${cell.getBgColorMode()}:${cell.getBgColor()}/${flags}`;
}

/** A blank a person cannot tell from an empty cell: bold, dim, italic, blink or hidden show nothing on it. */
function showsNothing(cell: IBufferCell): boolean {
  return (
    (cell.getChars() === '' || cell.getChars() === ' ') &&
    cell.isBgDefault() &&
    !cell.isInverse() &&
    !cell.isUnderline() &&
    !cell.isOverline() &&
    !cell.isStrikethrough()
  );
}

/** Every line as its cells, cut after the last cell that shows anything, and whether it wraps. */
function rows(t: HeadlessTerminal): string[] {
  const buffer = t.buffer.normal;
  const out: string[] = [];
  const cell = buffer.getNullCell();
  for (let y = 0; y < buffer.length; y++) {
    const line = buffer.getLine(y)!;
    const cells: string[] = [];
    let shown = 0;
    for (let x = 0; x < t.cols; x++) {
      cells.push(look(line.getCell(x, cell)!));
      if (!showsNothing(cell)) shown = x + 1;
    }
    // A wrapped line's blanks are kept whole: the next row continues after them.
    if (!buffer.getLine(y + 1)?.isWrapped) cells.length = shown;
    out.push(`${line.isWrapped ? '+' : '|'}${cells.join(' ')}`);
  }
  while (out.length > 0 && out.at(-1) === '|') out.pop();
  return out;
}

/** A deterministic mix of everything a line can hold. */
function sample(seed: number, lines: number): string {
  let state = seed;
  const rand = (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff; // 32-bit: a plain product loses its low bits in a double
    return state % n;
  };
  const styles = [
    '0',
    '1',
    '2',
    '3',
    '4',
    '5',
    '7',
    '8',
    '9',
    '53',
    '31',
    '92',
    '38;5;208',
    '38;2;10;200;30',
    '44',
    '103',
    '48;5;17',
    '48;2;250;0;99',
    '1;4;35;47',
    '7;33',
  ];
  const words = ['word', 'x', '漢字', 'é', 'tab\there', '🙂', '  spaced  ', 'a'.repeat(50)];
  let text = '';
  for (let i = 0; i < lines; i++) {
    const kind = rand(10);
    if (kind === 0)
      text += '\r\n'; // an empty line
    else if (kind === 1)
      text += `\x1b[${styles[rand(styles.length)]}m\x1b[K\x1b[0m\r\n`; // a line painted by erase-in-line
    else if (kind === 2)
      text += `\x1b[${styles[rand(styles.length)]}m${'z'.repeat(30 + rand(60))}\x1b[0m\r\n`; // wraps
    else {
      for (let n = 1 + rand(6); n > 0; n--) text += `\x1b[${styles[rand(styles.length)]}m${words[rand(words.length)]}`;
      if (rand(3) === 0) text += `\x1b[0m${words[rand(words.length)]}`; // ends in the default style: only blanks may be trimmed
      text += rand(2) ? '\x1b[0m\r\n' : '\r\n\x1b[0m'; // a style left on across the line break, sometimes
    }
  }
  return text;
}

describe('cold history line serializer', () => {
  for (const [cols, packed] of [
    [40, true],
    [13, true],
    [40, false],
  ] as const) {
    it(`replays styles, wide characters, wrapping and painted blanks cell for cell (${cols} columns${packed ? '' : ', public getters only'})`, async () => {
      const source = terminal(cols);
      await write(source, sample(cols, 400));
      const buffer = source.buffer.normal;
      // In batches, as cold history takes them: each one starts afresh and ends reset.
      const batches: string[] = [];
      let start = 0;
      while (start < buffer.length) {
        let end = Math.min(buffer.length - 1, start + 37);
        while (end < buffer.length - 1 && buffer.getLine(end + 1)?.isWrapped) end++;
        batches.push(serializeLines(buffer, start, end, cols, { packed }));
        start = end + 1;
      }
      const replayed = terminal(cols);
      await write(replayed, batches.join('\r\n'));
      expect(rows(replayed)).toEqual(rows(source));
      source.dispose();
      replayed.dispose();
    });
  }

  it('ends every text with the default style, even after a coloured last line', async () => {
    const t = terminal(20);
    await write(t, '\x1b[41mred background');
    const text = serializeLines(t.buffer.normal, 0, 0, 20);
    expect(text.endsWith('\x1b[0m')).toBe(true);
    expect(text).toContain('\x1b[0;41m');
    t.dispose();
  });
});
