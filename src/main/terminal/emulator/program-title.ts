import type { Clock } from '../../clock.js';

/** A program's own title longer than this is cut: it is a tab label, not a document. */
export const programTitleMaxChars = 120;
/** After a state change the foreground job is looked at again this much later: a fork execs its program a moment after. */
export const programRecheckMs = 300;
/**
 * The foreground program's name is read from the system again when asked this long after the
 * last read (a job's own child may take the terminal without a state change), and at once after
 * a state change. Rosters are built on every change: a read each time was most of a tool call's
 * cost in the host.
 */
export const programReadMaxAgeMs = 1000;

export interface TitleSource {
  onTitleChange(listener: (title: string) => void): { dispose(): void };
}

/**
 * What a terminal is doing for a person's eyes (`TerminalInfo.program`): the title a program
 * set with OSC 0/2, else the foreground program's name, else null. Calls `onChange` when the
 * value a roster would show changed.
 */
export class ProgramTitle {
  private oscTitle: string | null = null;
  private shown: string | null = null;
  private read: { name: string | null; at: number } | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly titleSub: { dispose(): void };

  constructor(
    titles: TitleSource,
    private readonly foreground: () => string | null,
    private readonly clock: Clock,
    private readonly onChange: () => void,
  ) {
    this.titleSub = titles.onTitleChange((title) => {
      const trimmed = title.trim().slice(0, programTitleMaxChars);
      this.oscTitle = trimmed === '' ? null : trimmed;
      this.report();
    });
  }

  get value(): string | null {
    this.shown = this.oscTitle ?? this.foregroundName();
    return this.shown;
  }

  private foregroundName(): string | null {
    const now = this.clock.now();
    if (!this.read || now - this.read.at >= programReadMaxAgeMs) this.read = { name: this.foreground(), at: now };
    return this.read.name;
  }

  /**
   * The terminal's state changed: its foreground program may change a moment later too. At its
   * prompt the shell itself is in front, which needs no read.
   */
  stateChanged(atPrompt = false): void {
    this.read = atPrompt ? { name: null, at: this.clock.now() } : null;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.read = null;
      this.report();
    }, programRecheckMs);
  }

  private report(): void {
    const before = this.shown;
    if (this.value !== before) this.onChange();
  }

  dispose(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.titleSub.dispose();
  }
}
