import type { ITheme } from '@xterm/xterm';

/** The terminal palette; the UI chrome uses the same colours through CSS variables. */
export const terminalTheme: ITheme = {
  background: '#0f1115',
  foreground: '#d4d7dd',
  cursor: '#e8eaee',
  cursorAccent: '#0f1115',
  selectionBackground: '#3a4a66',
  selectionInactiveBackground: '#2a3242',
  black: '#1c1f26',
  red: '#e06c75',
  green: '#98c379',
  yellow: '#e5c07b',
  blue: '#61afef',
  magenta: '#c678dd',
  cyan: '#56b6c2',
  white: '#c8ccd4',
  brightBlack: '#5c6370',
  brightRed: '#ef8189',
  brightGreen: '#b5e08f',
  brightYellow: '#f0d197',
  brightBlue: '#82c3f7',
  brightMagenta: '#d799e8',
  brightCyan: '#77cfd9',
  brightWhite: '#f0f2f5',
};

export const terminalFontFamily = "'JetBrains Mono', 'Cascadia Mono', 'DejaVu Sans Mono', 'Liberation Mono', ui-monospace, Menlo, Consolas, monospace";
export const terminalFontSize = 14;

/** Search highlight colours (#RRGGBB, as the search addon requires). */
export const searchDecorations = {
  matchBackground: '#3e4451',
  matchBorder: '#5c6370',
  matchOverviewRuler: '#e5c07b',
  activeMatchBackground: '#8a6d2b',
  activeMatchBorder: '#e5c07b',
  activeMatchColorOverviewRuler: '#e5c07b',
};
