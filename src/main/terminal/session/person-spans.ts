/**
 * What the person did while they held an agent's terminal (their lease, from takeover to
 * hand-back) is theirs: the agent sees it only if the person chose to share it on hand-back
 * (agent-api.md, `handoff.summary`; default off). The hand-back result already kept it out;
 * this keeps it out of `terminal_read` and `terminal_wait` too, which read the same terminal by
 * stream offsets (since a cursor) and by buffer lines (the screen and scrollback).
 *
 * - Stream: each private lease is an offset range; text read across it gets a notice instead.
 * - Lines: from the first takeover on, agents read lines from a view of their own, a second
 *   headless xterm.js that only ever parses that redacted stream (the person's shared emulator
 *   at the takeover, then the stream with a notice for each lease). No byte of the person's
 *   is in a buffer an agent reads, so nothing the agent prints later (scrolls, regions,
 *   reverse index) and no reflow after a resize can bring one into view: an earlier design
 *   that marked the person's lines in the shared emulator was beaten by both (black-box round
 *   s41). The view is fed when an agent reads, from the bounded history: nothing is parsed
 *   twice for a terminal no agent reads.
 */
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { headlessTerminal } from '../emulator/emulator.js';

/** What replaces the person's private output in what the agent reads. */
export const personNotice = "[the person's output while they had control: not shared]";
const noticeLine = `\r\n${personNotice}\r\n`;

/** Leases kept as stream ranges; past it the two oldest merge (hiding the agent's output between: safe). */
const maxStreamSpans = 32;

interface StreamSpan {
  from: number;
  to: number | null;
}

/** The parts of the session the view is built from. */
export interface ViewSource {
  cols(): number;
  rows(): number;
  /** Lines the view keeps above its screen. */
  scrollback: number;
  /** The shared emulator's serialized screen and scrollback now, and the stream offset it covers (it may lag the stream). */
  serialize(): { data: string; offset: number };
  /** History text in [from, to) (what is retained of it). */
  slice(from: number, to: number): string;
  /** The stream offset now. */
  offset(): number;
}

export class PersonSpans {
  private readonly streams: StreamSpan[] = [];
  private view: HeadlessTerminal | null = null;
  /** Where the view has been fed up to (a stream offset). */
  private fed = 0;
  /** Stream offsets of the person's Clears not yet applied to the view. */
  private readonly clears: number[] = [];
  private catchingUp: Promise<void> = Promise.resolve();
  private disposed = false;

  constructor(private readonly source: ViewSource) {}

  /** How much is kept (the bounds' test). */
  get sizes(): { streams: number; view: boolean } {
    return { streams: this.streams.length, view: this.view !== null };
  }

  /** The view as fed so far (no catch-up): for a result that shows the screen, after `agentBuffer` ran. */
  get viewNow(): HeadlessTerminal | null {
    return this.view;
  }

  /** Whether a lease's output is still the person's (held, or handed back while their program ran). */
  get open(): boolean {
    return this.streams.at(-1)?.to === null;
  }

  /** Whether stream `offset` lies in a private lease. */
  covers(offset: number): boolean {
    return this.streams.some((span) => offset >= span.from && (span.to === null || offset < span.to));
  }

  /** The person took the terminal at stream `offset`. */
  begin(offset: number): void {
    // Still open (the person's program ran on after a hand-back): that lease ends here, private,
    // so sharing the new one cannot show it (black-box round s42 N1).
    const last = this.streams.at(-1);
    if (last && last.to === null) last.to = offset;
    if (!this.view) {
      // Built now, synchronously: the shared emulator holds nothing past `offset` yet (it is fed
      // the stream in order and may only lag it), so nothing of the person's is copied.
      const { data, offset: covered } = this.source.serialize();
      this.view = headlessTerminal({ cols: this.source.cols(), rows: this.source.rows(), scrollback: this.source.scrollback });
      this.view.write(data);
      this.fed = Math.min(covered, offset);
    }
    this.streams.push({ from: offset, to: null });
    if (this.streams.length > maxStreamSpans) {
      const [a, b] = this.streams.splice(0, 2) as [StreamSpan, StreamSpan];
      this.streams.unshift({ from: a.from, to: b.to });
    }
  }

  /** The person handed back at stream `offset`; `share`: they chose to share what they did. */
  end(offset: number, share: boolean): void {
    const span = this.streams.at(-1);
    if (!span || span.to !== null) return;
    if (!share) {
      span.to = offset;
      return;
    }
    this.streams.pop();
    // Shared: the view reads it too, after the notice it may have shown meanwhile.
    this.fed = Math.min(this.fed, span.from);
  }

  /** The person cleared the terminal (the menu's Clear) at stream `offset`: the view clears there too. */
  clear(offset: number): void {
    if (this.view) this.clears.push(offset);
  }

  resize(cols: number, rows: number): void {
    this.view?.resize(cols, rows);
  }

  /** The stream text in `[from, to)` as the agent may read it: private spans become a notice. */
  redactStream(from: number, to: number): string {
    if (this.streams.length === 0) return this.source.slice(from, to);
    const parts: string[] = [];
    let at = from;
    for (const span of this.streams) {
      const end = span.to ?? Number.POSITIVE_INFINITY;
      if (end <= at || span.from >= to) continue;
      if (span.from > at) parts.push(this.source.slice(at, span.from));
      if (span.from >= from) parts.push(noticeLine);
      at = Math.min(to, end);
    }
    if (at < to) parts.push(this.source.slice(at, to));
    return parts.join('');
  }

  /**
   * The buffer an agent reads lines from: the view, brought up to the stream's end, once the
   * person has taken the terminal; the shared emulator's until then (null).
   */
  async agentBuffer(): Promise<HeadlessTerminal | null> {
    if (!this.view) return null;
    this.catchingUp = this.catchingUp.then(() => this.catchUp());
    await this.catchingUp;
    return this.disposed ? null : this.view;
  }

  dispose(): void {
    this.disposed = true;
    this.view?.dispose();
    this.view = null;
  }

  /** Feeds the view what it has not parsed yet, redacted, in order, with the person's Clears where they fell. */
  private async catchUp(): Promise<void> {
    const end = this.source.offset();
    while (this.view && !this.disposed) {
      const clearAt = this.clears[0];
      const stop = clearAt !== undefined && clearAt <= end ? Math.max(clearAt, this.fed) : end;
      if (stop > this.fed) {
        // A notice goes in once per lease: not again when the view was fed part of it before.
        const text = this.redactStream(this.fed, stop);
        this.fed = stop;
        await new Promise<void>((resolve) => this.view!.write(text, resolve));
      }
      if (clearAt === undefined || clearAt > end) return;
      this.clears.shift();
      this.view?.clear();
    }
  }
}
