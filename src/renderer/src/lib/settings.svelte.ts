import { terminalFontSize } from '../terminal/theme';

/** Kept in this browser (or the app's renderer) across restarts. */
const settingsKey = 'tandem.settings';

export const minFontSize = 9;
export const maxFontSize = 28;

interface Stored {
  typingTakesOver: boolean;
  fontSize: number;
}

const defaults: Stored = { typingTakesOver: true, fontSize: terminalFontSize };

function clampFontSize(value: number): number {
  return Number.isFinite(value) ? Math.min(maxFontSize, Math.max(minFontSize, Math.round(value))) : defaults.fontSize;
}

function read(): Stored {
  try {
    const raw = JSON.parse(localStorage.getItem(settingsKey) ?? '{}') as Partial<Stored>;
    return {
      typingTakesOver: typeof raw.typingTakesOver === 'boolean' ? raw.typingTakesOver : defaults.typingTakesOver,
      fontSize: typeof raw.fontSize === 'number' ? clampFontSize(raw.fontSize) : defaults.fontSize,
    };
  } catch {
    return { ...defaults };
  }
}

/** The person's preferences for this UI. */
export class SettingsStore {
  #values = $state<Stored>(read());

  /** Typing into a terminal an agent drives takes control (else typing is held back). */
  get typingTakesOver(): boolean {
    return this.#values.typingTakesOver;
  }

  set typingTakesOver(value: boolean) {
    this.#values.typingTakesOver = value;
    this.save();
  }

  get fontSize(): number {
    return this.#values.fontSize;
  }

  set fontSize(value: number) {
    this.#values.fontSize = clampFontSize(value);
    this.save();
  }

  reset(): void {
    this.#values = { ...defaults };
    this.save();
  }

  private save(): void {
    try {
      localStorage.setItem(settingsKey, JSON.stringify(this.#values));
    } catch {
      // Storage can be unavailable (privacy settings); settings then last for this page only.
    }
  }
}

export const settings = new SettingsStore();
