/**
 * Answers to the colour queries programs send to learn the terminal's palette: OSC 4 (an indexed
 * colour), OSC 10, 11, 12 (foreground, background, cursor). vim, nvim and delta ask for the
 * background to choose light or dark colours. xterm's reply form: `rgb:rrrr/gggg/bbbb`, ST-ended.
 */
import { colorOf, type Palette } from '../../../shared/palette.js';

const st = '\x1b\\';

/** `#rrggbb` as X11's 16-bit-per-channel `rgb:` form, as xterm reports it. */
export function rgbSpec(hex: string): string {
  const channel = (at: number): string => hex.slice(at, at + 2).repeat(2);
  return `rgb:${channel(1)}/${channel(3)}/${channel(5)}`;
}

/** Colours of OSC 10 and its successors, in the order one OSC may chain them. */
const dynamic: Array<(palette: Palette) => string> = [(p) => p.foreground, (p) => p.background, (p) => p.cursor];

/**
 * OSC 10/11/12 payload: `?` asks, a colour name sets. Each further `;`-separated value goes to
 * the next number (`10;?;?` asks foreground and background). Null when nothing was asked.
 */
export function answerDynamicColor(ident: 10 | 11 | 12, data: string, palette: Palette): string[] | null {
  const replies: string[] = [];
  data.split(';').forEach((value, offset) => {
    const index = ident - 10 + offset;
    const color = dynamic[index];
    if (value === '?' && color) replies.push(`\x1b]${10 + index};${rgbSpec(color(palette))}${st}`);
  });
  return replies.length > 0 ? replies : null;
}

/** OSC 4 payload: `index;spec` pairs, a `?` spec asks. Null when nothing was asked. */
export function answerIndexedColor(data: string, palette: Palette): string[] | null {
  const parts = data.split(';');
  const replies: string[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    if (parts[i + 1] !== '?' || !/^\d{1,3}$/.test(parts[i]!)) continue;
    const index = Number(parts[i]);
    const color = colorOf(palette, index);
    if (color) replies.push(`\x1b]4;${index};${rgbSpec(color)}${st}`);
  }
  return replies.length > 0 ? replies : null;
}
