import type { Terminal } from '@xterm/xterm';

/** A mark as the ruler draws it: its buffer line and colour. */
export interface RulerMark {
  readonly line: number;
  readonly color: string;
}

/** Redraws caused only by lines scrolling (the marks move up the ruler) come at most this often. */
export const rulerScrollRedrawMs = 250;

/**
 * The command marks' overview ruler: one canvas over xterm.js's own ruler (which keeps drawing its
 * border and takes the space), drawn the way xterm.js draws a `position: 'left'` decoration. It is
 * drawn when the marks, the size or the colours change, and, while output scrolls, at most every
 * `rulerScrollRedrawMs`: never per mark per frame (xterm.js redraws its ruler from every decoration
 * on every frame the viewport moves).
 */
export class MarkRuler {
  private canvas: HTMLCanvasElement | null = null;
  private frame = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private observer: ResizeObserver | null = null;
  private observed: Element | null = null;
  /** The buffer length last drawn for (positions scale with it). */
  private drawnLength = -1;
  private drawnShift = 0;
  private disposed = false;

  constructor(
    private readonly term: Terminal,
    private readonly marks: () => Iterable<RulerMark>,
    /** Lines dropped from the buffer's top so far: each moves every mark up. */
    private readonly shift: () => number,
  ) {}

  /** The marks changed: drawn in the next animation frame. */
  invalidate(): void {
    if (this.disposed || this.frame) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  /** Lines were added or dropped: the marks moved along the ruler; drawn soon, not on every frame. */
  scrolled(): void {
    if (this.disposed || this.frame || this.timer) return;
    const buffer = this.term.buffer.normal;
    if (buffer.length === this.drawnLength && this.shift() === this.drawnShift) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.invalidate();
    }, rulerScrollRedrawMs);
  }

  private draw(): void {
    const host = this.term.element;
    // xterm.js's ruler: where ours goes, its size, and hidden on the alternate screen.
    const theirs = host?.querySelector<HTMLCanvasElement>('canvas.xterm-decoration-overview-ruler:not(.command-mark-ruler)');
    if (!host || !theirs) return;
    if (!this.canvas || this.canvas.parentElement !== theirs.parentElement) {
      this.canvas?.remove();
      this.canvas = document.createElement('canvas');
      this.canvas.className = 'xterm-decoration-overview-ruler command-mark-ruler';
      this.canvas.setAttribute('aria-hidden', 'true');
      theirs.after(this.canvas);
    }
    if (this.observed !== theirs) {
      this.observer?.disconnect();
      this.observer = new ResizeObserver(() => this.invalidate());
      this.observer.observe(theirs);
      this.observed = theirs;
    }
    const canvas = this.canvas;
    const normal = this.term.buffer.active.type === 'normal';
    canvas.style.display = normal ? 'block' : 'none';
    if (canvas.width !== theirs.width) canvas.width = theirs.width;
    if (canvas.height !== theirs.height) canvas.height = theirs.height;
    canvas.style.width = theirs.style.width;
    canvas.style.height = theirs.style.height;
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    const length = this.term.buffer.normal.length;
    this.drawnLength = length;
    this.drawnShift = this.shift();
    if (!normal || length === 0 || canvas.height === 0) return;
    // xterm.js's OverviewRulerRenderer for `position: 'left'`: a third of the width after its
    // 1px border, between 6 and 12 px high (a line's share when larger), centred on the line.
    const dpr = window.devicePixelRatio || 1;
    const width = Math.floor((canvas.width - 1) / 3);
    const height = Math.round(Math.max(Math.min(canvas.height / length, 12), 6) * dpr);
    const scale = (canvas.height - 1) / length;
    let lastY = Number.NaN;
    let lastColor = '';
    for (const mark of this.marks()) {
      if (mark.line < 0) continue;
      const y = Math.round(scale * mark.line - height / 2);
      // Marks closer than a pixel draw one rectangle (10,000 marks, a few hundred pixels).
      if (y === lastY && mark.color === lastColor) continue;
      if (mark.color !== lastColor) ctx.fillStyle = mark.color;
      ctx.fillRect(1, y, width, height);
      lastY = y;
      lastColor = mark.color;
    }
  }

  dispose(): void {
    this.disposed = true;
    if (this.frame) cancelAnimationFrame(this.frame);
    if (this.timer) clearTimeout(this.timer);
    this.observer?.disconnect();
    this.canvas?.remove();
    this.canvas = null;
  }
}
