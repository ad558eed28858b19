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
  });

  it('bounds a count padded with zeros, controls or DELs, however long and wherever cut (black-box review)', () => {
    const padded = `\x1b[${'0'.repeat(100_000)}2147483647S`;
    expect(through([padded])).toBe(`\x1b[${maxCount}S`);
    for (const cut of [3, 50, 70, 50_000, 100_005]) {
      expect(through([padded.slice(0, cut), padded.slice(cut)]), `cut at ${cut}`).toBe(`\x1b[${maxCount}S`);
    }
    // xterm.js carries out a C0 control inside a sequence and goes on, and ignores DEL.
    expect(through(['\x1b[2147\r483647S'])).toBe(`\r\x1b[${maxCount}S`);
    expect(through(['\x1b[2147\x7f483647b'])).toBe(`\x1b[${maxCount}b`);
    const many = `\x1b[${'\x00'.repeat(200)}2147483647T`;
    expect(through([many.slice(0, 120), many.slice(120)])).toBe(`${'\x00'.repeat(200)}\x1b[${maxCount}T`);
    // Any other sequence with a control inside goes as it came.
    expect(through(['\x1b[3\n1m'])).toBe('\x1b[3\n1m');
  });
});
