import type { TandemApi } from '../../../shared/contract';
import { type Appearance, defaultSettings, fontSizeBounds, resolveAppearance, type Settings, type SettingsPatch } from '../../../shared/settings';
import { type Problem, toProblem } from './problem';
import { legacySettingsKey, legacySettingsPatch } from './settings-migration';

export const minFontSize = fontSizeBounds.min;
export const maxFontSize = fontSizeBounds.max;

/** The last appearance drawn, so a reload paints in it before the host answers (a cache, not the settings). */
const appearanceKey = 'tandem.appearance';

function cachedAppearance(): Appearance | null {
  try {
    const value = localStorage.getItem(appearanceKey);
    return value === 'light' || value === 'dark' ? value : null;
  } catch {
    return null;
  }
}

function systemQuery(): MediaQueryList | null {
  return typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
}

/**
 * The person's settings as the host keeps them: read on connect, followed through the
 * `settings` event (another window changed them), changed through `setSettings`. A change
 * shows at once and is undone if the host refuses it.
 */
export class SettingsStore {
  values = $state<Settings>({ ...defaultSettings, theme: cachedAppearance() ?? defaultSettings.theme });
  /** Whether the system (OS or browser) is dark, for the "system" theme. */
  systemDark = $state(systemQuery()?.matches ?? true);
  /** The latest refused change. */
  problem = $state<Problem | null>(null);
  readonly appearance = $derived<Appearance>(resolveAppearance(this.values.theme, this.systemDark));

  private api: TandemApi | null = null;
  private off = (): void => undefined;

  constructor() {
    systemQuery()?.addEventListener('change', (event) => {
      this.systemDark = event.matches;
      this.reportAppearance();
    });
  }

  /** Follows a (new) connection; settings an older Tandem kept in this browser move to the host once. */
  async bind(api: TandemApi): Promise<void> {
    this.off();
    this.api = api;
    this.off = api.on('settings', (values) => this.apply(values));
    this.reportAppearance();
    const legacy = readLegacy();
    try {
      this.apply(legacy ? await api.call('setSettings', legacy) : await api.call('getSettings', {}));
      if (legacy) removeLegacy();
    } catch (error) {
      this.problem = toProblem(error);
    }
  }

  private apply(values: Settings): void {
    this.values = values;
    try {
      localStorage.setItem(appearanceKey, this.appearance);
    } catch {
      // Without storage a reload paints dark first, then the person's theme.
    }
  }

  private reportAppearance(): void {
    this.api?.call('reportAppearance', { dark: this.systemDark }).catch(() => undefined);
  }

  /** Applies a change now and asks the host to keep it. */
  set(patch: SettingsPatch): void {
    const before = this.values;
    this.values = { ...before, ...patch };
    const api = this.api;
    if (!api) return;
    api.call('setSettings', patch).then(
      (values) => this.apply(values),
      (error: unknown) => {
        this.problem = toProblem(error);
        api.call('getSettings', {}).then(
          (values) => this.apply(values),
          () => (this.values = before),
        );
      },
    );
  }

  /** Typing into a terminal an agent drives takes control (else typing is held back). */
  get typingTakesOver(): boolean {
    return this.values.typingTakesOver;
  }

  set typingTakesOver(value: boolean) {
    this.set({ typingTakesOver: value });
  }

  get fontSize(): number {
    return this.values.fontSize;
  }

  set fontSize(value: number) {
    if (!Number.isFinite(value)) return;
    this.set({ fontSize: Math.min(maxFontSize, Math.max(minFontSize, Math.round(value))) });
  }

  get isDefault(): boolean {
    return (Object.keys(defaultSettings) as Array<keyof Settings>).every((key) => JSON.stringify(this.values[key]) === JSON.stringify(defaultSettings[key]));
  }

  reset(): void {
    this.set({ ...defaultSettings });
  }
}

function readLegacy(): SettingsPatch | null {
  try {
    return legacySettingsPatch(localStorage.getItem(legacySettingsKey));
  } catch {
    return null;
  }
}

function removeLegacy(): void {
  try {
    localStorage.removeItem(legacySettingsKey);
  } catch {
    // Unavailable storage holds no legacy settings either.
  }
}

export const settings = new SettingsStore();

// The UI's colours follow the appearance (styles/light.css), and so do the browser's own controls.
$effect.root(() => {
  $effect(() => {
    document.documentElement.dataset.theme = settings.appearance;
  });
});
