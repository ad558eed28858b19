import type { ITheme } from '@xterm/xterm';
import { palettes } from '../../../shared/palette';
import type { Appearance } from '../../../shared/settings';

/** xterm.js's theme for an appearance; the host answers colour queries from the same palette. */
export function xtermTheme(appearance: Appearance): ITheme {
  const p = palettes[appearance];
  const [
    black,
    red,
    green,
    yellow,
    blue,
    magenta,
    cyan,
    white,
    brightBlack,
    brightRed,
    brightGreen,
    brightYellow,
    brightBlue,
    brightMagenta,
    brightCyan,
    brightWhite,
  ] = p.ansi;
  return {
    background: p.background,
    foreground: p.foreground,
    cursor: p.cursor,
    cursorAccent: p.cursorAccent,
    selectionBackground: p.selectionBackground,
    selectionInactiveBackground: p.selectionInactiveBackground,
    black,
    red,
    green,
    yellow,
    blue,
    magenta,
    cyan,
    white,
    brightBlack,
    brightRed,
    brightGreen,
    brightYellow,
    brightBlue,
    brightMagenta,
    brightCyan,
    brightWhite,
    // The command marks' ruler (command-marks.ts): its edge in the app's --border, not xterm.js's bright default.
    overviewRulerBorder: rulerBorder[appearance],
  };
}

const rulerBorder: Record<Appearance, string> = { dark: '#262b34', light: '#dcdfe4' };

/** Search highlight colours (#RRGGBB, as the search addon requires). */
export const searchDecorations: Record<
  Appearance,
  {
    matchBackground: string;
    matchBorder: string;
    matchOverviewRuler: string;
    activeMatchBackground: string;
    activeMatchBorder: string;
    activeMatchColorOverviewRuler: string;
  }
> = {
  dark: {
    matchBackground: '#3e4451',
    matchBorder: '#5c6370',
    matchOverviewRuler: '#e5c07b',
    activeMatchBackground: '#8a6d2b',
    activeMatchBorder: '#e5c07b',
    activeMatchColorOverviewRuler: '#e5c07b',
  },
  light: {
    matchBackground: '#e6e9ef',
    matchBorder: '#9ea1a8',
    matchOverviewRuler: '#b07d06',
    activeMatchBackground: '#f5d77a',
    activeMatchBorder: '#b07d06',
    activeMatchColorOverviewRuler: '#b07d06',
  },
};
