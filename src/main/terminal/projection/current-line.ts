/** The output projection's current line (`left` | cursor | `right`), where \r, \b and CSI K/G/C/D/P/@/X edit. */
import { cellWidth, codePointLen, stringWidth, utf8Length } from './ansi';
import { dropCells, isHighSurrogate, own, trimSpaces, zeroWidthAt } from './projection-lines';

/** Bound for blank padding from cursor motion (terminals clamp to the screen width). */
const MAX_PAD = 1024;

export class CurrentLine {
  /**
   * Characters the line may hold while it is written. Nothing past maxBytes can be shown,
   * so more is dropped and counted; the slack keeps small edits near the cut exact.
   */
  private readonly lineChars: number;
  private left = '';
  private right = '';
  /** The cursor sits on the second cell of the wide character starting `right`. */
  private pad = false;
  /**
   * Bytes written past lineChars characters on the line: dropped, but an erase can still
   * undo them. Trailing spaces among them are kept apart, as they are not output.
   */
  private lineCut = 0;
  private lineCutSpaces = 0;
  /** Bytes cut from lines finished here or made editable again. */
  cutBytes = 0;

  constructor(lineChars: number) {
    this.lineChars = lineChars;
  }

  /** The line's text as written, trailing spaces and all. */
  raw(): string {
    return this.right === '' ? this.left : this.left + this.right;
  }

  /** The unfinished line may be a small slice of a big chunk; copying it costs less than the chunk. */
  compact(chunkLen: number): void {
    if (this.left.length * 2 < chunkLen) this.left = own(this.left);
    if (this.right.length * 2 < chunkLen) this.right = own(this.right);
  }

  /**
   * `s[a, b)` for the line. Finished lines are compacted per chunk (OutputProjector.compactFresh);
   * a long line still being built could collect slices of many chunks, so its small pieces are copied.
   */
  private piece(s: string, a: number, b: number, chunkLen: number): string {
    const t = s.slice(a, b);
    return this.left.length > 1024 && (b - a) * 2 < chunkLen ? own(t) : t;
  }

  /** Writes `s[a, b)` (no controls but \t) at the cursor, overwriting; `chunkLen` is the pushed chunk's length. */
  write(s: string, a: number, b: number, chunkLen: number): void {
    if (a >= b) return;
    if (this.right === '' && !this.pad) {
      if (this.left.length >= this.lineChars) {
        this.dropText(s.slice(a, b));
        return;
      }
      this.left += this.piece(s, a, b, chunkLen);
    } else {
      const str = this.piece(s, a, b, chunkLen);
      if (this.pad) {
        // Writing on the second half of a wide character blanks its first half.
        this.pad = false;
        this.left += ' ';
        this.right = ' ' + this.right.slice(codePointLen(this.right, 0));
      }
      this.left += str;
      this.right = dropCells(this.right, stringWidth(str));
    }
    // Characters are at least one byte, so lineChars characters hold every byte that could be shown.
    if (this.left.length > this.lineChars) {
      let k = this.lineChars;
      if (k > 0 && isHighSurrogate(this.left.charCodeAt(k - 1))) k--;
      this.dropText(this.left.slice(k));
      this.left = this.left.slice(0, k);
    }
  }

  private dropText(t: string): void {
    const kept = trimSpaces(t);
    if (kept === '') {
      this.lineCutSpaces += t.length;
      return;
    }
    this.lineCut += this.lineCutSpaces + utf8Length(kept);
    this.lineCutSpaces = t.length - kept.length;
  }

  /** Bytes the line lost to the maxBytes cut, as its trimmed text `raw` would show them. */
  lineCutBytes(raw: string, trimmed: string): number {
    // With text dropped after it, trailing blanks of the kept part were not trailing.
    return this.lineCut === 0 ? 0 : this.lineCut + raw.length - trimmed.length;
  }

  carriageReturn(): void {
    if (this.left !== '') {
      this.right = this.right === '' ? this.left : this.left + this.right;
      this.left = '';
    }
    this.pad = false;
  }

  /**
   * The line as finished text, trailing spaces trimmed. A line longer than maxBytes
   * is cut only when committed: until then a redraw may still shorten it.
   */
  finish(): string {
    const raw = this.right === '' ? this.left : this.left + this.right;
    const s = trimSpaces(raw);
    this.cutBytes += this.lineCutBytes(raw, s);
    this.lineCut = this.lineCutSpaces = 0;
    return s;
  }

  /** Starts over on another line, cursor at its start: `text` is what that line holds. */
  moveTo(text: string): void {
    this.left = '';
    this.right = text;
    this.pad = false;
  }

  column(): number {
    return stringWidth(this.left) + (this.pad ? 1 : 0);
  }

  cursorToColumn(col: number): void {
    if (col === 0) {
      this.carriageReturn();
      return;
    }
    const cur = this.column();
    if (col > cur) this.cursorRight(col - cur);
    else if (col < cur) this.cursorLeft(cur - col);
  }

  cursorLeft(n: number): void {
    if (this.pad) {
      this.pad = false;
      n--;
    }
    const left = this.left;
    let i = left.length;
    let cells = 0;
    while (i > 0 && cells < n) {
      const c = left.charCodeAt(i - 1);
      let k = 1;
      let cp = c;
      if (c >= 0xdc00 && c <= 0xdfff && i >= 2 && isHighSurrogate(left.charCodeAt(i - 2))) {
        k = 2;
        cp = left.codePointAt(i - 2)!;
      }
      const w = cp < 0x300 ? 1 : cellWidth(cp);
      i -= k;
      if (w === 0) continue; // combining marks travel with their base character
      if (cells + w > n) {
        // Landing inside a wide character.
        this.pad = true;
        break;
      }
      cells += w;
    }
    if (i === left.length) return;
    this.right = left.slice(i) + this.right;
    this.left = left.slice(0, i);
  }

  cursorRight(n: number): void {
    if (this.pad) {
      this.pad = false;
      const k = codePointLen(this.right, 0);
      this.left += this.right.slice(0, k);
      this.right = this.right.slice(k);
      n--;
    }
    const right = this.right;
    let i = 0;
    let cells = 0;
    while (i < right.length && cells < n) {
      const k = codePointLen(right, i);
      const c = right.charCodeAt(i);
      const w = c < 0x300 ? 1 : cellWidth(k === 2 ? right.codePointAt(i)! : c);
      if (w === 0) {
        i += k;
        continue;
      }
      if (cells + w > n) {
        this.pad = true;
        cells = n;
        break;
      }
      cells += w;
      i += k;
    }
    if (!this.pad) {
      while (i < right.length && zeroWidthAt(right, i)) i += codePointLen(right, i);
    }
    if (i > 0) {
      this.left += right.slice(0, i);
      this.right = right.slice(i);
    }
    if (cells < n) this.left += ' '.repeat(Math.min(n - cells, MAX_PAD));
  }

  eraseLine(mode: number): void {
    if (mode !== 1) this.lineCut = this.lineCutSpaces = 0;
    if (mode === 0) {
      if (this.pad) this.left += ' ';
      this.right = '';
    } else if (mode === 1 || mode === 2) {
      const w = this.column();
      const after = mode === 2 ? '' : this.pad ? this.right.slice(codePointLen(this.right, 0)) : dropCells(this.right, 1);
      this.left = ' '.repeat(w);
      this.right = mode === 2 ? '' : ' ' + after;
    }
    this.pad = false;
  }

  /** CSI P: deletes `count` cells at the cursor. */
  deleteCells(count: number): void {
    this.pad = false;
    this.right = dropCells(this.right, count);
  }

  /** CSI @: inserts `count` blanks at the cursor. */
  insertBlanks(count: number): void {
    this.pad = false;
    this.right = ' '.repeat(Math.min(count, MAX_PAD)) + this.right;
  }

  /** CSI X: blanks `count` cells at the cursor. */
  eraseCells(count: number): void {
    this.pad = false;
    const k = Math.min(count, MAX_PAD);
    this.right = ' '.repeat(k) + dropCells(this.right, k);
  }

  /**
   * A window line made editable again, cut to lineChars like a line written in place
   * (lines arriving in bulk are not cut until committed), so results do not depend on
   * how the input was split into chunks.
   */
  editable(line: string): string {
    if (line.length <= this.lineChars) return line;
    let k = this.lineChars;
    if (isHighSurrogate(line.charCodeAt(k - 1))) k--;
    const kept = trimSpaces(line.slice(0, k));
    this.cutBytes += utf8Length(line) - utf8Length(kept);
    return kept;
  }
}
