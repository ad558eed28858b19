import { describe, expect, it } from 'vitest';
import { chunkInput, unitLength } from '../../src/main/pty/win-input.js';

/** Unit boundaries of the input, independently of how it was chunked. */
function boundaries(data: string): Set<number> {
  const out = new Set<number>([0, data.length]);
  for (let i = 0; i < data.length;) {
    i += unitLength(data, i);
    out.add(i);
  }
  return out;
}

function expectWellChunked(data: string, max = 50): string[] {
  const chunks = chunkInput(data, max);
  expect(chunks.join('')).toBe(data);
  const cuts = boundaries(data);
  let at = 0;
  for (const chunk of chunks) {
    expect(chunk.length).toBeGreaterThan(0);
    // Only what cannot be cut may exceed the limit: one unit, or units glued after a CR.
    if (chunk.length > max) {
      for (let k = at + 1; k < at + chunk.length; k++) if (cuts.has(k)) expect(data[k - 1]).toBe('\r');
    }
    at += chunk.length;
    expect(cuts.has(at)).toBe(true);
  }
  return chunks;
}

describe('unitLength', () => {
  it.each([
    ['CSI arrow', '\x1b[A', 3],
    ['CSI with parameters', '\x1b[1;5C', 6],
    ['bracketed paste start', '\x1b[200~', 6],
    ['bracketed paste end', '\x1b[201~', 6],
    ['private CSI', '\x1b[?2004h', 8],
    ['SS3 arrow', '\x1bOA', 3],
    ['OSC ended by BEL', '\x1b]0;title\x07', 10],
    ['OSC ended by ST', '\x1b]0;title\x1b\\', 11],
    ['DCS', '\x1bPq#0\x1b\\', 7],
    ['charset designation', '\x1b(B', 3],
    ['Alt+x', '\x1bx', 2],
    ['Alt+emoji', '\x1b🎉', 3],
    ['surrogate pair', '🎉', 2],
    ['plain', 'a', 1],
  ])('%s', (_name, unit, length) => {
    expect(unitLength(`${unit}zz`, 0)).toBe(length);
  });

  it.each([
    ['lone ESC', '\x1b'],
    ['CSI', '\x1b[12'],
    ['OSC', '\x1b]52;c;abc'],
    ['SS3', '\x1bO'],
  ])('runs an unterminated %s to the end of the input', (_name, unit) => {
    expect(unitLength(unit, 0)).toBe(unit.length);
  });
});

describe('chunkInput', () => {
  it('keeps short input whole and drops empty input', () => {
    expect(chunkInput('echo hi\r')).toEqual(['echo hi\r']);
    expect(chunkInput('')).toEqual([]);
  });

  it('cuts plain text into chunks of at most 50 characters', () => {
    const chunks = expectWellChunked('x'.repeat(175));
    expect(chunks.map((chunk) => chunk.length)).toEqual([50, 50, 50, 25]);
  });

  it('never splits a CSI, SS3 or bracketed-paste marker at the boundary', () => {
    for (const seq of ['\x1b[A', '\x1bOB', '\x1b[200~', '\x1b[201~', '\x1b[1;5D']) {
      for (let pad = 40; pad <= 50; pad++) {
        const chunks = expectWellChunked(`${'a'.repeat(pad)}${seq}${'b'.repeat(60)}`);
        expect(chunks.some((chunk) => chunk.includes(seq))).toBe(true);
      }
    }
  });

  it('never splits a surrogate pair', () => {
    const chunks = expectWellChunked(`${'a'.repeat(49)}🎉${'b'.repeat(10)}`);
    expect(chunks[0]).toBe('a'.repeat(49));
    expect(chunks[1]!.startsWith('🎉')).toBe(true);
  });

  it('sends an escape sequence longer than the limit as one chunk', () => {
    const osc = `\x1b]52;c;${'Q'.repeat(80)}\x07`;
    const chunks = expectWellChunked(`ab${osc}cd`);
    expect(chunks).toEqual(['ab', osc, 'cd']);
  });

  it('never ends a chunk in CR unless the input ends there', () => {
    for (let pad = 45; pad <= 50; pad++) {
      const data = `${'a'.repeat(pad)}\r${"'two'\r".repeat(12)}`;
      const chunks = expectWellChunked(data);
      for (const chunk of chunks.slice(0, -1)) expect(chunk.endsWith('\r')).toBe(false);
      expect(chunks.at(-1)!.endsWith('\r')).toBe(true);
    }
  });

  it('chunks a large bracketed paste with its markers intact', () => {
    const body = 'line one\rline two 日本語 🎉\r'.repeat(20);
    const chunks = expectWellChunked(`\x1b[200~${body}\x1b[201~\r`);
    expect(chunks[0]!.startsWith('\x1b[200~')).toBe(true);
    expect(chunks.join('').endsWith('\x1b[201~\r')).toBe(true);
    expect(chunks.filter((chunk) => chunk.includes('\x1b[201~'))).toHaveLength(1);
  });

  it('holds for random mixes of text, keys and sequences', () => {
    const pieces = ['a', 'bc', ' ', '\r', 'é', '日', '🎉', '👩‍💻', '\x1b[A', '\x1bOA', '\x1b[200~', '\x1b[201~', '\x1b]0;t\x07', '\x1bx', '\x1b(B', '\x03'];
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 200; round++) {
      let data = '';
      const length = Math.floor(next() * 120);
      for (let k = 0; k < length; k++) data += pieces[Math.floor(next() * pieces.length)];
      const max = 8 + Math.floor(next() * 50);
      expectWellChunked(data, max);
    }
  });
});
