import { Terminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { PersonSpans, personNotice } from '../../src/main/terminal/session/person-spans.js';

/** A real headless xterm.js; `parsed` resolves once everything written so far is drawn. */
function setup(rows = 10, scrollback = 300) {
  const terminal = new Terminal({ cols: 40, rows, scrollback, allowProposedApi: true });
  const write = (data: string) => new Promise<void>((resolve) => terminal.write(data, resolve));
  const spans = new PersonSpans(terminal, () => write(''));
  const lines = () => {
    const buffer = terminal.buffer.active;
    const all: string[] = [];
    for (let y = 0; y < buffer.length; y++) all.push(buffer.getLine(y)?.translateToString(true) ?? '');
    return spans.redactLines(0, all);
  };
  return { terminal, write, spans, lines };
}

describe("the person's private lines", () => {
  it('stay bounded over many leases, and every line the person printed stays hidden', async () => {
    // Enough scrollback that the per-line markers pass their bound and the ranges theirs.
    const { write, spans, lines } = setup(10, 5000);
    let offset = 0;
    let most = { lineMarkers: 0, ranges: 0 };
    for (let lease = 0; lease < 200; lease++) {
      await write(`agent-${lease}\r\n`);
      spans.begin(offset + 10);
      const printed = lease % 3 === 0 ? 30 : 2;
      for (let i = 0; i < printed; i++) await write(`person-${lease}-${i}\r\n`);
      offset += 100;
      spans.end(offset, false);
      await write('');
      const sizes = spans.sizes;
      expect(sizes.streams).toBeLessThanOrEqual(32);
      expect(sizes.ranges).toBeLessThanOrEqual(64);
      expect(sizes.lineMarkers).toBeLessThanOrEqual(512);
      expect(sizes.judging).toBe(0);
      most = { lineMarkers: Math.max(most.lineMarkers, sizes.lineMarkers), ranges: Math.max(most.ranges, sizes.ranges) };
    }
    expect(most).toEqual({ lineMarkers: 512, ranges: 64 });
    const shown = lines();
    expect(shown.filter((line) => line.startsWith('person-'))).toEqual([]);
    expect(shown).toContain(personNotice);
    // The stream: each lease is one range, merged past the bound; text outside them stays.
    const text = spans.redactStream(0, 200 * 100, (a, b) => `[${a},${b})`);
    expect(text.startsWith('[0,')).toBe(true);
    expect(text).toContain(personNotice);
  });

  it('a lease shared on hand-back hides nothing afterwards; one still held hides everything from the takeover on', async () => {
    const { write, spans, lines } = setup();
    await write('before\r\n');
    spans.begin(0);
    await write('held\r\n');
    expect(lines()).not.toContain('held');
    expect(lines()).not.toContain('before');
    spans.end(10, true);
    await write('');
    expect(lines()).toContain('held');
    expect(lines()).toContain('before');
    expect(spans.any).toBe(false);
  });
});
