/**
 * The terminal palettes of the two appearances. The renderer's xterm.js draws with them and the
 * host's emulator answers colour queries (OSC 4, 10, 11, 12) from them, so a program that asks
 * for the background (vim, nvim, delta) learns the colour the person sees.
 */
import type { Appearance } from './settings.js';

export interface Palette {
  background: string;
  foreground: string;
  cursor: string;
  cursorAccent: string;
  selectionBackground: string;
  selectionInactiveBackground: string;
  /** The 16 ANSI colours, black to bright white, as #rrggbb. */
  ansi: readonly string[];
}

const dark: Palette = {
  background: '#0f1115',
  foreground: '#d4d7dd',
  cursor: '#e8eaee',
  cursorAccent: '#0f1115',
  selectionBackground: '#3a4a66',
  selectionInactiveBackground: '#2a3242',
  // prettier-ignore
  ansi: [
    '#1c1f26', '#e06c75', '#98c379', '#e5c07b', '#61afef', '#c678dd', '#56b6c2', '#c8ccd4',
    '#5c6370', '#ef8189', '#b5e08f', '#f0d197', '#82c3f7', '#d799e8', '#77cfd9', '#f0f2f5',
  ],
};

const light: Palette = {
  background: '#fafafa',
  foreground: '#2b2f36',
  cursor: '#2b2f36',
  cursorAccent: '#fafafa',
  selectionBackground: '#bcd4f5',
  selectionInactiveBackground: '#dde6f2',
  // prettier-ignore
  ansi: [
    '#383a42', '#ca1243', '#3f8a2f', '#986801', '#2f62d8', '#a626a4', '#0e7f8f', '#9ea1a8',
    '#5c6370', '#e0455e', '#50a14f', '#b07d06', '#4078f2', '#b94ab7', '#0184bc', '#d4d6db',
  ],
};

export const palettes: Record<Appearance, Palette> = { dark, light };

/** The xterm 256-colour table: the 16 of the palette, the 6x6x6 cube, the 24 greys. */
export function colorOf(palette: Palette, index: number): string | null {
  if (!Number.isInteger(index) || index < 0 || index > 255) return null;
  if (index < 16) return palette.ansi[index] ?? null;
  const hex = (value: number): string => value.toString(16).padStart(2, '0');
  if (index < 232) {
    const steps = [0, 95, 135, 175, 215, 255];
    const n = index - 16;
    return `#${hex(steps[Math.floor(n / 36)]!)}${hex(steps[Math.floor(n / 6) % 6]!)}${hex(steps[n % 6]!)}`;
  }
  const grey = 8 + (index - 232) * 10;
  return `#${hex(grey)}${hex(grey)}${hex(grey)}`;
}
