import { randomBytes } from 'node:crypto';
import type { FrameMark } from '../../shared/command-marks.js';

/**
 * A frame's output: one string, or the reads it was batched from in order (a transport that
 * encodes frames itself writes them one after another instead of joining them first).
 */
export type OutputText = string | readonly string[];

/** The characters of a frame's output. */
export function outputChars(data: OutputText): number {
  if (typeof data === 'string') return data.length;
  let chars = 0;
  for (const part of data) chars += part.length;
  return chars;
}

/** The output as one string, for transports that carry strings. */
export function outputString(data: OutputText): string {
  return typeof data === 'string' ? data : data.length === 1 ? data[0]! : data.join('');
}

/** `parts` without their first `skip` characters (fewer than they hold): for a viewer whose snapshot covered them. */
export function outputFrom(parts: readonly string[], skip: number): string[] {
  let at = 0;
  while (skip >= parts[at]!.length) skip -= parts[at++]!.length;
  return [parts[at]!.slice(skip), ...parts.slice(at + 1)];
}

/** Where output frames go: one viewer (a renderer tab, a browser tab). */
export interface FrameSink {
  /** `marks`: command marks at character positions of `data` (src/shared/command-marks.ts). */
  frame(attachmentId: string, seq: number, data: OutputText, marks?: readonly FrameMark[]): void;
  closed(attachmentId: string, code: 'capacity' | 'exited' | 'not_found', message: string): void;
  writable(attachmentId: string, writable: boolean): void;
}

/**
 * Characters sent in numbered frames and not acknowledged yet. A frame joins the one before it
 * while that one holds fewer than `mergeUnder` characters, so a stream of tiny frames keeps the
 * list short; an acknowledgement that falls inside merged frames releases them only once it
 * covers the last (the count can run up to `mergeUnder` characters high meanwhile).
 */
export class UnackedFrames {
  private readonly frames: Array<{ seq: number; chars: number }> = [];
  private total = 0;

  constructor(private readonly mergeUnder = 0) {}

  get chars(): number {
    return this.total;
  }

  sent(seq: number, chars: number): void {
    const last = this.frames.at(-1);
    if (last && last.chars < this.mergeUnder) {
      last.seq = Math.max(last.seq, seq);
      last.chars += chars;
    } else this.frames.push({ seq, chars });
    this.total += chars;
  }

  /** Whether this acknowledged any frame. */
  ack(seq: number): boolean {
    let progressed = false;
    while (this.frames.length > 0 && this.frames[0]!.seq <= seq) {
      this.total -= this.frames.shift()!.chars;
      progressed = true;
    }
    return progressed;
  }
}

/**
 * One viewer of one terminal: numbered frames, and the characters it has not acknowledged yet.
 * Frame numbers are per attachment and start after the snapshot it received.
 */
export class Attachment {
  readonly id = randomBytes(12).toString('base64url');
  private seq = 0;
  private readonly unacked = new UnackedFrames();
  lastProgressAt: number;

  constructor(
    readonly clientId: string,
    readonly terminalId: string,
    /** Output offset up to which the snapshot covered the stream. */
    public fromOffset: number,
    private readonly sink: FrameSink,
    now: number,
  ) {
    this.lastProgressAt = now;
  }

  get behindChars(): number {
    return this.unacked.chars;
  }

  get lastSeq(): number {
    return this.seq;
  }

  send(data: OutputText, chars = outputChars(data), marks?: readonly FrameMark[]): void {
    // A mark's news can come without output (a command waits for input): a frame of no characters.
    if (chars === 0 && !marks?.length) return;
    this.seq += 1;
    this.unacked.sent(this.seq, chars);
    if (marks?.length) this.sink.frame(this.id, this.seq, data, marks);
    else this.sink.frame(this.id, this.seq, data);
  }

  ack(seq: number, now: number): void {
    if (this.unacked.ack(seq)) this.lastProgressAt = now;
  }

  setWritable(writable: boolean): void {
    this.sink.writable(this.id, writable);
  }

  close(code: 'capacity' | 'exited' | 'not_found', message: string): void {
    this.sink.closed(this.id, code, message);
  }
}
