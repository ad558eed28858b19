import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describeIssue } from '../../shared/contract.js';
import { TandemError } from '../../shared/errors.js';
import { palettes, type Palette } from '../../shared/palette.js';
import {
  type Appearance,
  defaultSettings,
  resolveAppearance,
  type Settings,
  settingsPatchSchema,
  settingsSchema,
  storedMachines,
} from '../../shared/settings.js';

/** Largest settings file read; anything bigger is not ours and is ignored. */
const maxFileBytes = 64 * 1024;

/**
 * The person's settings: `<state>/settings.json` (0600), read once at start, written on every
 * change. A file that is unreadable or holds bad values yields the defaults for those fields,
 * so a hand-edit mistake never keeps Tandem from starting.
 */
export class SettingsStore {
  private values: Settings;
  private systemDark = true;
  private readonly listeners = new Set<(settings: Settings) => void>();

  /** `path` null keeps settings in memory (tests, hosts without a state directory). */
  constructor(private readonly path: string | null) {
    this.values = path ? readSettings(path) : { ...defaultSettings };
  }

  get(): Settings {
    return { ...this.values };
  }

  /** Validates and applies a change; throws `invalid_argument` naming the bad field. */
  update(patch: unknown): Settings {
    const parsed = settingsPatchSchema.safeParse(patch);
    if (!parsed.success) throw new TandemError('invalid_argument', `Setting ${describeIssue(parsed.error)}.`);
    this.values = { ...this.values, ...parsed.data };
    this.save();
    const current = this.get();
    for (const listener of this.listeners) listener(current);
    return current;
  }

  onChange(listener: (settings: Settings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** What "follow the system" means right now, as the person's window last reported it. */
  setSystemAppearance(dark: boolean): void {
    this.systemDark = dark;
  }

  appearance(): Appearance {
    return resolveAppearance(this.values.theme, this.systemDark);
  }

  /** The palette terminals answer colour queries from. */
  palette = (): Palette => palettes[this.appearance()];

  private save(): void {
    if (!this.path) return;
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.values, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
    chmodSync(this.path, 0o600);
  }
}

/** The stored settings, field by field: a missing or bad field falls back to its default. */
export function readSettings(path: string): Settings {
  let raw: unknown;
  try {
    const text = readFileSync(path, 'utf8');
    raw = text.length > maxFileBytes ? {} : JSON.parse(text);
  } catch {
    return { ...defaultSettings };
  }
  return parseStoredSettings(raw);
}

export function parseStoredSettings(raw: unknown): Settings {
  const settings: Settings = { ...defaultSettings };
  if (!raw || typeof raw !== 'object') return settings;
  const shape = settingsSchema.shape;
  for (const key of Object.keys(shape) as Array<keyof Settings>) {
    // Machines entry by entry: one bad entry does not cost the good ones (runtime.ts reports it).
    if (key === 'machines') {
      settings.machines = storedMachines((raw as Record<string, unknown>).machines).machines;
      continue;
    }
    const parsed = shape[key].safeParse((raw as Record<string, unknown>)[key]);
    if (parsed.success) (settings as Record<keyof Settings, unknown>)[key] = parsed.data;
  }
  return settings;
}
