import type { Clock } from './clock.js';

/** A program's own title longer than this is cut: it is a tab label, not a document. */
export const programTitleMaxChars = 120;
/** After a state change the foreground job is looked at again this much later: a fork execs its program a moment after. */
export const programRecheckMs = 300;

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
    this.shown = this.oscTitle ?? this.foreground();
    return this.shown;
  }

  /** The terminal's state changed: its foreground program may change a moment later too. */
  stateChanged(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
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
