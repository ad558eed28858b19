import serializeAddon from '@xterm/addon-serialize';
import type { SerializeAddon as SerializeAddonType } from '@xterm/addon-serialize';
import unicode11Addon from '@xterm/addon-unicode11';
import type { Unicode11Addon as Unicode11AddonType } from '@xterm/addon-unicode11';
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { ColdHistory } from './cold-history.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };
const { SerializeAddon } = serializeAddon as unknown as { SerializeAddon: typeof SerializeAddonType };
const { Unicode11Addon } = unicode11Addon as unknown as { Unicode11Addon: typeof Unicode11AddonType };

/**
 * How far (in characters) parsing may lag the PTY before older unparsed output is skipped.
 * The emulator parses ~30 MB/s; floods are faster, and they must not stall the PTY or grow memory.
 */
export const maxParseLagChars = 4 * 1024 * 1024;

/** The window over which cold serialization time is budgeted. */
const coldWindowMs = 200;

/** Lines moved to cold history at a time: the emulator's buffer is resized once per batch. */
export const coldBatchLines = 500;

/**
 * Whether unparsed output may contain a request the emulator answers (DSR/CPR `CSI 6n`, DA
 * `CSI c`, window reports `CSI t`, DECRQM `CSI $p`). A cheap over-approximation: caller input
 * waits for the parser only when this says so, so an `echo` round trip never waits for it.
 */
const requestPattern = /\x1b\[[?>=]?[\d;]*(?:n|c|t|\$p)|\x1b\[[\d;?>=]*$|\x1b$/;

export interface EmulatorOptions {
  cols: number;
  rows: number;
  /** Total scrollback lines kept (hot in the emulator, the rest cold). */
  scrollback: number;
  /** Scrollback lines kept live in the emulator; older ones are serialized into cold history. */
  hotLines?: number;
  /**
   * Share of time that serializing cold history may take (default 0.1). Floods scroll faster
   * than that: their middle is dropped from scrollback (with a visible note) rather than
   * slowing the terminal down.
   */
  coldBudget?: number;
  /** Protocol replies (cursor position, device attributes) to write back to the PTY. */
  onReply: (data: string) => void;
}

/**
 * The host's headless emulator. It answers terminal protocol requests and keeps the screen.
 * One parser write is in flight at a time; output arriving meanwhile is coalesced into the next.
 */
export class Emulator {
  readonly terminal: HeadlessTerminal;
  private pending = '';
  private writing = false;
  private requestsPending = false;
  private disposed = false;
  private idleWaiters: Array<() => void> = [];
  private readonly serializer: SerializeAddonType;
  private readonly cold: ColdHistory;
  private readonly hotLines: number;
  private readonly coldBudget: number;
  private coldWindowStart = 0;
  private coldSpentMs = 0;
  /** Characters fed so far, and characters parsed (or skipped) so far: offsets of the output stream. */
  private fedChars = 0;
  private parsedChars = 0;
  private snapshotWaiters: Array<(snapshot: { data: string; offset: number }) => void> = [];

  constructor(opts: EmulatorOptions) {
    this.hotLines = Math.min(opts.hotLines ?? 1000, opts.scrollback);
    this.coldBudget = opts.coldBudget ?? 0.1;
    this.cold = new ColdHistory(opts.scrollback - this.hotLines);
    this.terminal = new Terminal({
      cols: opts.cols,
      rows: opts.rows,
      scrollback: this.hotLines + (opts.scrollback > this.hotLines ? 2 * coldBatchLines : 0),
      allowProposedApi: true,
    });
    this.serializer = new SerializeAddon();
    this.terminal.loadAddon(this.serializer);
    // The renderer's xterm uses the same width tables, so cursor positions agree on emoji and CJK.
    this.terminal.loadAddon(new Unicode11Addon());
    this.terminal.unicode.activeVersion = '11';
    this.terminal.onData((data) => opts.onReply(data));
  }

  feed(data: string): void {
    if (this.disposed) return;
    this.fedChars += data.length;
    if (!this.requestsPending && requestPattern.test(data)) this.requestsPending = true;
    if (this.writing) {
      this.pending += data;
      if (this.pending.length > maxParseLagChars) this.skipLag();
      return;
    }
    this.write(data);
  }

  /** Drops the older half of unparsed output at a line start, keeping the newest for the screen. */
  private skipLag(): void {
    const cut = this.pending.indexOf('\n', this.pending.length - maxParseLagChars / 2);
    if (cut < 0) return;
    this.parsedChars += cut + 1;
    this.skippedChars += cut + 1;
    this.pending = this.pending.slice(cut + 1);
  }

  /** Output characters never parsed because a flood outran the parser. */
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

  private write(data: string): void {
    this.writing = true;
    const end = this.sliceEnd(data);
    if (end < data.length) {
      this.pending = data.slice(end) + this.pending;
      data = data.slice(0, end);
    }
    this.terminal.write(data, () => {
      if (this.disposed) return;
      this.parsedChars += data.length;
      this.evictCold();
      if (this.snapshotWaiters.length > 0) {
        const snapshot = { data: this.serialize(), offset: this.parsedChars };
        for (const resolve of this.snapshotWaiters.splice(0)) resolve(snapshot);
      }
      if (this.pending.length > 0) {
        const next = this.pending;
        this.pending = '';
        this.write(next);
        return;
      }
      this.writing = false;
      this.requestsPending = false;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    });
  }

  /** True when caller input must wait for the parser so protocol replies go first. */
  get mustDrainBeforeInput(): boolean {
    return this.requestsPending;
  }

  /**
   * The serialized screen at a parse boundary, with the output offset it covers: output after
   * that offset is what a new viewer must receive next. Never waits for a flood to end.
   */
  snapshot(): Promise<{ data: string; offset: number }> {
    if (!this.writing || this.disposed) return Promise.resolve({ data: this.serialize(), offset: this.fedChars });
    return new Promise((resolve) => this.snapshotWaiters.push(resolve));
  }

  /** Resolves when everything fed so far has been parsed (and its replies emitted). */
  drained(): Promise<void> {
    if (!this.writing || this.disposed) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Moves the oldest batch of scrollback lines out of the live buffer into cold history. */
  private evictCold(): void {
    const buffer = this.terminal.buffer.normal;
    const scrollbackLines = buffer.length - this.terminal.rows;
    if (this.hotLines >= this.terminal.options.scrollback! || scrollbackLines < this.hotLines + coldBatchLines) return;
    const count = scrollbackLines - this.hotLines;
    const now = performance.now();
    if (now - this.coldWindowStart > coldWindowMs) {
      this.coldWindowStart = now;
      this.coldSpentMs = 0;
    }
    if (this.coldSpentMs <= coldWindowMs * this.coldBudget) {
      const text = this.serializer.serialize({ range: { start: 0, end: count - 1 }, excludeModes: true, excludeAltBuffer: true });
      this.cold.push(text.replace(/(?:\r\n)+$/, ''), count);
      this.coldSpentMs += performance.now() - now;
    } else {
      this.cold.skip(count);
    }
    // Shrinking the scrollback drops the oldest lines; growing it again makes room for the next batches.
    const full = this.terminal.options.scrollback!;
    this.terminal.options.scrollback = this.hotLines;
    this.terminal.options.scrollback = full;
  }

  /** Cold history, then the live scrollback, screen, cursor and modes, as terminal output. */
  serialize(): string {
    const hot = this.serializer.serialize();
    return this.cold.lines > 0 ? `${this.cold.serialize()}\r\n${hot}` : hot;
  }

  resize(cols: number, rows: number): void {
    if (!this.disposed) this.terminal.resize(cols, rows);
  }

  get altScreen(): boolean {
    return this.terminal.buffer.active.type === 'alternate';
  }

  /** The visible screen as text, rows trimmed, trailing empty rows dropped. */
  screenText(): string {
    const buffer = this.terminal.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < this.terminal.rows; y++) {
      rows.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '');
    }
    while (rows.length > 0 && rows[rows.length - 1] === '') rows.pop();
    return rows.join('\n');
  }

  cursor(): { row: number; col: number } {
    const buffer = this.terminal.buffer.active;
    return { row: buffer.cursorY, col: buffer.cursorX };
  }

  dispose(): void {
    if (this.disposed) return;
    for (const resolve of this.snapshotWaiters.splice(0)) resolve({ data: '', offset: this.fedChars });
    this.disposed = true;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
    this.terminal.dispose();
  }
}
