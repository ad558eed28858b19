import { fontSizeBounds, type SettingsPatch } from '../../../shared/settings';

/** Where this UI kept its settings before the host did (read once, then removed). */
export const legacySettingsKey = 'tandem.settings';

/**
 * The settings an older Tandem kept in this browser's localStorage, as a change for the host.
 * Null when there is nothing usable (no entry, broken JSON, values of the wrong type).
 */
export function legacySettingsPatch(raw: string | null): SettingsPatch | null {
  if (!raw) return null;
  let stored: unknown;
  try {
    stored = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!stored || typeof stored !== 'object') return null;
  const { typingTakesOver, fontSize } = stored as Record<string, unknown>;
  const patch: SettingsPatch = {};
  if (typeof typingTakesOver === 'boolean') patch.typingTakesOver = typingTakesOver;
  if (typeof fontSize === 'number' && Number.isFinite(fontSize)) {
    patch.fontSize = Math.min(fontSizeBounds.max, Math.max(fontSizeBounds.min, Math.round(fontSize)));
  }
  return Object.keys(patch).length > 0 ? patch : null;
}
