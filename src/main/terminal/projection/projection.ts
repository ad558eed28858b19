/**
 * Output projection: turns what a command wrote to the terminal into what a
 * person would read in its scrollback, bounded to a byte budget.
 *
 * Lines flow through three stages:
 *  - the current line (CurrentLine, current-line.ts), where \r, \b, CSI K/G/C/D… edit;
 *  - a window of recent finished lines (`done`, raw text, each line ending in \n),
 *    still reachable by cursor-up for in-place multi-line redraws;
 *  - committed storage: a HEAD kept as it streamed, then a TAIL of blocks that
 *    keeps only the newest bytes and counts what it drops.
 * Plain floods are handled per chunk, not per line, until lines are committed;
 * the window text stays raw (CRLF, trailing spaces) and is projected when read.
 *
 * Columns are terminal cells (wide CJK/emoji take two). Line wrapping is not modelled:
 * a line is everything between newlines. A line longer than maxBytes + 1024 characters is
 * cut while it streams; an edit reaching back past that cut can make omittedBytes inexact.
 */
import type { Truncation } from '../../../shared/types';
import { AnsiScanner, type AnsiSink, utf8Length, utf8Prefix } from './ansi';
import { CurrentLine } from './current-line';
import {
  crStart,
  firstParam,
  measureLines,
  NewestLines,
  OldestLines,
  own,
  RAW_LINE_END,
  rawLineEnd,
  ringCum,
  ringEnds,
  scanBlock,
  trimSpaces,
} from './projection-lines';

export interface ProjectionOptions {
  /** UTF-8 bytes of output at most (a marker line alone may exceed a budget under 64 bytes). */
  maxBytes: number;
  /** Share of maxBytes for the head (the start of the output); default 0.25. */
  headFraction?: number;
}

export interface Projected {
  output: string;
  truncated: Truncation | null;
  altScreen: boolean;
}

/** Room kept for the omission marker line, so head + marker + tail stays within maxBytes. */
const MARKER_RESERVE = 64;
/** Recent lines kept editable for cursor-up redraws (a full screen is at most 200 rows). */
const WINDOW_LINES = 256;
const MIN_WINDOW_CHARS = 32 * 1024;
/** A complete SGR (colour/attribute) sequence not preceded by another ESC. */
const SGR = /(?<!\x1b)\x1b\[[0-9;:]*m/g;

interface Block {
  /** Lines, each ending in \n; may still carry CRs and trailing spaces before the \n. */
  text: string;
  lines: number;
  /** Projected UTF-8 bytes, counting one byte per line for its newline. */
  bytes: number;
  /** Its lines and bytes as a snapshot projects them (measureLines), once one needed them: scanBlock trims a line's mixed CRs and spaces (`a\r \r`) further than rawLineEnd. */
  measured?: { lines: number; bytes: number };
}

export class OutputProjector implements AnsiSink {
  private readonly maxBytes: number;
  private readonly headLimit: number;
  /** Longest line shown once output is truncated, in bytes; always fits the tail budget. */
  private readonly lineCap: number;
  private readonly windowChars: number;
  private readonly scanner: AnsiScanner;

  private seen = 0;
  private heldHigh = '';
  private chunkLen = 0;
  private alt = false;

  private readonly line: CurrentLine;
  /** Lines below the cursor after a cursor-up; the next row down is last. */
  private readonly below: string[] = [];

  // Window of finished lines not yet committed.
  private done: string[] = [];
  private doneChars = 0;
  /** Window parts appended during the current push(); they may be slices of its chunk. */
  private fresh = 0;

  // Committed storage.
  private readonly head: string[] = [];
  private headBytes = 0;
  private headFull = false;
  private readonly tail: Block[] = [];
  private tailBytes = 0;
  private evictedLines = 0;
  private evictedBytes = 0;
  /** Bytes cut at commit from lines too long to ever be shown whole (the current line counts its own cuts). */
  private cutBytes = 0;

  constructor(opts: ProjectionOptions) {
    const max = Math.floor(opts.maxBytes);
    if (!(max >= 1)) throw new RangeError(`maxBytes must be a positive number, got ${opts.maxBytes}`);
    const f = opts.headFraction ?? 0.25;
    const frac = Number.isFinite(f) ? Math.min(1, Math.max(0, f)) : 0.25;
    this.maxBytes = max;
    this.headLimit = Math.floor(max * frac);
    // -1: every tail line costs its bytes plus a separator.
    this.lineCap = Math.max(0, max - this.headLimit - MARKER_RESERVE - 1);
    this.line = new CurrentLine(max + 1024);
    this.windowChars = Math.max(max, MIN_WINDOW_CHARS);
    this.scanner = new AnsiScanner(this);
  }

  get altScreen(): boolean {
    return this.alt;
  }

  get bytesSeen(): number {
    return this.seen;
  }

  push(text: string): void {
    if (this.heldHigh !== '') {
      text = this.heldHigh + text;
      this.heldHigh = '';
    }
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      // Half of a surrogate pair: wait for the other half so widths and bytes stay right.
      this.heldHigh = text.slice(-1);
      text = text.slice(0, -1);
    }
    if (text.length === 0) return;
    this.seen += utf8Length(text);
    // Colours are most escape sequences in practice and never move the cursor: removing
    // complete ones natively first saves the scanner a round trip each.
    if (this.scanner.idle && text.includes('\x1b[')) text = text.replace(SGR, '');
    this.chunkLen = text.length;
    this.fresh = 0;
    this.scanner.feed(text);
    this.compactFresh();
    this.line.compact(this.chunkLen);
  }

  snapshot(): Projected {
    let window = '';
    if (this.done.length > 0) {
      window = this.done.length === 1 ? this.done[0]! : this.done.join('');
      this.done = [window]; // keep the join for the next snapshot
    }
    const raw = this.line.raw();
    const current = trimSpaces(raw);
    const cut = this.cutBytes + this.line.cutBytes + this.line.lineCutBytes(raw, current);
    // Everything after the head, oldest first: the stored blocks and the window (raw text, each
    // line projected as it is read), then the current line and the rows below it. A flood holds
    // tens of thousands of lines there and shows a few hundred: they are counted whole, and
    // only the lines shown are split out (the head's from the start, the rest from the end).
    const texts: string[] = [];
    let count = 0;
    let total = 0;
    for (const b of this.tail) {
      b.measured ??= measureLines(b.text);
      count += b.measured.lines;
      total += b.measured.bytes;
      texts.push(b.text);
    }
    if (window !== '') {
      const m = measureLines(window);
      count += m.lines;
      total += m.bytes;
      texts.push(window);
    }
    const last = [current];
    for (let i = this.below.length - 1; i >= 0; i--) last.push(this.below[i]!);
    for (const line of last) total += utf8Length(line) + 1;
    count += last.length;
    const older = new NewestLines(texts);
    let k = last.length;
    const newest = (): string | undefined => (k > 0 ? last[--k] : older.next());

    // Trailing empty lines at the very end are not output (as far as they are still held).
    let line = newest();
    while (line === '') {
      count--;
      total--;
      line = newest();
    }
    let headEnd = this.head.length;
    let hBytes = this.headBytes;
    if (line === undefined && this.evictedLines === 0) {
      while (headEnd > 0 && this.head[headEnd - 1] === '') {
        headEnd--;
        hBytes--;
      }
    }

    // The head takes pending lines the same way commit() would (nothing is stored before it is full).
    const out = this.head.slice(0, headEnd);
    if (!this.headFull) {
      const oldest = new OldestLines(texts, last);
      for (; count > 0; count--) {
        const next = oldest.next()!;
        const b = utf8Length(next) + 1;
        if (hBytes + b > this.headLimit) break;
        out.push(next);
        hBytes += b;
        total -= b;
      }
    }
    // The `count` lines after the head, newest first.
    let left = count;
    const rest = (): string | undefined => {
      if (left === 0) return undefined;
      left--;
      if (line === undefined) return newest();
      const first = line;
      line = undefined;
      return first;
    };
    const nothingDropped = this.evictedLines === 0 && this.evictedBytes === 0 && cut === 0;
    if (nothingDropped && hBytes + total - 1 <= this.maxBytes) {
      const lines: string[] = [];
      for (let next = rest(); next !== undefined; next = rest()) lines.push(next);
      for (let r = lines.length - 1; r >= 0; r--) out.push(lines[r]!);
      return { output: out.join('\n'), truncated: null, altScreen: this.alt };
    }
    return this.keepNewest(out, hBytes, count, total, cut, rest);
  }

  /**
   * The newest lines (given newest first by `next`) that fit next to the head and the marker,
   * and the marker with what was left out: `count` lines of `total` bytes were after the head.
   */
  private keepNewest(out: string[], hBytes: number, count: number, total: number, cut: number, next: () => string | undefined): Projected {
    const budget = Math.max(0, this.maxBytes - hBytes - MARKER_RESERVE);
    const kept: string[] = [];
    let keptBytes = 0;
    for (let line = next(); line !== undefined; line = next()) {
      let b = utf8Length(line);
      if (b > this.lineCap) {
        line = trimSpaces(utf8Prefix(line, this.lineCap));
        b = utf8Length(line);
      }
      if (keptBytes + b + 1 > budget) break;
      kept.push(line);
      keptBytes += b + 1;
    }
    const omittedLines = this.evictedLines + count - kept.length;
    const omittedBytes = this.evictedBytes + cut + total - keptBytes;
    if (omittedLines === 0 && omittedBytes === 0) {
      for (let k = kept.length - 1; k >= 0; k--) out.push(kept[k]!);
      return { output: out.join('\n'), truncated: null, altScreen: this.alt };
    }
    out.push(`… ${omittedLines} ${omittedLines === 1 ? 'line' : 'lines'} (${omittedBytes} bytes) omitted …`);
    for (let k = kept.length - 1; k >= 0; k--) out.push(kept[k]!);
    return { output: out.join('\n'), truncated: { omittedLines, omittedBytes }, altScreen: this.alt };
  }

  // ---- AnsiSink -------------------------------------------------------------

  /** @internal */
  text(s: string, start: number, end: number): void {
    if (this.alt) return;
    if (start !== 0 || end !== s.length) {
      // Work on the run alone so indexOf never scans past it.
      s = s.slice(start, end);
    }
    const n = s.length;
    let nl = s.indexOf('\n');
    if (nl === -1) {
      this.line.write(s, 0, n, this.chunkLen);
      return;
    }
    // With no rows below, the line after this newline starts empty, so whole lines can be appended.
    const fast = this.below.length === 0;
    this.line.write(s, 0, crStart(s, 0, nl), this.chunkLen);
    this.newline();
    let p = nl + 1;
    if (fast) {
      // The lines between the first and the last \n go to the window as one piece.
      const last = s.lastIndexOf('\n');
      if (last >= p) {
        const t = s.slice(p, last + 1);
        this.appendDone((last + 1 - p) * 2 < this.chunkLen ? own(t) : t);
        p = last + 1;
      }
    } else {
      while ((nl = s.indexOf('\n', p)) !== -1) {
        this.line.write(s, p, crStart(s, p, nl), this.chunkLen);
        this.newline();
        p = nl + 1;
      }
    }
    if (p < n) this.line.write(s, p, n, this.chunkLen);
  }

  /** @internal */
  control(code: number): void {
    if (this.alt) return;
    if (code === 0x0d) this.line.carriageReturn();
    else if (code === 0x08) this.line.cursorLeft(1);
    else if (code === 0x0a) this.newline(); // only reaches here from inside a sequence
  }

  /** @internal */
  csi(params: string, intermediates: string, final: number): void {
    if (final === 0x6d /* m */ || intermediates !== '') return;
    const marker = params.charCodeAt(0);
    if (final === 0x68 /* h */ || final === 0x6c /* l */) {
      if (marker === 0x3f /* ? */) this.setPrivateModes(params, final === 0x68);
      return;
    }
    if (this.alt) return;
    const priv = marker >= 0x3c && marker <= 0x3f;
    // CSI ? K (selective erase) erases like CSI K for our purposes; other private sequences do not edit text.
    if (priv && !(marker === 0x3f && final === 0x4b)) return;
    const n = firstParam(params, priv ? 1 : 0);
    const count = Math.max(1, n);
    switch (final) {
      case 0x4b /* K */:
        this.line.eraseLine(n);
        break;
      case 0x47 /* G */:
      case 0x60 /* ` */:
        this.line.cursorToColumn(count - 1);
        break;
      case 0x43 /* C */:
      case 0x61 /* a */:
        this.line.cursorRight(count);
        break;
      case 0x44 /* D */:
        this.line.cursorLeft(count);
        break;
      case 0x41 /* A */:
        this.cursorUp(count, false);
        break;
      case 0x46 /* F */:
        this.cursorUp(count, true);
        break;
      case 0x42 /* B */:
      case 0x65 /* e */:
        this.cursorDown(count, false);
        break;
      case 0x45 /* E */:
        this.cursorDown(count, true);
        break;
      case 0x50 /* P */:
        this.line.deleteCells(count);
        break;
      case 0x40 /* @ */:
        this.line.insertBlanks(count);
        break;
      case 0x58 /* X */:
        this.line.eraseCells(count);
        break;
      // Absolute positioning (CUP, VPA) and screen erases have no meaning for a line log: ignored.
    }
  }

  /** @internal */
  esc(intermediates: string, final: number): void {
    if (intermediates !== '') return; // charset designations and the like
    if (final === 0x63 /* c: full reset */) {
      this.alt = false;
      return;
    }
    if (this.alt) return;
    if (final === 0x45 /* E: NEL */ || final === 0x44 /* D: IND */) this.newline();
    else if (final === 0x4d /* M: RI */) this.cursorUp(1, false);
  }

  private setPrivateModes(params: string, on: boolean): void {
    for (const p of params.slice(1).split(';')) {
      if (p === '1049' || p === '1047' || p === '47') this.alt = on;
    }
  }

  // ---- window -----------------------------------------------------------------

  private newline(): void {
    const line = this.line.finish();
    this.line.moveTo(this.below.length > 0 ? this.below.pop()! : '');
    this.appendDone(line + '\n');
  }

  private appendDone(part: string): void {
    this.done.push(part);
    this.fresh++;
    this.doneChars += part.length;
    if (this.doneChars > 2 * this.windowChars) this.flush();
  }

  /**
   * Joins the window parts of this chunk into one fresh string. Parts are often
   * slices of the chunk, and V8 slices keep their whole parent alive; one join
   * per chunk is much cheaper than copying every line.
   */
  private compactFresh(): void {
    const k = Math.min(this.fresh, this.done.length);
    this.fresh = 0;
    if (k === 0) return;
    if (k === 1) {
      const last = this.done[this.done.length - 1]!;
      if (last.length * 2 < this.chunkLen) this.done[this.done.length - 1] = own(last);
      return;
    }
    const joined = this.done.splice(this.done.length - k, k).join('');
    this.done.push(joined);
  }

  /** Commits all but the newest window lines (at most WINDOW_LINES and windowChars). */
  private flush(): void {
    const d = this.done.length === 1 ? this.done[0]! : this.done.join('');
    const minCut = d.length - this.windowChars;
    let cut = d.length;
    for (let k = 0; k < WINDOW_LINES && cut > 0; k++) {
      const start = cut >= 2 ? d.lastIndexOf('\n', cut - 2) + 1 : 0;
      if (start < minCut) break;
      cut = start;
    }
    if (cut === 0) {
      this.done = [d];
      return;
    }
    const keep = d.slice(cut);
    this.done = keep === '' ? [] : [keep.length * 2 < d.length ? own(keep) : keep];
    this.fresh = 0; // d is a fresh join, or a part that is at least half its chunk
    this.doneChars = keep.length;
    this.commit(d.slice(0, cut));
  }

  private cursorUp(n: number, toStart: boolean): void {
    // Only lines still in the window can be redrawn; otherwise the move is ignored.
    let avail = 0;
    for (let pi = this.done.length - 1; pi >= 0 && avail < n; pi--) {
      const part = this.done[pi]!;
      for (let end = part.length - 1; end >= 0 && avail < n; avail++) {
        end = end > 0 ? part.lastIndexOf('\n', end - 1) : -1;
      }
    }
    if (avail < n) return;
    const col = toStart ? 0 : this.line.column();
    this.below.push(this.line.finish());
    let target = '';
    for (let k = 0; k < n; k++) {
      const last = this.done.length - 1;
      const part = this.done[last]!;
      const end = part.length - 1;
      const start = end > 0 ? part.lastIndexOf('\n', end - 1) + 1 : 0;
      const line = this.line.editable(part.slice(start, rawLineEnd(part, start, end)));
      if (start === 0) {
        this.done.pop();
        if (this.fresh > 0) this.fresh--;
      } else this.done[last] = part.slice(0, start);
      this.doneChars -= end + 1 - start;
      if (k === n - 1) target = line;
      else this.below.push(line);
    }
    this.line.moveTo(target);
    if (col > 0) this.line.cursorRight(col);
  }

  private cursorDown(n: number, toStart: boolean): void {
    if (this.below.length === 0) return; // already on the newest line: nothing to scroll to
    const col = toStart ? 0 : this.line.column();
    for (let k = 0; k < n && this.below.length > 0; k++) {
      const line = this.line.finish();
      this.line.moveTo(this.below.pop()!);
      this.appendDone(line + '\n');
    }
    if (col > 0) this.line.cursorRight(col);
  }

  // ---- storage ----------------------------------------------------------------

  private commit(text: string): void {
    if (!this.headFull) {
      let p = 0;
      while (p < text.length) {
        const nl = text.indexOf('\n', p);
        const line = text.slice(p, rawLineEnd(text, p, nl));
        const b = utf8Length(line) + 1;
        if (this.headBytes + b > this.headLimit) {
          this.headFull = true;
          break;
        }
        this.head.push(own(line));
        this.headBytes += b;
        p = nl + 1;
      }
      if (p >= text.length) return;
      text = text.slice(p);
    }
    let scan = scanBlock(text, this.maxBytes);
    if (scan.longest > this.maxBytes) {
      text = this.cutLongLines(text);
      scan = scanBlock(text, this.maxBytes);
    }
    if (text.length > 2 * scan.bytes + 1024) {
      // Mostly trailing blanks: store it projected, or memory would not follow the byte budget.
      text = text.replace(RAW_LINE_END, '\n');
      scan = scanBlock(text, this.maxBytes);
    }
    const block: Block = { text, lines: scan.lines, bytes: scan.bytes };
    this.tail.push(block);
    this.tailBytes += block.bytes;
    this.evict(block);
  }

  /** Cuts lines longer than maxBytes (rare, so the text is rebuilt only then). */
  private cutLongLines(text: string): string {
    const pieces: string[] = [];
    let from = 0;
    const longChars = Math.floor(this.maxBytes / 3);
    for (let p = 0; p < text.length;) {
      const nl = text.indexOf('\n', p);
      const e = rawLineEnd(text, p, nl);
      if (e - p > longChars) {
        const line = text.slice(p, e);
        const b = utf8Length(line);
        if (b > this.maxBytes) {
          const c = trimSpaces(utf8Prefix(line, this.maxBytes));
          this.cutBytes += b - utf8Length(c);
          pieces.push(text.slice(from, p), c, '\n');
          from = nl + 1;
        }
      }
      p = nl + 1;
    }
    pieces.push(text.slice(from));
    return pieces.join('');
  }

  /**
   * Drops the oldest tail lines while the rest alone would overflow the output
   * (so dropping them cannot change a snapshot); the exact cut is made at snapshot.
   * `scanned` is the block whose checkpoints scanBlock() left in ringEnds/ringCum.
   */
  private evict(scanned: Block): void {
    const room = Math.max(0, this.maxBytes - this.headBytes);
    while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.bytes >= room) {
      const b = this.tail.shift()!;
      this.evictedLines += b.lines;
      this.evictedBytes += b.bytes;
      this.tailBytes -= b.bytes;
    }
    const first = this.tail[0];
    if (first === undefined || this.tailBytes <= 2 * room + 1024) return;
    // One big block: keep just enough of its newest lines.
    if (first !== scanned) scanBlock(first.text, this.maxBytes);
    const need = room - (this.tailBytes - first.bytes);
    // Most whole lines that can go while the block keeps at least `need` bytes. Every
    // line is at least one byte, so the answer is among the newest `need` checkpoints.
    const size = ringEnds.length;
    let lo = Math.max(0, first.lines - size + 1);
    let hi = first.lines;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (first.bytes - ringCum[mid % size]! >= need) lo = mid;
      else hi = mid - 1;
    }
    if (lo === 0) return;
    const dropped = ringCum[lo % size]!;
    this.evictedLines += lo;
    this.evictedBytes += dropped;
    this.tailBytes -= dropped;
    first.text = own(first.text.slice(ringEnds[lo % size]!));
    first.measured = undefined;
    first.lines -= lo;
    first.bytes -= dropped;
  }
}
