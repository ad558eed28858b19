import type { FrameMark } from '../../../shared/command-marks';

/** How long a missing frame may hold back later ones before the view recovers. */
export const frameGapTimeoutMs = 1000;

export interface Frame {
  seq: number;
  data: string;
  /** Command marks at positions in `data`. */
  marks?: readonly FrameMark[];
}

/**
 * Applies an attachment's output frames strictly in sequence order. Frames the snapshot
 * covered are dropped; early ones wait for the gap to fill; a gap that stays open calls
 * `onGap` (the view then re-attaches for a fresh snapshot).
 */
export class FrameSequencer {
  private nextSeq = 1;
  private readonly waiting = new Map<number, Frame>();
  private gapTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly apply: (frame: Frame) => void,
    private readonly onGap: () => void,
  ) {}

  reset(snapshotSeq: number): void {
    this.clearGap();
    this.waiting.clear();
    this.nextSeq = snapshotSeq + 1;
  }

  push(frame: Frame): void {
    if (frame.seq < this.nextSeq) return;
    if (frame.seq > this.nextSeq) {
      this.waiting.set(frame.seq, frame);
      this.gapTimer ??= setTimeout(() => {
        this.gapTimer = null;
        if (this.waiting.size > 0) this.onGap();
      }, frameGapTimeoutMs);
      return;
    }
    this.apply(frame);
    this.nextSeq += 1;
    for (let next = this.waiting.get(this.nextSeq); next !== undefined; next = this.waiting.get(this.nextSeq)) {
      this.waiting.delete(this.nextSeq);
      this.apply(next);
      this.nextSeq += 1;
    }
    if (this.waiting.size === 0) this.clearGap();
  }

  dispose(): void {
    this.clearGap();
    this.waiting.clear();
  }

  private clearGap(): void {
    if (this.gapTimer) clearTimeout(this.gapTimer);
    this.gapTimer = null;
  }
}
