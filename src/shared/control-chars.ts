/**
 * Characters in an agent's `text` that would make what the terminal does differ from what the
 * approval card shows: terminal controls (ESC starts bracketed-paste markers and every other
 * control sequence; the other C0 and C1 codes edit or submit the line as it is typed) and
 * bidirectional overrides that reorder how the line reads. A newline (multi-line commands),
 * a tab, and a carriage return directly before a newline are ordinary text.
 */
const refusedPattern = /[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

const names: Record<number, string> = {
  0x00: 'NUL',
  0x07: 'BEL',
  0x09: 'TAB',
  0x0a: 'LF',
  0x08: 'BS',
  0x0b: 'VT',
  0x0c: 'FF',
  0x0d: 'CR',
  0x1b: 'ESC',
  0x7f: 'DEL',
  0x9b: 'CSI',
  0x9d: 'OSC',
  0x200b: 'ZERO WIDTH SPACE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
};

function codePoint(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A name a person recognises: `ESC (U+001B)`, `C-c (U+0003)`, `U+202E RIGHT-TO-LEFT OVERRIDE`. */
export function describeControl(char: string): string {
  const code = char.codePointAt(0)!;
  const name =
    names[code] ??
    (code < 0x20 ? `C-${String.fromCharCode(code + 96)}` : code <= 0x9f ? 'C1 control' : refusedPattern.test(char) ? 'bidi control' : 'invisible character');
  return `${name} (${codePoint(code)})`;
}

/**
 * The text as one plain line: every refused character, and tabs and line breaks too, shown as
 * `?` (a message that names paths someone else chose, printed where a terminal interprets it).
 */
export function plainLine(text: string): string {
  return Array.from(text, (char) => (refusedPattern.test(char) || char === '\t' || char === '\n' ? '?' : char)).join('');
}

/** The first refused character and its position (in UTF-16 units, as the agent counts), or null. */
export function findRefusedControl(text: string): { char: string; index: number } | null {
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === '\r' && text[index + 1] === '\n') continue;
    if (refusedPattern.test(char)) return { char, index };
  }
  return null;
}

/**
 * Invisible or control characters the card draws as a visible escape (`\t`, `\x1b`,
 * `\u{202e}`), in a style of its own: Unicode's control pictures are missing from most fonts.
 */
export function visibleToken(char: string): string | null {
  const code = char.codePointAt(0)!;
  if (char === '\n') return null;
  if (char === '\t') return '\\t';
  if (char === '\r') return '\\r';
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (refusedPattern.test(char) || /[\u00ad\u200b-\u200d\u2028\u2029\u2060\ufeff]/u.test(char)) return `\\u{${code.toString(16)}}`;
  return null;
}

/**
 * Spaces in a row from which they show as one token: a long run wraps into blank rows that push
 * the rest of a command out of the card's view (`echo ok` and, far below, what really runs).
 * Indentation stays as it is.
 */
export const longSpaceRun = 16;

/** Splits text into plain runs and control characters made visible, for the approval card. */
export function visibleSegments(text: string): Array<{ text: string; control: boolean; title?: string }> {
  const segments: Array<{ text: string; control: boolean; title?: string }> = [];
  for (const piece of text.split(new RegExp(`( {${longSpaceRun},})`))) {
    if (piece.length >= longSpaceRun && /^ +$/.test(piece)) {
      segments.push({ text: `␣×${piece.length}`, control: true, title: `${piece.length} spaces` });
      continue;
    }
    let plain = '';
    for (const char of piece) {
      const token = visibleToken(char);
      if (token === null) {
        plain += char;
        continue;
      }
      if (plain) segments.push({ text: plain, control: false });
      plain = '';
      segments.push({ text: token, control: true, title: describeControl(char) });
    }
    if (plain) segments.push({ text: plain, control: false });
  }
  return segments;
}

/** The text with its control and invisible characters as escapes, for a tooltip (which draws no styles). */
export function visibleText(text: string): string {
  return visibleSegments(text)
    .map((segment) => segment.text)
    .join('');
}
