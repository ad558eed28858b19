/**
 * Line-level helpers of the output projection: the block scan that finds line ends and
 * projected byte counts in one typed-array pass, and the small cell and surrogate rules.
 */
import { cellWidth, codePointLen, utf8Length } from './ansi';

/** UTF-16 units per scanBlock() pass: the scratch buffer stays small whatever is pushed. */
const SCAN_SEGMENT = 1 << 16;
// Scratch space shared by all projectors (single-threaded, not re-entered). A typed-array
// pass is several times faster than per-line string calls on floods of short lines.
const scratch = Buffer.allocUnsafeSlow(SCAN_SEGMENT * 2);
const scratchUnits = new Uint16Array(scratch.buffer, scratch.byteOffset, SCAN_SEGMENT);
/**
 * Checkpoints of the newest lines of the last scanned block, in a ring: for line k
 * (k lines from the block start), ringEnds[k % size] is the index after its \n and
 * ringCum[k % size] the projected bytes of lines 1..k. Cutting keeps at most
 * maxBytes bytes, so at most maxBytes lines: that many checkpoints are enough.
 */
export let ringEnds = new Int32Array(0);
export let ringCum = new Float64Array(0);

interface Scan {
  lines: number;
  /** Projected bytes, one per line for its newline. */
  bytes: number;
  /** Projected bytes of the longest line. */
  longest: number;
}

/**
 * Measures raw window text (lines end in \n; CRs and spaces before it are trimmed) and
 * leaves checkpoints for the newest `keep` lines (see ringEnds).
 */
export function scanBlock(text: string, keep: number): Scan {
  if (ringEnds.length < keep + 2) {
    ringEnds = new Int32Array(keep + 2);
    ringCum = new Float64Array(keep + 2);
  }
  const ends = ringEnds;
  const cum = ringCum;
  const size = ends.length;
  ends[0] = 0;
  cum[0] = 0;
  const n = text.length;
  const u = scratchUnits;
  let lines = 0;
  let slot = 0; // lines % size
  let total = 0;
  let longest = 0;
  let start = 0; // index where the current line starts
  let end = 0; // index after its last character that is not a space or CR
  let extra = 0; // UTF-8 bytes beyond one per UTF-16 unit, up to `end`
  for (let off = 0; off < n;) {
    let m = Math.min(SCAN_SEGMENT, n - off);
    // Never end a segment between the halves of a surrogate pair.
    if (m === SCAN_SEGMENT && off + m < n && isHighSurrogate(text.charCodeAt(off + m - 1))) m--;
    scratch.write(m === n ? text : text.slice(off, off + m), 0, 'utf16le');
    for (let j = 0; j < m; j++) {
      const c = u[j]!;
      if (c > 0x20) {
        end = off + j + 1;
        if (c < 0x80) continue;
        if (c < 0x800) extra += 1;
        else if (c < 0xd800 || c > 0xdfff) extra += 2;
        else if (c <= 0xdbff && j + 1 < m && (u[j + 1]! & 0xfc00) === 0xdc00) {
          extra += 2; // a pair: 4 bytes for 2 units
          end = off + ++j + 1;
        } else extra += 2; // lone surrogate: U+FFFD, as Buffer encodes it
      } else if (c === 0x0a) {
        const b = end - start + extra;
        total += b + 1;
        if (b > longest) longest = b;
        lines++;
        if (++slot === size) slot = 0;
        ends[slot] = start = end = off + j + 1;
        cum[slot] = total;
        extra = 0;
      } else if (c !== 0x20 && c !== 0x0d) end = off + j + 1;
    }
    off += m;
  }
  return { lines, bytes: total, longest };
}

/**
 * A copy of `s` that does not share storage with a larger string: V8 substrings
 * keep their parent alive, a flattened concatenation does not.
 */
export function own(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}

export function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

export function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

export function trimSpaces(s: string): string {
  let e = s.length;
  while (e > 0 && s.charCodeAt(e - 1) === 0x20) e--;
  return e === s.length ? s : s.slice(0, e);
}

/** Index where the CRs right before `nl` begin (CR then LF is a plain line end). */
export function crStart(s: string, from: number, nl: number): number {
  while (nl > from && s.charCodeAt(nl - 1) === 0x0d) nl--;
  return nl;
}

/** End of a raw window line's projected text: before its CRs and trailing spaces. */
export function rawLineEnd(s: string, from: number, nl: number): number {
  let e = nl;
  while (e > from && s.charCodeAt(e - 1) === 0x0d) e--;
  while (e > from && s.charCodeAt(e - 1) === 0x20) e--;
  return e;
}

export const RAW_LINE_END = / *\r*\n/g;

/** Lines of raw window text and their projected UTF-8 bytes, one per line for its \n (each line ends before its CRs and trailing spaces). */
export function measureLines(raw: string): { lines: number; bytes: number } {
  let lines = 0;
  // Spaces and CRs are a byte each: what the projection trims is subtracted, not rebuilt.
  let trimmed = 0;
  for (let from = 0, nl = raw.indexOf('\n'); nl !== -1; from = nl + 1, nl = raw.indexOf('\n', from)) {
    lines++;
    trimmed += nl - rawLineEnd(raw, from, nl);
  }
  return { lines, bytes: utf8Length(raw) - trimmed };
}

/**
 * The projected lines of raw window texts (oldest first, each line ending in \n), newest first:
 * a text is split only as far as lines are read, so reading the newest few of a flood's many
 * costs those few.
 */
export class NewestLines {
  private t: number;
  private text = '';
  private pos = 0;

  constructor(private readonly texts: readonly string[]) {
    this.t = texts.length;
  }

  /** The next older line, or undefined when all were read. */
  next(): string | undefined {
    while (this.pos === 0) {
      if (this.t === 0) return undefined;
      this.text = this.texts[--this.t]!;
      this.pos = this.text.length;
    }
    const nl = this.pos - 1;
    const start = nl === 0 ? 0 : this.text.lastIndexOf('\n', nl - 1) + 1;
    this.pos = start;
    return this.text.slice(start, rawLineEnd(this.text, start, nl));
  }
}

/** The same lines oldest first, then `after` (lines already projected). */
export class OldestLines {
  private t = 0;
  private pos = 0;
  private a = 0;

  constructor(
    private readonly texts: readonly string[],
    private readonly after: readonly string[],
  ) {}

  next(): string | undefined {
    while (this.t < this.texts.length) {
      const text = this.texts[this.t]!;
      if (this.pos < text.length) {
        const nl = text.indexOf('\n', this.pos);
        const line = text.slice(this.pos, rawLineEnd(text, this.pos, nl));
        this.pos = nl + 1;
        return line;
      }
      this.t++;
      this.pos = 0;
    }
    return this.a < this.after.length ? this.after[this.a++] : undefined;
  }
}

export function zeroWidthAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 0x300 && cellWidth(codePointLen(s, i) === 2 ? s.codePointAt(i)! : c) === 0;
}

/** `s` without its first n cells; half of a wide character left over shows as a blank. */
export function dropCells(s: string, n: number): string {
  if (s === '' || n <= 0) return s;
  let i = 0;
  let cells = 0;
  while (i < s.length && cells < n) {
    const c = s.charCodeAt(i);
    if (c < 0x300) {
      cells++;
      i++;
      continue;
    }
    const k = codePointLen(s, i);
    cells += cellWidth(k === 2 ? s.codePointAt(i)! : c);
    i += k;
  }
  while (i < s.length && zeroWidthAt(s, i)) i += codePointLen(s, i);
  const rest = i >= s.length ? '' : s.slice(i);
  return cells > n ? ' ' + rest : rest;
}

/** First numeric parameter of a CSI (0 when absent). */
export function firstParam(params: string, from: number): number {
  let v = 0;
  for (let i = from; i < params.length; i++) {
    const c = params.charCodeAt(i);
    if (c < 0x30 || c > 0x39) break;
    if (v < 1e6) v = v * 10 + (c - 0x30);
  }
  return v;
}
