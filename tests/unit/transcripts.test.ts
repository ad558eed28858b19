/** TranscriptStore's bounds on an injected clock and wall: count, age, size, and what it refuses to read back. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { boundSnapshot, maxTranscriptChars, sweepEveryMs, TranscriptStore } from '../../src/main/host/transcripts.js';
import type { TerminalView } from '../../src/shared/contract.js';
import { ManualClock } from '../support/manual-clock.js';

const hourMs = 3_600_000;

function info(id: string): TerminalView {
  return {
    id,
    title: id,
    origin: 'agent',
    agent: 'alpha',
    agentConnected: true,
    control: 'agent',
    shared: false,
    shell: 'bash',
    integration: true,
    pid: 1,
    cwd: '/tmp',
    cols: 80,
    rows: 24,
    status: 'idle',
    exitCode: null,
    lastCommand: null,
    handedTo: null,
    sandbox: null,
    program: null,
    agentListening: false,
  };
}

describe('TranscriptStore', () => {
  let dir: string;
  let clock: ManualClock;
  let wall: number;
  let keepHours: number;
  const store = (max?: number) => new TranscriptStore({ dir, clock, wall: () => wall, keepHours: () => keepHours, max });

  beforeEach(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'tandem-transcripts-')), 'transcripts');
    clock = new ManualClock();
    wall = Date.UTC(2026, 0, 1);
    keepHours = 72;
  });
  afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  it('keeps the newest `max`, dropping the oldest first, on disk too', async () => {
    const s = store(3);
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      s.add({ info: info(id), snapshot: `screen ${id}`, reason: 'closed', by: 'alpha' });
      wall += 1000;
    }
    await s.flush();
    expect(s.views().map((v) => v.id)).toEqual(['c', 'd', 'e']);
    expect(readdirSync(dir).sort()).toEqual(['c.json', 'd.json', 'e.json']);
  });

  it('drops transcripts older than the setting at each sweep, on the injected clock', async () => {
    const s = store();
    await s.load();
    s.add({ info: info('old'), snapshot: 'x', reason: 'closed', by: 'alpha' });
    wall += 2 * hourMs;
    s.add({ info: info('new'), snapshot: 'y', reason: 'exited', by: 'alpha' });
    keepHours = 3;
    wall += 1.5 * hourMs;
    await clock.advance(sweepEveryMs);
    await s.flush();
    expect(s.views().map((v) => v.id)).toEqual(['new']);
    expect(readdirSync(dir)).toEqual(['new.json']);
    s.dispose();
    expect(clock.pending).toBe(0);
  });

  it('bounds each snapshot to its newest part, from a line start', () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => `line ${i} ${'x'.repeat(20)}`).join('\r\n');
    const bounded = boundSnapshot(lines);
    expect(bounded.length).toBeLessThanOrEqual(maxTranscriptChars);
    expect(bounded.startsWith('line ')).toBe(true);
    expect(bounded.endsWith('line 39999 ' + 'x'.repeat(20))).toBe(true);
  });

  it('reads back only valid files of their own id; a symlink, garbage or a mismatched id are removed', async () => {
    const s = store();
    s.add({ info: info('good'), snapshot: 'kept screen', reason: 'closed', by: 'alpha' });
    await s.flush();
    const outside = join(dir, '..', 'elsewhere.json');
    writeFileSync(outside, readFileSync(join(dir, 'good.json')));
    symlinkSync(outside, join(dir, 'linked.json'));
    writeFileSync(join(dir, 'garbage.json'), '{not json');
    writeFileSync(join(dir, 'other.json'), readFileSync(join(dir, 'good.json')));
    const again = store();
    await again.load();
    expect(again.views().map((v) => [v.id, v.transcript?.reason])).toEqual([['good', 'restored']]);
    expect(readdirSync(dir)).toEqual(['good.json']);
    again.dispose();
  });

  it("keeps nothing with transcriptKeepHours 0, and removes a live tab's file", async () => {
    keepHours = 0;
    const s = store();
    s.add({ info: info('a'), snapshot: 'x', reason: 'closed', by: 'alpha' });
    s.saveLive(info('b'), 'y');
    await s.flush();
    expect(s.views()).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses input to a transcript view with exited, and only for its own client', () => {
    const s = store();
    s.add({ info: info('a'), snapshot: 'x', reason: 'closed', by: 'alpha' });
    const { attachmentId } = s.attach('a', 'page');
    expect(() => s.refuse(attachmentId, 'page')).toThrow(expect.objectContaining({ code: 'exited' }));
    expect(() => s.refuse(attachmentId, 'other page')).not.toThrow();
    expect(s.detach(attachmentId, 'other page')).toBe(false);
    expect(s.detach(attachmentId, 'page')).toBe(true);
  });
});
