/**
 * Streaming tokenizer for VT/ANSI output and cell-width helpers.
 *
 * The scanner splits decoded terminal output into printable runs, C0 controls,
 * CSI and ESC sequences; string sequences (OSC/DCS/SOS/PM/APC) are consumed
 * silently. It is resumable: a sequence split across feed() calls continues
 * in the next call.
 */

/** A sequence longer than this is treated as unterminated: dropped, and parsing resumes as text. */
export const MAX_SEQUENCE = 4096;

export interface AnsiSink {
  /**
   * Printable text `s[start, end)`. Contains no controls except `\t`, `\n`, and
   * `\r` immediately followed by more `\r` and then `\n` (CRLF line ends stay in
   * the run so plain floods are delivered in one call).
   */
  text(s: string, start: number, end: number): void;
  /** A bare CR (one call per run of CRs), any other C0 control, or DEL. */
  control(code: number): void;
  /**
   * A complete CSI sequence; `params` may start with a private marker (`?`, `>`, `<`, `=`).
   * SGR (final `m`, colours) is the bulk of all sequences and is not reported.
   */
  csi(params: string, intermediates: string, final: number): void;
  /** A complete ESC sequence (not CSI or a string sequence), e.g. `ESC ( B` → `('(', 0x42)`. */
  esc(intermediates: string, final: number): void;
}

// Scanner states; plain numbers because `const enum` does not survive isolatedModules everywhere.
const GROUND = 0;
const ESCAPE = 1;
const CSI = 2;
const STRING = 3;
const STRING_ESC = 4;

/**
 * Everything that interrupts a printable run. CR is only special when it is not
 * part of a CR…CRLF line end, so CRLF floods need a single exec per chunk.
 */
const SPECIAL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r+(?![\r\n])/g;
/** Ends (or aborts) a string sequence: BEL (OSC only), CAN, SUB, ESC, 8-bit ST. */
const STRING_END = /[\x07\x18\x1a\x1b\x9c]/g;

export class AnsiScanner {
  private state = GROUND;
  /** Characters consumed by the current sequence, for the MAX_SEQUENCE bound. */
  private seqLen = 0;
  private intermediates = '';
  private csiBuf = '';
  private isOsc = false;

  constructor(private readonly sink: AnsiSink) {}

  /** True between sequences (nothing is pending from an earlier feed()). */
  get idle(): boolean {
    return this.state === GROUND;
  }

  feed(s: string): void {
    const n = s.length;
    const sink = this.sink;
    let i = 0;
    while (i < n) {
      switch (this.state) {
        case GROUND: {
          SPECIAL.lastIndex = i;
          const m = SPECIAL.exec(s);
          const j = m === null ? n : m.index;
          if (j > i) sink.text(s, i, j);
          if (m === null) return;
          const c = s.charCodeAt(j);
          if (c === 0x0d) {
            sink.control(0x0d);
            i = j + m[0].length;
            continue;
          }
          i = j + 1;
          if (c === 0x1b) {
            // Fast path: a CSI complete within this chunk is handled without state changes.
            if (i < n && s.charCodeAt(i) === 0x5b /* [ */) {
              let k = i + 1;
              while (k < n) {
                const d = s.charCodeAt(k);
                if (d < 0x20 || d > 0x3f) break;
                k++;
              }
              const f = k < n ? s.charCodeAt(k) : 0;
              if (f >= 0x40 && f <= 0x7e && k - j < MAX_SEQUENCE) {
                if (f !== 0x6d) this.dispatchCsi(s.slice(i + 1, k), f);
                i = k + 1;
                continue;
              }
            }
            this.enterEscape();
          } else if (c === 0x9b) this.enterCsi();
          else if (c === 0x9d) this.enterString(true);
          else if (c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) this.enterString(false);
          else if (c < 0x20 || c === 0x7f) sink.control(c);
          // Other C1 controls (including a stray 8-bit ST) are dropped.
          continue;
        }
        case ESCAPE: {
          const c = s.charCodeAt(i);
          if (c < 0x20) {
            // C0 controls inside a sequence are executed (VT behaviour); CAN/SUB abort it.
            i++;
            if (c === 0x1b) this.enterEscape();
            else if (c === 0x18 || c === 0x1a) this.state = GROUND;
            else sink.control(c);
            continue;
          }
          if (c >= 0x80) {
            // Not a sequence after all: resume at this character as text.
            this.state = GROUND;
            continue;
          }
          i++;
          if (++this.seqLen > MAX_SEQUENCE) {
            this.state = GROUND;
            continue;
          }
          if (c === 0x7f) continue;
          if (c >= 0x20 && c <= 0x2f) {
            this.intermediates += s[i - 1];
            continue;
          }
          if (this.intermediates === '') {
            if (c === 0x5b /* [ */) {
              this.enterCsi();
              continue;
            }
            if (c === 0x5d /* ] */) {
              this.enterString(true);
              continue;
            }
            if (c === 0x50 /* P */ || c === 0x58 /* X */ || c === 0x5e /* ^ */ || c === 0x5f /* _ */) {
              this.enterString(false);
              continue;
            }
          }
          this.state = GROUND;
          sink.esc(this.intermediates, c);
          continue;
        }
        case CSI: {
          let j = i;
          while (j < n) {
            const c = s.charCodeAt(j);
            if (c < 0x20 || c > 0x3f) break;
            j++;
          }
          if (this.seqLen + (j - i) > MAX_SEQUENCE) {
            i += Math.max(0, MAX_SEQUENCE - this.seqLen);
            this.state = GROUND;
            this.csiBuf = '';
            continue;
          }
          this.seqLen += j - i;
          if (j === n) {
            this.csiBuf += s.slice(i, j);
            return;
          }
          const c = s.charCodeAt(j);
          if (c >= 0x40 && c <= 0x7e) {
            const body = this.csiBuf === '' ? s.slice(i, j) : this.csiBuf + s.slice(i, j);
            this.csiBuf = '';
            this.state = GROUND;
            i = j + 1;
            if (c !== 0x6d) this.dispatchCsi(body, c);
            continue;
          }
          this.csiBuf += s.slice(i, j);
          i = j + 1;
          if (c === 0x1b) this.enterEscape();
          else if (c === 0x18 || c === 0x1a) this.state = GROUND;
          else if (c < 0x20) sink.control(c);
          else if (c === 0x7f) this.seqLen++;
          else {
            // A non-ASCII character cannot be part of a CSI: abort and show it.
            this.state = GROUND;
            this.csiBuf = '';
            i = j;
          }
          continue;
        }
        case STRING: {
          STRING_END.lastIndex = i;
          const m = STRING_END.exec(s);
          const j = m === null ? n : m.index;
          if (this.seqLen + (j - i) > MAX_SEQUENCE) {
            i += Math.max(0, MAX_SEQUENCE - this.seqLen);
            this.state = GROUND;
            continue;
          }
          this.seqLen += j - i;
          if (m === null) return;
          const c = s.charCodeAt(j);
          i = j + 1;
          if (c === 0x1b) this.state = STRING_ESC;
          else if (c === 0x07 && !this.isOsc)
            this.seqLen++; // BEL ends only OSC
          else this.state = GROUND;
          continue;
        }
        case STRING_ESC: {
          if (s.charCodeAt(i) === 0x5c /* \ */) {
            i++;
            this.state = GROUND;
          } else {
            // ESC not followed by '\' ends the string and starts a new sequence.
            this.enterEscape();
          }
          continue;
        }
      }
    }
  }

  private dispatchCsi(body: string, final: number): void {
    // Parameters (0x30–0x3f) come first, intermediates (0x20–0x2f) last.
    let k = body.length;
    while (k > 0 && body.charCodeAt(k - 1) <= 0x2f) k--;
    this.sink.csi(k === body.length ? body : body.slice(0, k), k === body.length ? '' : body.slice(k), final);
  }

  private enterEscape(): void {
    this.state = ESCAPE;
    this.seqLen = 1;
    this.intermediates = '';
  }

  private enterCsi(): void {
    this.state = CSI;
    this.seqLen = 2;
    this.csiBuf = '';
  }

  private enterString(osc: boolean): void {
    this.state = STRING;
    this.seqLen = 2;
    this.isOsc = osc;
  }
}

// Cell widths: enough of Unicode East Asian Width / emoji presentation to place a
// cursor the way a terminal would. Sorted, inclusive [from, to] pairs.
const ZERO_WIDTH: readonly number[] = [
  0x0300, 0x036f, 0x0483, 0x0489, 0x0591, 0x05bd, 0x0610, 0x061a, 0x064b, 0x065f, 0x0670, 0x0670, 0x06d6, 0x06dc, 0x0900, 0x0902, 0x093a, 0x093c, 0x0941,
  0x0948, 0x094d, 0x094d, 0x0e31, 0x0e31, 0x0e34, 0x0e3a, 0x0e47, 0x0e4e, 0x1ab0, 0x1aff, 0x1dc0, 0x1dff, 0x200b, 0x200f, 0x202a, 0x202e, 0x2060, 0x2064,
  0x20d0, 0x20ff, 0xfe00, 0xfe0f, 0xfe20, 0xfe2f, 0xfeff, 0xfeff, 0x1f3fb, 0x1f3ff, 0xe0000, 0xe0fff,
];
const WIDE: readonly number[] = [
  0x1100, 0x115f, 0x231a, 0x231b, 0x2329, 0x232a, 0x23e9, 0x23ec, 0x23f0, 0x23f0, 0x23f3, 0x23f3, 0x25fd, 0x25fe, 0x2614, 0x2615, 0x2648, 0x2653, 0x267f,
  0x267f, 0x2693, 0x2693, 0x26a1, 0x26a1, 0x26aa, 0x26ab, 0x26bd, 0x26be, 0x26c4, 0x26c5, 0x26ce, 0x26ce, 0x26d4, 0x26d4, 0x26ea, 0x26ea, 0x26f2, 0x26f3,
  0x26f5, 0x26f5, 0x26fa, 0x26fa, 0x26fd, 0x26fd, 0x2705, 0x2705, 0x270a, 0x270b, 0x2728, 0x2728, 0x274c, 0x274c, 0x274e, 0x274e, 0x2753, 0x2755, 0x2757,
  0x2757, 0x2795, 0x2797, 0x27b0, 0x27b0, 0x27bf, 0x27bf, 0x2b1b, 0x2b1c, 0x2b50, 0x2b50, 0x2b55, 0x2b55, 0x2e80, 0x303e, 0x3041, 0x33ff, 0x3400, 0x4dbf,
  0x4e00, 0xa4cf, 0xa960, 0xa97f, 0xac00, 0xd7a3, 0xf900, 0xfaff, 0xfe10, 0xfe19, 0xfe30, 0xfe6f, 0xff00, 0xff60, 0xffe0, 0xffe6, 0x16fe0, 0x16fe4, 0x17000,
  0x18aff, 0x1b000, 0x1b2ff, 0x1f004, 0x1f004, 0x1f0cf, 0x1f0cf, 0x1f18e, 0x1f18e, 0x1f191, 0x1f19a, 0x1f200, 0x1f251, 0x1f300, 0x1f3fa, 0x1f400, 0x1f64f,
  0x1f680, 0x1f6ff, 0x1f7e0, 0x1f7eb, 0x1f90c, 0x1f9ff, 0x1fa70, 0x1faff, 0x20000, 0x2fffd, 0x30000, 0x3fffd,
];

function inRanges(table: readonly number[], cp: number): boolean {
  let lo = 0;
  let hi = table.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < table[mid * 2]!) hi = mid - 1;
    else if (cp > table[mid * 2 + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Terminal cells taken by a code point: 0 (combining/zero-width), 1, or 2 (wide/emoji). */
export function cellWidth(cp: number): number {
  if (cp < 0x300) return 1;
  if (inRanges(ZERO_WIDTH, cp)) return 0;
  return inRanges(WIDE, cp) ? 2 : 1;
}

/** Code point at `i` and its length in UTF-16 units (a lone surrogate is its own code point). */
export function codePointLen(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 2;
  }
  return 1;
}

/** Cells taken by `s` (tabs count as one cell: the projection keeps them as characters). */
export function stringWidth(s: string): number {
  let w = 0;
  for (let i = 0; i < s.length;) {
    const c = s.charCodeAt(i);
    if (c < 0x300) {
      w++;
      i++;
      continue;
    }
    const k = codePointLen(s, i);
    w += cellWidth(k === 2 ? s.codePointAt(i)! : c);
    i += k;
  }
  return w;
}

/** UTF-8 length of `s`, counting a lone surrogate as U+FFFD (3 bytes) like Buffer does. */
export function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** Longest prefix of `s` whose UTF-8 encoding fits in `maxBytes`, never splitting a surrogate pair. */
export function utf8Prefix(s: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    let b: number;
    let k = 1;
    if (c < 0x80) b = 1;
    else if (c < 0x800) b = 2;
    else if ((k = codePointLen(s, i)) === 2) b = 4;
    else b = 3;
    if (bytes + b > maxBytes) break;
    bytes += b;
    i += k;
  }
  return i === s.length ? s : s.slice(0, i);
}
