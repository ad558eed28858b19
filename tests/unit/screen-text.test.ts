import { describe, expect, it } from 'vitest';
import { compactScreen, fillerRunMin, isFiller, trimRow } from '../../src/main/terminal/emulator/screen-text';

describe('compactScreen', () => {
  it('drops trailing blanks of every row, painted padding included, and trailing empty rows', () => {
    expect(trimRow('abc   ')).toBe('abc');
    expect(trimRow('   ')).toBe('');
    expect(trimRow('  a b')).toBe('  a b');
    expect(compactScreen(['top'.padEnd(120), ' indented  ', '', ' '.repeat(120), ''])).toBe('top\n indented');
  });

  it('merges a run of identical filler rows into one row with its count (vim on an empty file)', () => {
    const rows = ['', ...Array<string>(30).fill('~'.padEnd(120)), '"x.txt" 0L, 0B'.padEnd(100) + '0,0-1         All'.padEnd(20)];
    const text = compactScreen(rows);
    expect(text).toBe(`\n~ ×30\n${'"x.txt" 0L, 0B'.padEnd(100)}0,0-1         All`);
    expect(Buffer.byteLength(text)).toBeLessThan(300);
  });

  it('never merges content rows, however often they repeat', () => {
    const rows = Array<string>(10).fill('GET /health 200');
    expect(compactScreen(rows)).toBe(rows.join('\n'));
    expect(compactScreen(['x', 'x', 'x', '1', '1', '1'])).toBe('x\nx\nx\n1\n1\n1');
  });

  it('keeps empty rows in the middle (one byte each, never ambiguous)', () => {
    expect(compactScreen(['a', '', '', '', '', 'b'])).toBe('a\n\n\n\n\nb');
  });

  it('merges only runs of at least the minimum, and only identical rows', () => {
    expect(compactScreen(Array<string>(fillerRunMin - 1).fill('~'))).toBe('~\n~');
    expect(compactScreen(['│   │', '│   │', '│   │', '│  │'])).toBe('│   │ ×3\n│  │');
    expect(compactScreen(['~', '~', '~', 'text', '~', '~', '~', '~'])).toBe('~ ×3\ntext\n~ ×4');
  });

  it('calls rows without a letter or digit filler, in any script', () => {
    expect(isFiller('~')).toBe(true);
    expect(isFiller('────────')).toBe(true);
    expect(isFiller('')).toBe(false);
    expect(isFiller('~ 3')).toBe(false);
    expect(isFiller('日本')).toBe(false);
    expect(isFiller('é')).toBe(false);
  });
});
