import { describe, expect, it } from 'vitest';
import { StreamHistory } from '../../src/main/terminal/emulator/history';
import { packBlockChars, packQuietMs, plainTailChars } from '../../src/main/terminal/emulator/packed-text';
import { ManualClock } from '../support/manual-clock.js';

/** Output like a log: varied lines, some non-ASCII (UTF-16 offsets must survive the UTF-8 round trip). */
function chunk(i: number): string {
  return Array.from({ length: 40 }, (_, k) => `${i}:${k} GET /api/v1/items?id=${(i * 40 + k) % 997} 200 ✓ 日本 🙂\r\n`).join('');
}

function internals(history: StreamHistory): { chunks: Array<string | object> } {
  return history as unknown as { chunks: Array<string | object> };
}

describe('StreamHistory packing', () => {
  it('packs old text once output pauses, and every slice reads back exactly', async () => {
    const clock = new ManualClock();
    const history = new StreamHistory(4 * 1024 * 1024, 512, clock);
    let all = '';
    for (let i = 0; all.length < plainTailChars + 6 * packBlockChars; i++) {
      const text = chunk(i);
      history.append(text);
      all += text;
    }
    // Still flowing: nothing packed.
    await clock.advance(packQuietMs - 1);
    expect(internals(history).chunks.every((c) => typeof c === 'string')).toBe(true);
    await clock.advance(packQuietMs * 2 + 100);
    const chunks = internals(history).chunks;
    const packed = chunks.filter((c) => typeof c !== 'string').length;
    expect(packed).toBeGreaterThanOrEqual(5);
    // The newest text stays plain.
    const plain = chunks.filter((c): c is string => typeof c === 'string').reduce((n, c) => n + c.length, 0);
    expect(plain).toBeGreaterThanOrEqual(plainTailChars);
    expect(clock.pending).toBe(0);
    expect(history.slice(0)).toBe(all);
    for (const [from, to] of [
      [0, 10],
      [1, packBlockChars + 7],
      [packBlockChars - 3, 3 * packBlockChars + 5],
      [all.length - 100, all.length],
    ]) {
      expect(history.slice(from!, to!)).toBe(all.slice(from, to));
    }
  });

  it('keeps its bound with packed blocks, dropping the oldest first', async () => {
    const clock = new ManualClock();
    const max = plainTailChars + 3 * packBlockChars;
    const history = new StreamHistory(max, 512, clock);
    let all = '';
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 200; i++) {
        const text = chunk(round * 1000 + i);
        history.append(text);
        all += text;
      }
      await clock.advance(1000);
    }
    expect(history.offset).toBe(all.length);
    expect(history.floor).toBeGreaterThan(0);
    expect(all.length - history.floor).toBeLessThanOrEqual(max);
    expect(history.slice(history.floor)).toBe(all.slice(history.floor));
  });

  it('stays plain without a clock', () => {
    const history = new StreamHistory(1024 * 1024);
    history.append('x'.repeat(600_000));
    expect(internals(history).chunks.every((c) => typeof c === 'string')).toBe(true);
  });
});
