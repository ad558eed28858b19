/**
 * The screen as an agent reads it (a full-screen program's results): few tokens, nothing a
 * person would read lost. Rows lose their trailing blanks, painted padding included; trailing
 * empty rows go. A run of identical filler rows (no letter or digit: vim's `~`, a box's sides,
 * a rule) becomes one row and its count, `~ ×28`. Rows with a letter or digit are content and
 * are never merged, even when repeated (a log shown in `less`), and empty rows stay, one byte
 * each: so a ` ×N` suffix always means a merged filler run, never text the screen showed.
 */

/** The shortest run merged: below it the count costs as much as the rows. */
export const fillerRunMin = 3;

const content = /[\p{L}\p{N}]/u;

/** Trailing spaces dropped (an emulator cell a program painted blank is a space too). */
export function trimRow(row: string): string {
  let end = row.length;
  while (end > 0 && row.charCodeAt(end - 1) === 32) end--;
  return end === row.length ? row : row.slice(0, end);
}

/** Filler: something drawn, but nothing to read. */
export function isFiller(row: string): boolean {
  return row.length > 0 && !content.test(row);
}

/** Rows (top to bottom, as the emulator renders them) to the compact screen text. */
export function compactScreen(rows: readonly string[]): string {
  const trimmed = rows.map(trimRow);
  while (trimmed.length > 0 && trimmed[trimmed.length - 1] === '') trimmed.pop();
  const out: string[] = [];
  for (let i = 0; i < trimmed.length;) {
    const row = trimmed[i]!;
    let end = i + 1;
    while (end < trimmed.length && trimmed[end] === row) end++;
    const run = end - i;
    if (run >= fillerRunMin && isFiller(row)) out.push(`${row} ×${run}`);
    else for (let k = 0; k < run; k++) out.push(row);
    i = end;
  }
  return out.join('\n');
}
