/** How long after a keyboard, paste, IME or drop event the terminal's data counts as typed. */
export const typedWindowMs = 1000;

const typingEvents = ['keydown', 'paste', 'compositionstart', 'compositionupdate', 'compositionend', 'drop'] as const;
const pointerEvents = ['mousedown', 'mouseup', 'wheel', 'touchstart'] as const;

/** Focus reports (mode 1004) and mouse reports (X10, UTF-8, SGR, URXVT encodings). */
const reportPattern = /^\x1b\[(?:[IO]|M[\s\S]{3}|<\d+;\d+;\d+[Mm]|\d+;\d+;\d+M)$/;

/**
 * xterm.js reports the person's keystrokes, its own protocol replies, focus and mouse reports
 * through the same data event. The host lets only typed input take control of an agent's
 * terminal, so data counts as typed only shortly after the person typed into this view, with
 * no click or wheel since, and never when it is a focus or mouse report.
 */
export class TypedInputTracker {
  private lastTypedAt = Number.NEGATIVE_INFINITY;
  private lastPointerAt = Number.NEGATIVE_INFINITY;
  private readonly markTyped = (): void => {
    this.lastTypedAt = this.now();
  };
  private readonly markPointer = (): void => {
    this.lastPointerAt = this.now();
  };

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Listens in the capture phase so xterm.js cannot stop an event before it is seen. */
  observe(element: HTMLElement): () => void {
    const options = { capture: true, passive: true };
    for (const type of typingEvents) element.addEventListener(type, this.markTyped, options);
    for (const type of pointerEvents) element.addEventListener(type, this.markPointer, options);
    return () => {
      for (const type of typingEvents) element.removeEventListener(type, this.markTyped, options);
      for (const type of pointerEvents) element.removeEventListener(type, this.markPointer, options);
    };
  }

  /** The person chose Paste in the view's menu: what follows is theirs, though it came from a click. */
  markMenuPaste(): void {
    this.lastTypedAt = this.now();
  }

  isTyped(data: string): boolean {
    if (reportPattern.test(data)) return false;
    return this.lastTypedAt > this.lastPointerAt && this.now() - this.lastTypedAt <= typedWindowMs;
  }
}
