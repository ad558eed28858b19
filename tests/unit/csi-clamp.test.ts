import { describe, expect, it } from 'vitest';
import { CsiClamp, maxCount } from '../../src/main/terminal/emulator/csi-clamp.js';

const through = (chunks: string[]) => {
  const clamp = new CsiClamp();
  return chunks.map((chunk) => clamp.filter(chunk)).join('') + clamp.flush();
};

describe('bounded counts of looping control sequences (csi-clamp.ts, black-box round 17)', () => {
  it('bounds scroll, insert, delete, repeat and tab counts, and nothing else', () => {
    for (const final of ['S', 'T', '^', 'L', 'M', 'b', 'I', 'Z']) {
      expect(through([`a\x1b[2147483647${final}z`])).toBe(`a\x1b[${maxCount}${final}z`);
      expect(through([`\x9b99999${final}`])).toBe(`\x9b${maxCount}${final}`);
      expect(through([`\x1b[5${final}`])).toBe(`\x1b[5${final}`);
    }
    // Colours, cursor moves, private modes and window reports keep their numbers.
    const kept = '\x1b[38;2;255;255;255m\x1b[99999;99999H\x1b[?2004h\x1b[14t\x1b[3J';
    expect(through([kept])).toBe(kept);
    expect(through(['plain text, no sequence'])).toBe('plain text, no sequence');
  });

  it('bounds a sequence cut between chunks, at every cut', () => {
    const text = `x\x1b[2147483647Sy\x1b[31mz`;
    for (let cut = 0; cut <= text.length; cut++) {
      expect(through([text.slice(0, cut), text.slice(cut)]), `cut at ${cut}`).toBe(`x\x1b[${maxCount}Sy\x1b[31mz`);
    }
    // What a chunk ends with waits; the output ending there still gets it.
    const clamp = new CsiClamp();
    expect(clamp.filter('ab\x1b[12')).toBe('ab');
    expect(clamp.flush()).toBe('\x1b[12');
    // Not a CSI any program prints: passed on as it is, not held without end.
    const long = `\x1b[${'1;'.repeat(100)}`;
    expect(through([long])).toBe(long);
  });
});
