import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { operations } from '../../src/shared/contract.js';
import { defaultSettings, resolveAppearance, settingsPatchSchema, settingsSchema } from '../../src/shared/settings.js';
import { SettingsStore, parseStoredSettings } from '../../src/main/host/settings-store.js';
import { legacySettingsPatch } from '../../src/renderer/src/lib/settings-migration.js';
import { TandemError } from '../../src/shared/errors.js';
import { posixModes, runs } from '../support/capabilities.js';

const dirs: string[] = [];
function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-settings-'));
  dirs.push(dir);
  return join(dir, 'state', 'settings.json');
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('settings schema', () => {
  it('accepts the defaults and refuses values out of bounds or of the wrong kind', () => {
    expect(settingsSchema.parse(defaultSettings)).toEqual(defaultSettings);
    for (const bad of [
      { fontSize: 7 },
      { fontSize: 33 },
      { fontSize: 14.5 },
      { scrollback: 99 },
      { scrollback: 50_001 },
      { theme: 'solarized' },
      { cursorStyle: 'beam' },
      { bell: 'loud' },
      { rightClick: 'nothing' },
      { copyOnSelect: 'yes' },
      { fontFamily: '' },
      { fontFamily: 'Mono; color: red' },
      { fontFamily: 'Mono}' },
      { fontFamily: 'a\u0007b' },
      { fontFamily: 'x'.repeat(201) },
      { unknownSetting: true },
    ]) {
      expect(settingsPatchSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    expect(settingsPatchSchema.parse({ fontFamily: "  'Fira Code', monospace " })).toEqual({ fontFamily: "'Fira Code', monospace" });
  });

  it('is what the contract validates setSettings with', () => {
    expect(operations.setSettings.args.safeParse({ fontSize: 40 }).success).toBe(false);
    expect(operations.setSettings.args.safeParse({ fontSize: 20, theme: 'light' }).success).toBe(true);
  });

  it('resolves "system" from the system appearance only', () => {
    expect(resolveAppearance('system', true)).toBe('dark');
    expect(resolveAppearance('system', false)).toBe('light');
    expect(resolveAppearance('light', true)).toBe('light');
    expect(resolveAppearance('dark', false)).toBe('dark');
  });
});

describe('SettingsStore', () => {
  it.runIf(runs('SettingsStore file modes', posixModes))('writes the file 0600 in a 0700 directory and reads it back (needs POSIX file modes)', () => {
    const path = tempFile();
    const store = new SettingsStore(path);
    expect(store.get()).toEqual(defaultSettings);
    store.update({ theme: 'light', fontSize: 18 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(new SettingsStore(path).get()).toMatchObject({ theme: 'light', fontSize: 18, scrollback: defaultSettings.scrollback });
  });

  it('refuses a bad value with invalid_argument and changes nothing, on disk or for listeners', () => {
    const path = tempFile();
    const store = new SettingsStore(path);
    store.update({ fontSize: 16 });
    const before = readFileSync(path, 'utf8');
    const heard: unknown[] = [];
    store.onChange((settings) => heard.push(settings));
    let error: unknown;
    try {
      store.update({ fontSize: 16, scrollback: 10 });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TandemError);
    expect((error as TandemError).code).toBe('invalid_argument');
    expect((error as TandemError).message).toMatch(/scrollback/);
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(heard).toEqual([]);
    expect(store.get().scrollback).toBe(defaultSettings.scrollback);
  });

  it('tells listeners about every change', () => {
    const store = new SettingsStore(null);
    const heard: string[] = [];
    const off = store.onChange((settings) => heard.push(settings.theme));
    store.update({ theme: 'light' });
    off();
    store.update({ theme: 'dark' });
    expect(heard).toEqual(['light']);
  });

  it('keeps the good fields of a hand-edited file and defaults the bad ones', () => {
    const path = tempFile();
    new SettingsStore(path).update({ bell: 'sound' });
    writeFileSync(path, JSON.stringify({ theme: 'light', fontSize: 'huge', scrollback: -5, bell: 'sound', extra: 1 }));
    expect(new SettingsStore(path).get()).toEqual({ ...defaultSettings, theme: 'light', bell: 'sound' });
    writeFileSync(path, '{ not json');
    expect(new SettingsStore(path).get()).toEqual(defaultSettings);
    expect(parseStoredSettings(null)).toEqual(defaultSettings);
  });

  it('answers colour queries from the theme, following the system when asked to', () => {
    const store = new SettingsStore(null);
    expect(store.palette().background).toBe('#0f1115');
    store.update({ theme: 'light' });
    expect(store.palette().background).toBe('#fafafa');
    store.update({ theme: 'system' });
    store.setSystemAppearance(false);
    expect(store.appearance()).toBe('light');
    store.setSystemAppearance(true);
    expect(store.appearance()).toBe('dark');
  });
});

describe('legacy settings migration (localStorage of older versions)', () => {
  it('moves "typing takes over" and the font size', () => {
    expect(legacySettingsPatch(JSON.stringify({ typingTakesOver: false, fontSize: 17 }))).toEqual({ typingTakesOver: false, fontSize: 17 });
  });

  it('brings an old out-of-range font size within bounds and rounds it', () => {
    expect(legacySettingsPatch(JSON.stringify({ fontSize: 99 }))).toEqual({ fontSize: 32 });
    expect(legacySettingsPatch(JSON.stringify({ fontSize: 12.6 }))).toEqual({ fontSize: 13 });
    expect(settingsPatchSchema.safeParse(legacySettingsPatch(JSON.stringify({ fontSize: 1 }))).success).toBe(true);
  });

  it('finds nothing in a missing, broken or foreign entry', () => {
    expect(legacySettingsPatch(null)).toBeNull();
    expect(legacySettingsPatch('')).toBeNull();
    expect(legacySettingsPatch('{oops')).toBeNull();
    expect(legacySettingsPatch('"a string"')).toBeNull();
    expect(legacySettingsPatch(JSON.stringify({ typingTakesOver: 'no', fontSize: 'big' }))).toBeNull();
  });
});
