import { describe, expect, it } from 'vitest';
import { RanLog, clipRanLine, ranCharsPerAgent, ranLineChars, ranLogPerAgent } from '../../src/main/agent/service/ran-log.js';

const entry = (command: string) => ({ command, terminalId: 't1', title: 'tab', at: '2026-12-06T00:00:00Z' });

describe('the log of lines that ran without asking (ran-log.ts)', () => {
  it("keeps a long line's start and end and counts what it leaves out", () => {
    const line = `start${'x'.repeat(100_000)}end`;
    const clipped = clipRanLine(line);
    expect(clipped.length).toBeLessThanOrEqual(ranLineChars);
    expect(clipped.startsWith('startxx')).toBe(true);
    expect(clipped.endsWith('xxend')).toBe(true);
    const left = Number(/ … (\d+) more characters … /.exec(clipped)![1]);
    expect(left + clipped.length - / … \d+ more characters … /.exec(clipped)![0].length).toBe(line.length);
    expect(clipRanLine('short')).toBe('short');
  });

  it('stays bounded in characters however long and many the lines (black-box round 15: typeahead logged whole, megabytes an entry)', () => {
    const log = new RanLog();
    let typed = '';
    for (let i = 0; i < 2 * ranLogPerAgent; i++) {
      typed += '😀'.repeat(15_000);
      log.record('agent', entry(typed));
    }
    const entries = log.list()[0]!.entries;
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.reduce((sum, e) => sum + e.command.length, 0)).toBeLessThanOrEqual(ranCharsPerAgent);
    expect(entries.every((e) => e.command.length <= ranLineChars)).toBe(true);
    // Ordinary lines: the newest 200 kept whole.
    const plain = new RanLog();
    for (let i = 0; i < ranLogPerAgent + 5; i++) plain.record('agent', entry(`echo ${i}`));
    const kept = plain.list()[0]!.entries;
    expect(kept.length).toBe(ranLogPerAgent);
    expect(kept.at(-1)!.command).toBe(`echo ${ranLogPerAgent + 4}`);
  });
});
