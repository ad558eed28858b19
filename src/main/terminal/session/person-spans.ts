/**
 * What the person did while they held an agent's terminal (their lease, from takeover to
 * hand-back) is theirs: the agent sees it only if the person chose to share it on hand-back
 * (agent-api.md, `handoff.summary`; default off). The hand-back result already kept it out;
 * this keeps it out of `terminal_read` and `terminal_wait` too, which read the same terminal by
 * stream offsets (since a cursor) and by buffer lines (the screen and scrollback).
 *
 * - Stream: each private lease is an offset range; text read across it gets a notice instead.
 * - Lines, while the lease is held: every line from the screen's top at takeover on (anything
 *   the person runs can write anywhere on the screen), and the whole alternate screen.
 * - Lines, after a private hand-back: the lines below that top that are not blank and differ
 *   from what they held at takeover. Those still on the screen get a marker each, so a program
 *   the agent runs later cannot move one out of view with insert- or delete-line sequences
 *   (xterm.js moves a marker with its line and drops it with it); those already in the
 *   scrollback, which only trimming moves, are one range. An alternate screen the person left
 *   open stays private until it is left.
 */
import type { IBufferLine, IMarker, Terminal as HeadlessTerminal } from '@xterm/headless';

/** What replaces the person's private output in what the agent reads. */
export const personNotice = "[the person's output while they had control: not shared]";

/** Leases kept as stream ranges; past it the two oldest merge (hiding the agent's output between: safe). */
const maxStreamSpans = 32;
/** Per-line markers of lines the person left on the screen; past it the oldest are folded into ranges. */
const maxLineMarkers = 512;
/** Scrollback ranges; past it the two oldest merge. */
const maxRanges = 64;

interface StreamSpan {
  from: number;
  to: number | null;
}

/** Lines `[last.line - count + 1, last.line]`: in the scrollback, where only trimming moves them. */
interface LineRange {
  last: IMarker;
  count: number;
}

interface OpenLease {
  /** The normal buffer's screen top at takeover; null while the alternate screen hides it. */
  top: IMarker | null;
  /** The normal screen's rows at takeover, from that top. */
  before: string[];
  /** Handed back and drawn up to the hand-back: judged once the normal screen shows. */
  drawn: boolean;
}

/** Leases waiting for their judgement; past it the newest are dropped, and the oldest (the widest: its top is highest, its rows oldest) hides for them. */
const maxJudging = 8;

function rowText(line: IBufferLine | undefined): string {
  return line?.translateToString(true) ?? '';
}

export class PersonSpans {
  private readonly streams: StreamSpan[] = [];
  private readonly ranges: LineRange[] = [];
  private lineMarkers: IMarker[] = [];
  private open: OpenLease | null = null;
  /**
   * Leases handed back whose lines are not judged yet: until the emulator has drawn everything
   * up to the hand-back, or, under an alternate screen, until the normal one comes back. They
   * hide what an open lease hides meanwhile.
   */
  private judging: OpenLease[] = [];
  private altPrivate = false;
  private readonly offBuffer: { dispose(): void };
  private disposed = false;

  /** `parsed`: resolves once the emulator has drawn everything received so far. */
  constructor(
    private readonly terminal: HeadlessTerminal,
    private readonly parsed: () => Promise<unknown>,
  ) {
    // Fired inside the parse of the switch, before any later byte is drawn on the normal screen.
    this.offBuffer = terminal.buffer.onBufferChange((buffer) => {
      if (buffer.type !== 'normal') return;
      this.altPrivate = false;
      for (const lease of [this.open, ...this.judging]) if (lease && !lease.top) lease.top = this.markTop();
      for (const lease of this.judging.filter((entry) => entry.drawn)) this.judge(lease);
    });
  }

  /** How much is kept (the bench and the bounds' test). */
  get sizes(): { streams: number; ranges: number; lineMarkers: number; judging: number } {
    return { streams: this.streams.length, ranges: this.ranges.length, lineMarkers: this.lineMarkers.length, judging: this.judging.length };
  }

  /** Whether anything is private now (so readers can skip the work when not). */
  get any(): boolean {
    return this.streams.length > 0 || this.open !== null || this.judging.length > 0 || this.altPrivate || this.ranges.length > 0 || this.lineMarkers.length > 0;
  }

  /** The person took the terminal at stream `offset`. */
  begin(offset: number): void {
    if (this.open) return;
    this.streams.push({ from: offset, to: null });
    if (this.streams.length > maxStreamSpans) {
      const [a, b] = this.streams.splice(0, 2) as [StreamSpan, StreamSpan];
      this.streams.unshift({ from: a.from, to: b.to });
    }
    const normal = this.terminal.buffer.normal;
    const before: string[] = [];
    for (let y = normal.baseY; y < normal.length; y++) before.push(rowText(normal.getLine(y)));
    this.open = { top: null, before, drawn: false };
    if (this.terminal.buffer.active.type === 'normal') this.open.top = this.markTop();
  }

  /** The person handed back at stream `offset`; `share`: they chose to share what they did. */
  end(offset: number, share: boolean): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    const span = this.streams.at(-1);
    if (share) {
      this.streams.pop();
      open.top?.dispose();
      return;
    }
    if (span) span.to = offset;
    this.judging.push(open);
    for (const dropped of this.judging.splice(maxJudging)) dropped.top?.dispose();
    void this.parsed().then(() => {
      if (this.disposed || !this.judging.includes(open)) return;
      open.drawn = true;
      // The person left a full-screen program open: its screen is theirs until it is left, and
      // the normal screen is judged when it comes back (nothing draws on it meanwhile).
      if (this.terminal.buffer.active.type === 'normal') this.judge(open);
      else this.altPrivate = true;
    });
  }

  private judge(open: OpenLease): void {
    this.judging.splice(this.judging.indexOf(open), 1);
    this.judgeLines(open);
  }

  /** The stream text in `[from, to)` as the agent may read it: private spans become a notice. */
  redactStream(from: number, to: number, slice: (from: number, to: number) => string): string {
    if (this.streams.length === 0) return slice(from, to);
    const parts: string[] = [];
    let at = from;
    for (const span of this.streams) {
      const end = span.to ?? Number.POSITIVE_INFINITY;
      if (end <= at || span.from >= to) continue;
      if (span.from > at) parts.push(slice(at, span.from));
      parts.push(`\r\n${personNotice}\r\n`);
      at = Math.min(to, end);
    }
    if (at < to) parts.push(slice(at, to));
    return parts.join('');
  }

  /** Whether buffer line `y` of the active buffer is the person's. */
  linePrivate(y: number): boolean {
    if (this.terminal.buffer.active.type !== 'normal') return this.open !== null || this.judging.length > 0 || this.altPrivate;
    for (const lease of [this.open, ...this.judging]) {
      if (!lease?.top) continue;
      if (y >= (lease.top.isDisposed ? 0 : lease.top.line)) return true;
    }
    if (this.lineMarkers.some((marker) => marker.line === y)) return true;
    return this.ranges.some((range) => !range.last.isDisposed && y <= range.last.line && y > range.last.line - range.count);
  }

  /** The lines `[begin, begin + lines.length)` as the agent may read them. */
  redactLines(begin: number, lines: string[]): string[] {
    if (!this.any) return lines;
    let previous = false;
    return lines.map((line, i) => {
      const hidden = this.linePrivate(begin + i);
      const shown = hidden ? (previous ? '' : personNotice) : line;
      previous = hidden;
      return shown;
    });
  }

  dispose(): void {
    this.disposed = true;
    this.offBuffer.dispose();
    for (const lease of [this.open, ...this.judging]) lease?.top?.dispose();
    for (const marker of this.lineMarkers) marker.dispose();
    for (const range of this.ranges) range.last.dispose();
  }

  /** A marker at the normal screen's top (the normal buffer is active). */
  private markTop(): IMarker | null {
    return this.terminal.registerMarker(-this.terminal.buffer.active.cursorY) ?? null;
  }

  /** After a private hand-back on the normal screen: which lines below the takeover's top the person changed. */
  private judgeLines(open: OpenLease): void {
    const buffer = this.terminal.buffer.active;
    const top = open.top === null ? null : open.top.isDisposed ? 0 : open.top.line;
    open.top?.dispose();
    if (top === null) return;
    const cursorLine = buffer.baseY + buffer.cursorY;
    const marked: number[] = [];
    let runEnd = -1;
    let runCount = 0;
    const flushRun = () => {
      if (runCount > 0) this.addRange(runEnd, runCount, cursorLine);
      runCount = 0;
    };
    for (let y = top; y < buffer.length; y++) {
      const text = rowText(buffer.getLine(y));
      if (text === '' || text === open.before[y - top]) continue;
      if (y >= buffer.baseY) {
        marked.push(y);
        continue;
      }
      // In the scrollback: consecutive private lines, with blank ones between, are one range.
      if (runCount > 0 && y - runEnd > 1 && !this.blankBetween(runEnd, y)) flushRun();
      runCount = runCount === 0 ? 1 : runCount + (y - runEnd);
      runEnd = y;
    }
    flushRun();
    for (const y of marked) {
      const marker = this.terminal.registerMarker(y - cursorLine);
      if (marker) this.lineMarkers.push(marker);
    }
    this.bound();
  }

  private blankBetween(from: number, to: number): boolean {
    const buffer = this.terminal.buffer.active;
    for (let y = from + 1; y < to; y++) if (rowText(buffer.getLine(y)) !== '') return false;
    return true;
  }

  private addRange(last: number, count: number, cursorLine: number): void {
    const marker = this.terminal.registerMarker(last - cursorLine);
    if (marker) this.ranges.push({ last: marker, count });
  }

  /** Markers and ranges stay within their bounds; what is folded or merged hides more, never less. */
  private bound(): void {
    this.lineMarkers = this.lineMarkers.filter((marker) => !marker.isDisposed);
    for (let i = this.ranges.length - 1; i >= 0; i--) if (this.ranges[i]!.last.isDisposed) this.ranges.splice(i, 1);
    if (this.lineMarkers.length > maxLineMarkers) {
      // The oldest go first: fold them into one range from the first to the last of them.
      const folded = this.lineMarkers.splice(0, this.lineMarkers.length - maxLineMarkers);
      const lines = folded.map((marker) => marker.line);
      const last = folded[lines.indexOf(Math.max(...lines))]!;
      this.ranges.push({ last, count: Math.max(...lines) - Math.min(...lines) + 1 });
      for (const marker of folded) if (marker !== last) marker.dispose();
    }
    while (this.ranges.length > maxRanges) {
      this.ranges.sort((a, b) => a.last.line - b.last.line);
      const [a, b] = this.ranges.splice(0, 2) as [LineRange, LineRange];
      const first = Math.min(a.last.line - a.count + 1, b.last.line - b.count + 1);
      const lastOf = a.last.line > b.last.line ? a : b;
      (lastOf === a ? b : a).last.dispose();
      this.ranges.unshift({ last: lastOf.last, count: lastOf.last.line - first + 1 });
    }
  }
}
