import { randomBytes } from 'node:crypto';

/** Where output frames go: one viewer (a renderer tab, a browser tab). */
export interface FrameSink {
  frame(attachmentId: string, seq: number, data: string): void;
  closed(attachmentId: string, code: 'capacity' | 'exited' | 'not_found', message: string): void;
  writable(attachmentId: string, writable: boolean): void;
}

/**
 * One viewer of one terminal: numbered frames, and the characters it has not acknowledged yet.
 * Frame numbers are per attachment and start after the snapshot it received.
 */
export class Attachment {
  readonly id = randomBytes(12).toString('base64url');
  private seq = 0;
  private readonly unacked: Array<{ seq: number; chars: number }> = [];
  private unackedTotal = 0;
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
    return this.unackedTotal;
  }

  get lastSeq(): number {
    return this.seq;
  }

  send(data: string): void {
    if (data.length === 0) return;
    this.seq += 1;
    this.unacked.push({ seq: this.seq, chars: data.length });
    this.unackedTotal += data.length;
    this.sink.frame(this.id, this.seq, data);
  }

  ack(seq: number, now: number): void {
    let progressed = false;
    while (this.unacked.length > 0 && this.unacked[0]!.seq <= seq) {
      this.unackedTotal -= this.unacked.shift()!.chars;
      progressed = true;
    }
    if (progressed) this.lastProgressAt = now;
  }

  setWritable(writable: boolean): void {
    this.sink.writable(this.id, writable);
  }

  close(code: 'capacity' | 'exited' | 'not_found', message: string): void {
    this.sink.closed(this.id, code, message);
  }
}
