/**
 * Lines of a headless buffer as terminal output, for cold history (emulator.ts): what the
 * serialize addon's range mode gives, at a fraction of its cost. The addon weighs every cell of
 * every line against the one before, blank tails included; a flood's lines are a short coloured
 * run and a blank tail, and cold history serializes each line the emulator parsed once, which
 * made the addon most of the host's work in a flood.
 *
 * Each line: its cells from the first column to the last that shows anything (a character, a
 * background, inverse, underline or overline), each run of one style after one full SGR (reset,
 * then its attributes). Lines are joined by CR LF, except a line the next one continues
 * (wrapped): that one goes out to the last column so the replaying terminal wraps there too.
 * The text ends with the style reset, so what follows starts from the default.
 */
import type { IBuffer, IBufferCell, IBufferLine } from '@xterm/headless';

/** A colour's SGR parameters: the 8 and 8 bright ones by their short codes, 256 and RGB colours in full; null for the default. */
function colour(rgb: boolean, palette: boolean, c: number, base: number, bright: number, extended: number): string | number | null {
  if (rgb) return `${extended};2;${(c >>> 16) & 255};${(c >>> 8) & 255};${c & 255}`;
  if (!palette) return null;
  return c < 8 ? base + c : c < 16 ? bright + c - 8 : `${extended};5;${c}`;
}

/** SGR parameters of a cell's style; '' for the default. */
function styleOf(cell: IBufferCell): string {
  if (cell.isAttributeDefault()) return '';
  const params: Array<number | string> = [];
  if (cell.isBold()) params.push(1);
  if (cell.isDim()) params.push(2);
  if (cell.isItalic()) params.push(3);
  if (cell.isUnderline()) params.push(4);
  if (cell.isBlink()) params.push(5);
  if (cell.isInverse()) params.push(7);
  if (cell.isInvisible()) params.push(8);
  if (cell.isStrikethrough()) params.push(9);
  if (cell.isOverline()) params.push(53);
  const fg = colour(cell.isFgRGB(), cell.isFgPalette(), cell.getFgColor(), 30, 90, 38);
  if (fg) params.push(fg);
  const bg = colour(cell.isBgRGB(), cell.isBgPalette(), cell.getBgColor(), 40, 100, 48);
  if (bg) params.push(bg);
  return params.join(';');
}

/** Whether a cell shows nothing: no character and nothing a blank would show (a background, inverse, a line). */
function invisible(cell: IBufferCell): boolean {
  const chars = cell.getChars();
  if (chars !== '' && chars !== ' ') return false;
  return cell.isAttributeDefault() || (cell.isBgDefault() && !cell.isInverse() && !cell.isUnderline() && !cell.isOverline() && !cell.isStrikethrough());
}

/**
 * The emulator's own cell keeps its colours and attributes in two numbers (xterm's CellData
 * `fg` and `bg`): equal numbers are an equal style, so most cells need no getters. Without them
 * (another xterm) every cell is described through the public getters instead.
 */
interface PackedCell {
  fg?: unknown;
  bg?: unknown;
  content?: unknown;
}

/** xterm's cell content: the code point's bits, and the bit of a combined character (kept as a string). */
const codePointMask = 0x1fffff;
const combinedBit = 0x200000;

/**
 * Whether a cell is empty or a space in the default style: the trailing blanks of nearly every
 * line, told apart from its three numbers without making a string of each (getChars). Anything
 * else is left to `invisible`.
 */
function blankDefault(content: number, fg: number, bg: number): boolean {
  if (fg !== 0 || bg !== 0) return false;
  const code = content & codePointMask;
  return (content & combinedBit) === 0 && (code === 0 || code === 32);
}

/** xterm's null cell (no character, width 1, default style): what fills a line never written to. */
const nullCellContent = 1 << 22;

/** bg's bit for attributes kept aside (underline style and colour): such cells are not told by fg and bg alone. */
const extendedBit = 0x10000000;

/** SGR parameters by fg, then bg: a flood repeats a few styles on every line. Bounded: cleared when it grows. */
const stylesByNumbers = new Map<number, Map<number, string>>();
let stylesCached = 0;

function cachedStyle(fg: number, bg: number, cell: IBufferCell): string {
  let byBg = stylesByNumbers.get(fg);
  const hit = byBg?.get(bg);
  if (hit !== undefined) return hit;
  if (stylesCached >= 1024) {
    stylesByNumbers.clear();
    stylesCached = 0;
    byBg = undefined;
  }
  if (!byBg) stylesByNumbers.set(fg, (byBg = new Map()));
  const style = styleOf(cell);
  byBg.set(bg, style);
  stylesCached += 1;
  return style;
}

/** xterm's own line behind the API view keeps three numbers a cell (content, fg, bg); null for another xterm. */
function cellNumbers(line: IBufferLine): Uint32Array | null {
  const data = (line as unknown as { _line?: { _data?: unknown } })._line?._data;
  return data instanceof Uint32Array ? data : null;
}

/** Lines `start` to `end` (inclusive) of `buffer`, as output that replays them; `packed: false` forces the getters (tests). */
export function serializeLines(buffer: IBuffer, start: number, end: number, cols: number, opts: { packed?: boolean } = {}): string {
  const cell = buffer.getNullCell();
  const packed = cell as unknown as PackedCell;
  const fast = opts.packed !== false && typeof packed.fg === 'number' && typeof packed.bg === 'number' && typeof packed.content === 'number';
  let out = '';
  let style = '';
  /** Whether the current style shows on a blank: a line scrolled in takes the background. */
  let paints = false;
  let fg: unknown = null;
  let bg: unknown = null;
  for (let y = start; y <= end; y++) {
    const line = buffer.getLine(y);
    if (!line) break;
    const continued = y < end && buffer.getLine(y + 1)?.isWrapped === true;
    let last = Math.min(cols, line.length);
    // A flood's lines are mostly one run and a blank tail: read cells' numbers where xterm keeps them.
    const numbers = fast ? cellNumbers(line) : null;
    if (!continued) {
      // The blank tail as the emulator leaves it (its null cell, never written): three numbers
      // compared a cell, the most common case of a flood's lines, about half the general check.
      if (numbers) {
        let at = 3 * (last - 1);
        while (at >= 0 && at + 2 < numbers.length && numbers[at] === nullCellContent && numbers[at + 1] === 0 && numbers[at + 2] === 0) at -= 3;
        last = at / 3 + 1;
      }
      while (last > 0) {
        const at = 3 * (last - 1);
        if (numbers && numbers.length > at + 2 && blankDefault(numbers[at]!, numbers[at + 1]!, numbers[at + 2]!)) {
          last--;
          continue;
        }
        line.getCell(last - 1, cell);
        // Without the line's numbers, the packed cell tells the same (the numbers said no already).
        const blank = !numbers && fast && blankDefault(packed.content as number, packed.fg as number, packed.bg as number);
        if (!blank && !invisible(cell)) break;
        last--;
      }
      // A wrapped row of blanks still needs one cell printed, or the replay never wraps into it
      // (the line break that follows would start the next line there instead).
      if (last === 0 && line.isWrapped && cols > 0) last = 1;
    }
    // Runs of one style go out whole (translateToString writes a wide character once and an
    // empty cell as a blank).
    let runStart = 0;
    for (let x = 0; x < last; x++) {
      if (numbers && numbers[3 * x + 1] === fg && numbers[3 * x + 2] === bg) continue;
      line.getCell(x, cell);
      if (fast && packed.fg === fg && packed.bg === bg) continue;
      if (cell.getWidth() === 0) continue; // the second half of a wide character: its first half's style
      if (fast) {
        fg = packed.fg;
        bg = packed.bg;
      }
      const next = fast && ((bg as number) & extendedBit) === 0 ? cachedStyle(fg as number, bg as number, cell) : styleOf(cell);
      if (next === style) continue;
      if (x > runStart) out += line.translateToString(false, runStart, x);
      out += next === '' ? '\x1b[0m' : `\x1b[0;${next}m`;
      style = next;
      paints = next !== '' && (!cell.isBgDefault() || cell.isInverse() === 1);
      runStart = x;
    }
    if (last > runStart) out += line.translateToString(false, runStart, last);
    if (!continued && y < end) {
      // A terminal paints a line it scrolls in with the current background: none may be set.
      if (paints) {
        out += '\x1b[0m';
        style = '';
        paints = false;
        fg = bg = null;
      }
      out += '\r\n';
    }
  }
  if (style !== '') out += '\x1b[0m';
  return out;
}
