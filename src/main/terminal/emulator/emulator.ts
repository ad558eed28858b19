import serializeAddon from '@xterm/addon-serialize';
import type { SerializeAddon as SerializeAddonType } from '@xterm/addon-serialize';
import unicode11Addon from '@xterm/addon-unicode11';
import type { Unicode11Addon as Unicode11AddonType } from '@xterm/addon-unicode11';
import { performance } from 'node:perf_hooks';
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal, IMarker } from '@xterm/headless';
import { commandLineOffset } from '../../../shared/command-marks.js';
import type { Palette } from '../../../shared/palette.js';
import { type Clock, systemClock } from '../../clock.js';
import { ColdHistory } from './cold-history.js';
import { windowsPtyInfo } from '../../pty/win-pty.js';
import { answerDynamicColor, answerIndexedColor } from './color-queries.js';
import { compactScreen } from './screen-text.js';
import { serializeLines } from './line-serializer.js';
import { type LineTrims, normalBuffer, normalLines } from './xterm-internals.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };
const { SerializeAddon } = serializeAddon as unknown as { SerializeAddon: typeof SerializeAddonType };
const { Unicode11Addon } = unicode11Addon as unknown as { Unicode11Addon: typeof Unicode11AddonType };

/**
 * Floods: output arriving faster than this (characters per window) is not all parsed. The
 * emulator parses ~16 MB/s on the thread that also feeds viewers and answers agents; during a
 * flood it parses only the newest part of each window (`floodKeepChars`, `floodKeepScreens`), so
 * the screen ends right and the flood does not slow down everything else. Scrollback gets a
 * note where output was skipped. A flood lasts while its windows keep that rate: the next window
 * starts with the next chunk, instead of parsing the first `floodCharsPerWindow` of it again as
 * if nothing had happened.
 */
export const floodWindowMs = 100;
export const floodCharsPerWindow = 1024 * 1024;
/**
 * A flood by what it costs: output arriving while the emulator has a backlog and its thread was
 * busy for at least `floodBusyShare` of each of the last `floodBusyWindows` flood windows (a
 * burst while the thread is busy is no flood). Where the PTY is read on the emulator's own
 * thread (Windows, no pump thread) the arrival rate never shows a flood: parsing takes the
 * thread, so the PTY is read slower, and the output came below the rate while the emulator
 * parsed all of it at a fifth of the speed a flood reaches otherwise.
 */
export const floodBusyShare = 0.9;
export const floodBusyWindows = 3;

/**
 * How busy this thread has been: cumulative active and idle time, in any unit, as
 * `performance.eventLoopUtilization()` gives them. Injected so that the flood-by-cost decision
 * depends on what a test sets, not on the speed or load of the machine it runs on.
 */
export type BusyMeter = () => { active: number; idle: number };
const threadBusy: BusyMeter = () => performance.eventLoopUtilization();
/**
 * The most a flood window keeps: 64K, or a full screen at eight characters a cell on a larger
 * terminal (a full-screen program redrawing in colour). A window at flood rate keeps only its
 * newest `floodKeepScreens` screens of lines within that: what is kept is parsed, and serialized
 * into history as it scrolls away, on the thread that feeds the viewers, and more lines would
 * only be fragments between notes.
 */
export function floodKeepChars(cols: number, rows: number): number {
  return Math.max(64 * 1024, 8 * cols * rows);
}
export const floodKeepScreens = 2;

/**
 * Live lines beyond the hot window before the oldest are recycled by the emulator. Lines are
 * serialized into cold history once they leave the hot window, well before they are recycled:
 * each parser write covers at most half a batch, and its lines are saved when it completes.
 */
export const coldBatchLines = 500;
/** The longest run of parser slices in one turn of the event loop before the next slice waits for the next turn. */
export const parseTurnMs = 3;
/** Below this much unparsed output, nothing is looked at for lines past the scrollback (`dropUnkept`). */
export const unkeptMinChars = 256 * 1024;
/** Characters that change the emulator's state beyond the lines they are on: nothing with one of them is dropped unparsed. */
const stateful = /[\x07\x0e\x0f\x1b\x80-\x9f]/;

/** The line break before the newest `lines` lines of `text`, or -1 when none lies at or after `floor`. */
function breakBefore(text: string, lines: number, floor: number): number {
  // A final line break ends the last line; it starts none.
  let at = text.endsWith('\n') ? text.length - 1 : text.length;
  for (let n = 0; n < lines; n++) {
    at = text.lastIndexOf('\n', at - 1);
    if (at < floor) return -1;
  }
  return at;
}

/** Line feeds in text[from, to). */
function countLines(text: string, from: number, to = text.length): number {
  let lines = 0;
  for (let at = text.indexOf('\n', from); at >= 0 && at < to; at = text.indexOf('\n', at + 1)) lines++;
  return lines;
}

/**
 * Whether unparsed output may contain a request the emulator answers (DSR/CPR `CSI 6n`, DA
 * `CSI c`, window reports `CSI t`, DECRQM `CSI $p`, colour queries `OSC 4/10/11/12 ;?`). A
 * cheap over-approximation: caller input waits for the parser only when this says so, so an
 * `echo` round trip never waits for it.
 */
const requestPattern = /\x1b\[[?>=]?[\d;]*(?:n|c|t|\$p)|\x1b\[[\d;?>=]*$|\x1b$|\x1b\](?:4|1[012])[\d;]*;\?|\x1b\][\d;]*$/;

/**
 * A line the emulator follows for a command mark (command-marks.ts): an xterm marker while the
 * line is in the live buffer (it moves with reflows and trims), then its number in cold history,
 * until cold history drops it or a Clear or a reset erases it.
 */
export class LineRef {
  marker: IMarker | null = null;
  /** The line's number in cold history (ColdHistory.pushed) once it left the live buffer. */
  cold: number | null = null;
  released = false;
  /** The parser reached its offset (a ref placed under the alternate screen follows nothing). */
  placed = false;
  constructor(readonly placement: 'command' | 'cursor') {}
}

/** A snapshot with where it puts the lines the emulator follows and the cursor, counted from its first line. */
export interface EmulatorSnapshot {
  data: string;
  offset: number;
  /** Null: the line is not in the snapshot (erased, or older than its scrollback). */
  lineOf(ref: LineRef): number | null;
  cursorLine: number;
}

export interface EmulatorOptions {
  cols: number;
  rows: number;
  /** Total scrollback lines kept (hot in the emulator, the rest cold). */
  scrollback: number;
  /** Scrollback lines kept live in the emulator; older ones are serialized into cold history. */
  hotLines?: number;
  /** Protocol replies (cursor position, device attributes) to write back to the PTY. */
  onReply: (data: string) => void;
  /** The palette the person sees, read at each colour query (the theme can change at any time). */
  palette?: () => Palette;
  /** Time for the flood window; real time unless a test walks it. */
  clock?: Clock;
  /** This thread's busy time for a flood by cost; the event loop's own unless a test sets it. */
  busy?: BusyMeter;
}

/**
 * The host's headless emulator. It answers terminal protocol requests and keeps the screen.
 * One parser write is in flight at a time; output arriving meanwhile is coalesced into the next.
 */
export class Emulator {
  readonly terminal: HeadlessTerminal;
  private pending = '';
  private writing = false;
  /** When the parser's current run of slices began (`parseTurnMs`). */
  private turnStart = 0;
  private requestsPending = false;
  private disposed = false;
  private idleWaiters: Array<() => void> = [];
  private readonly serializer: SerializeAddonType;
  private readonly cold: ColdHistory;
  private readonly hotLines: number;
  /** Lines of scrollback kept in all (hot and cold). */
  private readonly scrollbackLines: number;
  /** The backlog's length from which `dropUnkept` looks again (a look that found nothing waits for it to double). */
  private unkeptLookAt = unkeptMinChars;
  /** Characters fed so far, and characters parsed (or skipped) so far: offsets of the output stream. */
  private fedChars = 0;
  private parsedChars = 0;
  private snapshotWaiters: Array<(snapshot: EmulatorSnapshot) => void> = [];
  /** Lines to follow, placed when the parser reaches their output offset (oldest first). */
  private lineQueue: Array<{ offset: number; ref: LineRef }> = [];
  /** Followed lines in the live buffer, and those that moved to cold history, oldest first. */
  private liveRefs: LineRef[] = [];
  private coldRefs: LineRef[] = [];
  /** Lines the emulator recycled off the top of the normal buffer, and lines saved to cold history, counted since start. */
  private trimmedLines = 0;
  private savedLines = 0;
  private readonly coldEnabled: boolean;
  /** The normal buffer's line list whose recycling is counted (a full reset replaces it). */
  private trimSource: LineTrims | null = null;
  /** Rows an erase of the scrollback (`CSI 3 J`) is about to trim: erased, not recycled. */
  private erasing = 0;
  /** Output offsets at which the person's Clear applies, oldest first (see `clear`). */
  private clearsAt: number[] = [];
  private rateWindowStart = 0;
  private rateChars = 0;
  private floodTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly clock: Clock;
  /** Note characters at the start of `pending` (not part of the output stream), and the lines it counts. */
  private noteChars = 0;
  private noteSkippedLines = 0;
  private parsedWaiters: Array<{ target: number; resolve: () => void }> = [];
  /** A flood window's output not parsed yet, newest last; what was dropped from its front. */
  private floodChunks: string[] = [];
  private floodChars = 0;
  private floodDropped = 0;
  private floodDroppedLines = 0;
  /** Whether the last flood window kept the flood's rate (its chunks, kept and dropped, are floodChars + floodDropped). */
  private flooding = false;
  private floodWindowEnd = 0;
  /** Windows in a row, sampled last at busySampledAt, in which this thread was busy for floodBusyShare. */
  private busyWindows = 0;
  private busySampledAt = 0;
  private busySample: { active: number; idle: number } | undefined;
  private readonly busy: BusyMeter;

  private get floodKeep(): number {
    return floodKeepChars(this.terminal.cols, this.terminal.rows);
  }

  constructor(opts: EmulatorOptions) {
    this.clock = opts.clock ?? systemClock;
    this.busy = opts.busy ?? threadBusy;
    this.hotLines = Math.min(opts.hotLines ?? 1000, opts.scrollback);
    this.scrollbackLines = opts.scrollback;
    this.cold = new ColdHistory(opts.scrollback - this.hotLines);
    this.terminal = new Terminal({
      cols: opts.cols,
      rows: opts.rows,
      scrollback: this.hotLines + (opts.scrollback > this.hotLines ? coldBatchLines : 0),
      allowProposedApi: true,
      // ConPTY repaints on resize: xterm must not reflow its lines too (see win-pty.ts).
      windowsPty: windowsPtyInfo(),
    });
    this.coldEnabled = opts.scrollback > this.hotLines && normalLines(this.terminal) !== null;
    if (this.coldEnabled) {
      this.watchTrims();
      // A full reset (`ESC c`) makes new buffers: the old scrollback is gone, as on screen.
      this.terminal.buffer.onBufferChange(() => this.watchTrims());
      // Erasing the scrollback (`clear`) erases cold history too, so a reload does not bring it back.
      this.terminal.parser.registerCsiHandler({ final: 'J' }, (params) => {
        if (params[0] === 3 && this.terminal.buffer.active.type === 'normal') {
          this.erasing = Math.max(0, this.terminal.buffer.normal.length - this.terminal.rows);
          this.cold.clear();
        }
        return false;
      });
    }
    this.serializer = new SerializeAddon();
    this.terminal.loadAddon(this.serializer);
    // The renderer's xterm uses the same width tables, so cursor positions agree on emoji and CJK.
    this.terminal.loadAddon(new Unicode11Addon());
    this.terminal.unicode.activeVersion = '11';
    this.terminal.onData((data) => opts.onReply(data));
    const palette = opts.palette;
    if (palette) {
      // Headless xterm.js leaves colour queries unanswered (its browser build answers from its theme).
      const reply = (replies: string[] | null): boolean => {
        for (const data of replies ?? []) opts.onReply(data);
        return replies !== null;
      };
      this.terminal.parser.registerOscHandler(4, (data) => reply(answerIndexedColor(data, palette())));
      for (const ident of [10, 11, 12] as const) {
        this.terminal.parser.registerOscHandler(ident, (data) => reply(answerDynamicColor(ident, data, palette())));
      }
    }
  }

  /** The line list's own trim event is internal to xterm (xterm-internals.ts); without it there is no cold history. */
  private watchTrims(): void {
    const lines = normalLines(this.terminal);
    if (!lines || lines === this.trimSource) return;
    if (this.trimSource) {
      this.cold.clear();
      this.trimmedLines = this.savedLines;
      // A full reset: the old buffer's lines (and what marked them) are gone.
      for (const ref of this.liveRefs.splice(0)) ref.marker = null;
    }
    this.trimSource = lines;
    lines.onTrim((amount) => {
      if (lines !== this.trimSource) return;
      // Runs before the markers' own trim listeners (registered later): their lines are still live.
      this.freezeTrimmed(amount);
      this.trimmedLines += amount;
      if (this.erasing === 0) return;
      // Erased rows count as saved: nothing of them is kept, and no note stands for them.
      this.savedLines = Math.max(this.savedLines, this.trimmedLines);
      this.erasing = 0;
    });
  }

  /**
   * Follows the line at output offset `offset` (fed already): the command's line for a start
   * marker (shared/command-marks.ts `commandLineOffset`), the cursor's for an end. Placed when
   * the parser gets exactly there: no parser write spans the offset. While a full-screen
   * program has the alternate screen nothing is placed (the shell's lines are not shown).
   */
  lineAt(offset: number, placement: 'command' | 'cursor'): LineRef {
    const ref = new LineRef(placement);
    if (this.disposed) return ref;
    this.lineQueue.push({ offset, ref });
    if (!this.writing && !this.unparsed) this.placeDueLines();
    return ref;
  }

  /** Stops following a line (its mark was dropped). */
  release(ref: LineRef): void {
    ref.released = true;
    ref.marker?.dispose();
    ref.marker = null;
    while (this.coldRefs.length > 0 && (this.coldRefs[0]!.released || this.coldRefs[0]!.cold! < this.cold.pushed - this.cold.lines)) this.coldRefs.shift();
  }

  /** Whether a placed line is no longer in the scrollback (erased, recycled, or older than cold history). */
  gone(ref: LineRef): boolean {
    if (!ref.placed) return false;
    const coldFirst = this.cold.pushed - this.cold.lines;
    if (ref.marker && !ref.marker.isDisposed) {
      // A live line already saved to cold history goes when cold history drops it, though the emulator still holds it.
      const unsavedStart = this.savedLines - this.trimmedLines;
      return this.coldEnabled && ref.marker.line < unsavedStart && this.cold.pushed - (unsavedStart - ref.marker.line) < coldFirst;
    }
    return ref.cold === null || ref.cold < coldFirst;
  }

  private placeDueLines(): void {
    while (this.lineQueue.length > 0 && this.lineQueue[0]!.offset <= this.parsedChars) {
      const { ref } = this.lineQueue.shift()!;
      ref.placed = true;
      const buffer = this.terminal.buffer.active;
      if (ref.released || buffer.type !== 'normal') continue;
      ref.marker = this.terminal.registerMarker(ref.placement === 'command' ? commandLineOffset(buffer) : 0) ?? null;
      if (ref.marker) this.liveRefs.push(ref);
    }
  }

  /** Lines about to be recycled: those saved to cold history are followed there, others are gone. */
  private freezeTrimmed(amount: number): void {
    const unsavedStart = this.savedLines - this.trimmedLines;
    while (this.liveRefs.length > 0) {
      const ref = this.liveRefs[0]!;
      const marker = ref.marker;
      if (marker && !marker.isDisposed && marker.line >= amount) break;
      this.liveRefs.shift();
      ref.marker = null;
      if (!marker || marker.isDisposed || ref.released || this.erasing > 0 || marker.line >= unsavedStart) continue;
      ref.cold = this.cold.pushed - (unsavedStart - marker.line);
      this.coldRefs.push(ref);
    }
  }

  /** The snapshot's line numbers, taken with its text (later parsing moves live lines). */
  private takeSnapshot(): EmulatorSnapshot {
    const data = this.serialize();
    const coldShown = this.coldEnabled && this.cold.lines > 0;
    const unsavedStart = this.savedLines - this.trimmedLines;
    const coldFirst = this.cold.pushed - this.cold.lines;
    const coldLines = this.cold.lines;
    const toSnapshot = (line: number): number => (coldShown ? coldLines + line - unsavedStart : line);
    const live = new Map<LineRef, number>();
    for (const ref of this.liveRefs) if (ref.marker && !ref.marker.isDisposed) live.set(ref, toSnapshot(ref.marker.line));
    const normal = this.terminal.buffer.normal;
    return {
      data,
      offset: this.parsedChars,
      cursorLine: toSnapshot(normal.baseY + normal.cursorY),
      lineOf: (ref) => {
        const line = live.get(ref) ?? (ref.cold !== null && coldShown ? ref.cold - coldFirst : null);
        return line !== null && line >= 0 ? line : null;
      },
    };
  }

  feed(data: string): void {
    if (this.disposed) return;
    this.fedChars += data.length;
    if (!this.requestsPending && requestPattern.test(data)) this.requestsPending = true;
    const now = this.clock.now();
    if (now - this.rateWindowStart > floodWindowMs) {
      this.rateWindowStart = now;
      this.rateChars = 0;
    }
    this.rateChars += data.length;
    // A window without output ends a flood.
    if (this.flooding && !this.floodTimer && now - this.floodWindowEnd > floodWindowMs) this.flooding = false;
    if (this.rateChars > floodCharsPerWindow || this.floodTimer || this.flooding || this.saturated(now)) {
      // Flooding: hold the output until the window ends and parse only its newest part. Whole
      // chunks go as soon as newer ones cover the part kept: no copying of what is dropped.
      this.floodChunks.push(data);
      this.floodChars += data.length;
      if (this.floodChars - this.floodChunks[0]!.length >= this.floodKeep) this.dropFloodChunks();
      this.floodTimer ??= this.clock.setTimeout(() => this.endFloodWindow(), floodWindowMs);
      return;
    }
    if (this.writing) {
      this.pending += data;
      return;
    }
    this.write(data);
  }

  private endFloodWindow(): void {
    this.floodTimer = null;
    if (this.disposed) return;
    // Still at flood rate: the next chunk opens the next window. Below it, output is parsed
    // again as it comes, and the rate is measured afresh.
    this.flooding = this.floodChars + this.floodDropped > floodCharsPerWindow || this.saturated(this.clock.now());
    this.floodWindowEnd = this.clock.now();
    if (!this.flooding) {
      this.rateWindowStart = this.clock.now();
      this.rateChars = 0;
    }
    this.skipFlood(this.flooding);
    if (!this.writing && this.pending.length > 0) {
      const next = this.pending;
      this.pending = '';
      this.write(next);
    }
  }

  private dropFloodChunks(): void {
    let n = 0;
    while (n < this.floodChunks.length - 1 && this.floodChars - this.floodChunks[n]!.length >= this.floodKeep) {
      this.floodChars -= this.floodChunks[n]!.length;
      this.floodDropped += this.floodChunks[n]!.length;
      this.floodDroppedLines += countLines(this.floodChunks[n]!, 0);
      n++;
    }
    this.floodChunks.splice(0, n);
  }

  /**
   * Moves the flood window's chunks behind `pending`, dropping unparsed output older than the
   * newest `floodKeepChars` at a line start (of a window at flood rate, the newest screens of
   * lines within that), and leaves a note where output was skipped.
   */
  private skipFlood(atFloodRate: boolean): void {
    let dropped = this.floodDropped;
    let droppedLines = this.floodDroppedLines;
    // Output before dropped chunks is older still: it goes too, with the note (which it counts).
    let noteChars = dropped > 0 ? 0 : this.noteChars;
    if (dropped > 0) {
      dropped += this.pending.length - this.noteChars;
      droppedLines += countLines(this.pending, this.noteChars);
    }
    let text = (dropped > 0 ? '' : this.pending) + this.floodChunks.join('');
    this.floodChunks = [];
    this.floodChars = 0;
    this.floodDropped = 0;
    this.floodDroppedLines = 0;
    let from = text.length > this.floodKeep ? Math.max(text.length - this.floodKeep, noteChars) : -1;
    if (atFloodRate) from = Math.max(from, breakBefore(text, floodKeepScreens * this.terminal.rows, noteChars));
    if (from >= 0) {
      let cut = text.indexOf('\n', from);
      // One endless line (minified code, `tr -d '\n'`) is cut where it stands.
      if (cut < 0) cut = from - 1;
      dropped += cut + 1 - noteChars;
      droppedLines += countLines(text, noteChars, cut + 1);
      text = text.slice(cut + 1);
      noteChars = 0;
    }
    if (dropped <= 0) {
      this.pending = text;
      return;
    }
    // A note still waiting to be parsed is replaced by one that counts both.
    this.noteSkippedLines = this.noteChars > 0 ? this.noteSkippedLines + droppedLines : droppedLines;
    const note = `\r\n\x1b[0;2m[… ${this.noteSkippedLines} lines of a flood skipped …]\x1b[0m\r\n`;
    this.parsedChars += dropped;
    this.skippedChars += dropped;
    this.pending = note + text;
    this.noteChars = note.length;
    this.settleParsedWaiters();
  }

  /**
   * Resolves once everything fed so far has been parsed or skipped: caller input waits for
   * this when a protocol request may be pending, so replies go first. A flood never holds it
   * back for longer than one flood window.
   */
  parsed(): Promise<void> {
    const target = this.fedChars;
    if (this.parsedChars >= target || this.disposed) return Promise.resolve();
    return new Promise((resolve) => this.parsedWaiters.push({ target, resolve }));
  }

  private settleParsedWaiters(): void {
    if (this.parsedWaiters.length === 0) return;
    this.parsedWaiters = this.parsedWaiters.filter((waiter) => {
      if (this.parsedChars < waiter.target) return true;
      waiter.resolve();
      return false;
    });
  }

  /** Output characters never parsed: a flood outran the parser, or they would have scrolled past the whole scrollback. */
  skippedChars = 0;

  /**
   * Parses at most about one eviction batch of rows per write, so no line can scroll past the
   * live buffer before it has been moved to cold history.
   */
  private sliceEnd(data: string): number {
    const maxChars = Math.floor((this.terminal.cols * coldBatchLines) / 4);
    let end = 0;
    for (let lines = 0; lines < coldBatchLines / 2; lines++) {
      const next = data.indexOf('\n', end);
      if (next < 0 || next + 1 > maxChars) return Math.min(data.length, maxChars);
      end = next + 1;
    }
    return end;
  }

  /**
   * A backlog so long that its start would scroll past every line the scrollback keeps (`yes`,
   * `seq 1 1000000`, a log of short lines) before a flood window says so: that start is dropped
   * unparsed, as parsing it would only move lines into cold history to be discarded there (most
   * of the main thread's time under such output, and what kept an interrupt's answer waiting).
   * Exact for the screen and scrollback: the cut is after a CRLF (it stands for the lines it
   * drops, so the next line starts where it would have), at least the scrollback's lines, the
   * screen's and two cold batches' stay after it, and nothing that changes state beyond its own
   * line (an escape or C1 sequence, a bell, a charset shift) nor a Clear or followed line is
   * passed over. No note: the lines dropped were never going to be kept.
   */
  private dropUnkept(data: string): string {
    if (data.length < this.unkeptLookAt) {
      if (data.length < unkeptMinChars) this.unkeptLookAt = unkeptMinChars;
      return data;
    }
    this.unkeptLookAt = data.length * 2;
    if (this.noteChars > 0) return data;
    const keep = this.scrollbackLines + 2 * coldBatchLines + this.terminal.rows + 1;
    let at = data.length;
    for (let lines = 0; lines < keep; lines++) {
      at = data.lastIndexOf('\n', at - 1);
      if (at <= 0) return data;
    }
    let upper = at;
    const nextClear = this.clearsAt[0];
    if (nextClear !== undefined) upper = Math.min(upper, nextClear - this.parsedChars);
    const nextLine = this.lineQueue[0];
    if (nextLine !== undefined) upper = Math.min(upper, nextLine.offset - this.parsedChars);
    const state = data.slice(0, upper).search(stateful);
    if (state >= 0) upper = state;
    const crlf = data.lastIndexOf('\r\n', upper - 2);
    if (crlf < 0) return data;
    const cut = crlf + 2;
    if (cut < unkeptMinChars / 4) return data;
    this.parsedChars += cut;
    this.skippedChars += cut;
    this.unkeptLookAt = unkeptMinChars;
    this.noteChars = 2;
    return `\r\n${data.slice(cut)}`;
  }

  /** The emulator has a backlog on a thread that has been busy (sampled at most once a flood window). */
  private saturated(now: number): boolean {
    if (now - this.busySampledAt >= floodWindowMs) {
      const sample = this.busy();
      const last = this.busySample;
      // Samples further apart than two windows say little about the last one.
      const contiguous = last !== undefined && now - this.busySampledAt < 2 * floodWindowMs;
      const active = contiguous ? sample.active - last.active : 0;
      const total = active + (contiguous ? sample.idle - last.idle : 0);
      const busy = total > 0 && active / total >= floodBusyShare;
      this.busyWindows = busy ? this.busyWindows + 1 : 0;
      this.busySample = sample;
      this.busySampledAt = now;
    }
    return this.busyWindows >= floodBusyWindows && this.writing;
  }

  private write(data: string): void {
    if (!this.writing) this.turnStart = performance.now();
    this.applyDueClears();
    this.placeDueLines();
    this.writing = true;
    data = this.dropUnkept(data);
    let end = this.sliceEnd(data);
    // No parser write spans a Clear's offset: it lands between two writes, exactly there.
    const nextClear = this.clearsAt[0];
    if (nextClear !== undefined) end = Math.min(end, Math.min(this.noteChars, data.length) + nextClear - this.parsedChars);
    // Nor a followed line's: its marker goes where the parser is at that offset.
    const nextLine = this.lineQueue[0];
    if (nextLine !== undefined) end = Math.min(end, Math.min(this.noteChars, data.length) + nextLine.offset - this.parsedChars);
    if (end < data.length) {
      this.pending = data.slice(end) + this.pending;
      data = data.slice(0, end);
    }
    const notes = Math.min(this.noteChars, data.length);
    this.noteChars -= notes;
    this.terminal.write(data, () => {
      if (this.disposed) return;
      this.erasing = 0;
      this.parsedChars += data.length - notes;
      this.applyDueClears();
      this.placeDueLines();
      this.settleParsedWaiters();
      this.evictCold();
      // A snapshot asked for after a Clear shows it: none is taken while one is still to come.
      if (this.snapshotWaiters.length > 0 && this.clearsAt.length === 0) {
        const snapshot = this.takeSnapshot();
        for (const resolve of this.snapshotWaiters.splice(0)) resolve(snapshot);
      }
      // A backlog parsed in one turn of the event loop keeps it from the PTY's next chunk (an
      // end marker after an interrupt) for up to xterm's own 12 ms turn: past parseTurnMs the
      // next slice waits for the loop's next turn, so what arrived meanwhile is read first. What
      // waits stays in `pending`, where feeding, flood windows and snapshots see it.
      if (this.pending.length > 0 && performance.now() - this.turnStart >= parseTurnMs) {
        setImmediate(() => {
          if (this.disposed) return;
          this.turnStart = performance.now();
          this.parseNext();
        });
        return;
      }
      this.parseNext();
    });
  }

  /** After a parser write: the next slice of what is pending, or idle. */
  private parseNext(): void {
    // During a flood window only the last window's kept part is pending: it is parsed, so the
    // screen ends right; anything else would be dropped when the window ends.
    if (this.pending.length > 0 && (!this.floodTimer || this.flooding)) {
      const next = this.pending;
      this.pending = '';
      this.write(next);
      return;
    }
    this.writing = false;
    if (this.unparsed) return;
    this.requestsPending = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Output fed and not yet handed to the parser. */
  private get unparsed(): boolean {
    return this.pending.length > 0 || this.floodChunks.length > 0;
  }

  /** True when caller input must wait for the parser so protocol replies go first. */
  get mustDrainBeforeInput(): boolean {
    return this.requestsPending;
  }

  /**
   * The person's Clear (Tandem's menu, not the program's `clear`): erases the scrollback, cold
   * history included, and the screen but the cursor's line, which moves to the top (xterm's own
   * `clear()`, as VS Code's Clear). It applies exactly after the output fed so far and before any
   * fed later, between two parser writes, and is no output: stream offsets do not move, and
   * nothing reaches the PTY. In a full-screen program only the shell's scrollback goes: the
   * program's screen is its own, and it would not redraw.
   */
  clear(): void {
    if (this.disposed) return;
    this.clearsAt.push(this.fedChars);
    if (!this.writing && !this.unparsed) this.applyDueClears();
  }

  private applyDueClears(): void {
    let due = false;
    // A flood's skip can pass a Clear's offset: it then lands before the skip's note.
    while (this.clearsAt.length > 0 && this.clearsAt[0]! <= this.parsedChars) {
      this.clearsAt.shift();
      due = true;
    }
    if (!due) return;
    if (this.terminal.buffer.active.type === 'normal') {
      // Headless xterm.js's clear() keeps markers (the browser build's does not): the lines they followed are gone.
      for (const ref of this.liveRefs.splice(0)) {
        ref.marker?.dispose();
        ref.marker = null;
      }
      this.terminal.clear();
      // Nothing left in the live buffer was saved: cold history starts again from its top line.
      this.savedLines = this.trimmedLines;
    } else {
      this.eraseNormalScrollback();
    }
    this.cold.clear();
  }

  /** What `CSI 3 J` does to the normal buffer (xterm's eraseInDisplay), while the alternate one is shown. */
  private eraseNormalScrollback(): void {
    const normal = normalBuffer(this.terminal);
    const rows = normal ? normal.lines.length - this.terminal.rows : 0;
    if (!normal || rows <= 0) return;
    // Erased rows count as saved (see watchTrims): nothing of them is kept, and no note stands for them.
    this.erasing = rows;
    normal.lines.trimStart(rows);
    this.erasing = 0;
    normal.ybase = Math.max(normal.ybase - rows, 0);
    normal.ydisp = Math.max(normal.ydisp - rows, 0);
  }

  /**
   * The serialized screen at a parse boundary, with the output offset it covers: output after
   * that offset is what a new viewer must receive next. Never waits for a flood to end.
   */
  snapshot(): Promise<EmulatorSnapshot> {
    if ((!this.writing && !this.unparsed) || this.disposed) return Promise.resolve({ ...this.takeSnapshot(), offset: this.fedChars });
    return new Promise((resolve) => this.snapshotWaiters.push(resolve));
  }

  /** Resolves when everything fed so far has been parsed (and its replies emitted). */
  drained(): Promise<void> {
    if ((!this.writing && !this.unparsed) || this.disposed) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Saves the lines that left the hot window into cold history. They stay in the live buffer
   * until the emulator recycles them (a full line list reuses its oldest line: no allocation).
   */
  private evictCold(): void {
    if (!this.coldEnabled) return;
    // Lines recycled before they could be saved (only after a resize reflowed the buffer).
    if (this.savedLines < this.trimmedLines) {
      this.cold.skip(this.trimmedLines - this.savedLines);
      this.savedLines = this.trimmedLines;
    }
    const buffer = this.terminal.buffer.normal;
    const start = this.savedLines - this.trimmedLines;
    const eligible = buffer.length - this.terminal.rows - this.hotLines;
    // A wrapped line moves whole: cold batches are joined by line breaks. One line longer than
    // half a batch is cut, as it must be before the emulator recycles it.
    let stop = eligible;
    while (stop > start && buffer.getLine(stop)?.isWrapped) stop--;
    if (stop === start) stop = eligible - start >= coldBatchLines / 2 ? eligible : start;
    if (stop <= start) return;
    const text = serializeLines(buffer, start, stop - 1, this.terminal.cols);
    this.cold.push(text, stop - start);
    this.savedLines = this.trimmedLines + stop;
  }

  /** Cold history, then the live scrollback, screen, cursor and modes, as terminal output. */
  serialize(): string {
    if (!this.coldEnabled || this.cold.lines === 0) return this.serializer.serialize();
    // Live lines already saved to cold history are not repeated.
    const unsaved = this.terminal.buffer.normal.length - this.terminal.rows - (this.savedLines - this.trimmedLines);
    return `${this.cold.serialize()}\r\n${this.serializer.serialize({ scrollback: Math.max(0, unsaved) })}`;
  }

  resize(cols: number, rows: number): void {
    if (!this.disposed) this.terminal.resize(cols, rows);
  }

  get altScreen(): boolean {
    return this.terminal.buffer.active.type === 'alternate';
  }

  /** The visible screen as an agent reads it (screen-text.ts: trimmed rows, filler runs counted). */
  screenText(): string {
    return screenTextOf(this.terminal);
  }

  /** The stream offset everything parsed so far covers (a snapshot's `offset`). */
  get parsedOffset(): number {
    return this.parsedChars;
  }

  cursor(): { row: number; col: number } {
    const buffer = this.terminal.buffer.active;
    return { row: buffer.cursorY, col: buffer.cursorX };
  }

  dispose(): void {
    if (this.disposed) return;
    if (this.floodTimer) this.clock.clearTimeout(this.floodTimer);
    this.floodChunks = [];
    this.clearsAt = [];
    for (const waiter of this.parsedWaiters.splice(0)) waiter.resolve();
    for (const resolve of this.snapshotWaiters.splice(0)) resolve({ data: '', offset: this.fedChars, cursorLine: 0, lineOf: () => null });
    this.lineQueue = [];
    this.disposed = true;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
    this.terminal.dispose();
  }
}

/** A terminal's visible screen as an agent reads it (screen-text.ts: trimmed rows, filler runs counted). */
export function screenTextOf(terminal: HeadlessTerminal): string {
  const buffer = terminal.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y < terminal.rows; y++) rows.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '');
  return compactScreen(rows);
}

/** A plain headless xterm.js (the agents' view of person-spans.ts): the same build and width tables as the emulator's. */
export function headlessTerminal(opts: { cols: number; rows: number; scrollback: number }): HeadlessTerminal {
  const terminal = new Terminal({ ...opts, allowProposedApi: true, windowsPty: windowsPtyInfo() });
  terminal.loadAddon(new Unicode11Addon());
  terminal.unicode.activeVersion = '11';
  return terminal;
}
