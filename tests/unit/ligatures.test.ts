import { describe, expect, it } from 'vitest';
import { ligatureRanges } from '../../src/renderer/src/terminal/ligatures';

const joined = (text: string) => ligatureRanges(text).map(([start, end]) => text.slice(start, end));

describe('ligature ranges (the Ligatures setting)', () => {
  it('joins the sequences programming fonts ligate, in order', () => {
    expect(joined('a => b != c -> d')).toEqual(['=>', '!=', '->']);
    expect(ligatureRanges('x=>y')).toEqual([[1, 3]]);
  });

  it('takes the longest sequence at each place, and never overlaps', () => {
    expect(joined('a === b !== c <==> d')).toEqual(['===', '!==', '<==>']);
    expect(joined('<!-- x -->')).toEqual(['<!--', '-->']);
    // `====`: one `===`, the last `=` alone.
    expect(ligatureRanges('====')).toEqual([[0, 3]]);
    const ranges = ligatureRanges('a->>b<<=c::=d&&&e||f');
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]![0]).toBeGreaterThanOrEqual(ranges[i - 1]![1]);
    expect(joined('a->>b<<=c::=d&&&e||f')).toEqual(['->>', '<<=', '::=', '&&&', '||']);
  });

  it('joins nothing in text without them, nor a lone first character at the end', () => {
    expect(ligatureRanges('plain text, numbers 1 2 3; a = b; x < y')).toEqual([]);
    expect(ligatureRanges('ends with =')).toEqual([]);
    expect(ligatureRanges('')).toEqual([]);
  });
});
