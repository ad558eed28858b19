/**
 * Font ligatures (Settings, "Ligatures"). xterm.js draws each cell on its own, so a font's
 * ligature (`=>` as one arrow) only shows where the renderer is told that a run of cells is one
 * unit: a character joiner, which the WebGL renderer honours (xterm.js 6, `registerCharacterJoiner`;
 * the DOM fallback ignores joiners). `@xterm/addon-ligatures` finds the runs by reading the font
 * file, which needs Node's file system; a page has none, so the runs here are the sequences
 * programming fonts commonly ligate. Joined, the run is drawn as one string and the font decides:
 * a font without that ligature draws the same characters it would draw one by one.
 */

/** Sequences joined, longest first where one starts another. */
const sequences = [
  '<!--',
  '<--->',
  '<==>',
  '<-->',
  '<==',
  '==>',
  '<--',
  '-->',
  '<=>',
  '<->',
  '===',
  '!==',
  '=/=',
  '>>=',
  '<<=',
  '->>',
  '<<-',
  '=>>',
  '...',
  '::=',
  ':::',
  '|||',
  '&&&',
  '</>',
  '<|>',
  '<*>',
  '->',
  '<-',
  '=>',
  '<=',
  '>=',
  '==',
  '!=',
  '/=',
  '~=',
  '<>',
  '::',
  ':=',
  '=:',
  '&&',
  '||',
  '|>',
  '<|',
  '>>',
  '<<',
  '++',
  '--',
  '**',
  '//',
  '/*',
  '*/',
  '</',
  '/>',
  '..',
  '?.',
  '??',
  '#{',
  '#[',
  '~>',
  '<~',
  ';;',
] as const;

/** Sequences by their first character, longest first. */
const byFirst = new Map<string, string[]>();
for (const sequence of [...sequences].sort((a, b) => b.length - a.length)) {
  const list = byFirst.get(sequence[0]!) ?? [];
  list.push(sequence);
  byFirst.set(sequence[0]!, list);
}

/**
 * The ranges of `text` to draw as one unit: [start, end) pairs in order, never overlapping, the
 * longest sequence at each place. Called by xterm.js for each run of same-styled cells it draws,
 * so it scans once and allocates only for what it finds.
 */
export function ligatureRanges(text: string): [number, number][] {
  const ranges: [number, number][] = [];
  let i = 0;
  while (i < text.length - 1) {
    const candidates = byFirst.get(text[i]!);
    let matched = 0;
    if (candidates) {
      for (const sequence of candidates) {
        if (text.startsWith(sequence, i)) {
          matched = sequence.length;
          break;
        }
      }
    }
    if (matched > 0) {
      ranges.push([i, i + matched]);
      i += matched;
    } else {
      i++;
    }
  }
  return ranges;
}
