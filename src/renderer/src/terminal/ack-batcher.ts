import { ackDelayMs, ackEveryChars } from '../../../shared/wire';

/**
 * Flow control towards the host: frames are acknowledged after xterm.js has applied them,
 * batched so a flood does not cost one call per frame.
 */
export class AckBatcher {
  private appliedSeq = 0;
  private ackedSeq = 0;
  private charsSinceAck = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly send: (seq: number) => void) {}

  /** Starts over after (re)attaching: `seq` is covered by the snapshot. */
  reset(seq: number): void {
    this.cancel();
    this.appliedSeq = seq;
    this.ackedSeq = seq;
    this.charsSinceAck = 0;
  }

  applied(seq: number, chars: number): void {
    if (seq <= this.appliedSeq) return;
    this.appliedSeq = seq;
    this.charsSinceAck += chars;
    if (this.charsSinceAck >= ackEveryChars) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), ackDelayMs);
  }

  flush(): void {
    this.cancel();
    if (this.appliedSeq <= this.ackedSeq) return;
    this.ackedSeq = this.appliedSeq;
    this.charsSinceAck = 0;
    this.send(this.ackedSeq);
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
