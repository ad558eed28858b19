import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

/**
 * Whether unparsed output may contain a request the emulator answers (DSR/CPR `CSI 6n`, DA
 * `CSI c`, window reports `CSI t`, DECRQM `CSI $p`). A cheap over-approximation: caller input
 * waits for the parser only when this says so, so an `echo` round trip never waits for it.
 */
const requestPattern = /\x1b\[[?>=]?[\d;]*(?:n|c|t|\$p)|\x1b\[[\d;?>=]*$|\x1b$/;

export interface EmulatorOptions {
  cols: number;
  rows: number;
  scrollback: number;
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

  constructor(opts: EmulatorOptions) {
    this.terminal = new Terminal({
      cols: opts.cols,
      rows: opts.rows,
      scrollback: opts.scrollback,
      allowProposedApi: true,
    });
    this.terminal.onData((data) => opts.onReply(data));
  }

  feed(data: string): void {
    if (this.disposed) return;
    if (!this.requestsPending && requestPattern.test(data)) this.requestsPending = true;
    if (this.writing) {
      this.pending += data;
      return;
    }
    this.write(data);
  }

  private write(data: string): void {
    this.writing = true;
    this.terminal.write(data, () => {
      if (this.disposed) return;
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

  /** Resolves when everything fed so far has been parsed (and its replies emitted). */
  drained(): Promise<void> {
    if (!this.writing || this.disposed) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
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
    this.disposed = true;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
    this.terminal.dispose();
  }
}
