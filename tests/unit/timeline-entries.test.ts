import { describe, expect, it } from 'vitest';
import { lineHash, readTimelines, type TimelineSource, verifyTimeline } from '../../src/main/record/timeline.js';
import { filterEntries, toEntries } from '../../src/renderer/src/components/timeline/entries.js';

/** A chained JSONL of records (each gets seq, t, at and prev). */
function jsonl(records: Record<string, unknown>[], minute = 0): string {
  let prev: string | null = null;
  const lines: string[] = [];
  records.forEach((fields, i) => {
    const line = JSON.stringify({
      seq: i + 1,
      type: fields.type,
      t: i,
      at: `2026-01-10T10:${String(minute).padStart(2, '0')}:${String(i).padStart(2, '0')}.000Z`,
      ...fields,
      prev,
    });
    prev = lineHash(line);
    lines.push(line);
  });
  return `${lines.join('\n')}\n`;
}

function source(files: Record<string, { terminalId: string; text: string }>): TimelineSource {
  return {
    list: async () => Object.entries(files).map(([id, f]) => ({ id, terminalId: f.terminalId, startedAt: '', live: true })),
    export: async (id) => ({ id, timeline: files[id]!.text, timelineTruncated: false, verification: verifyTimeline(files[id]!.text) }),
  };
}

const personTerminal = jsonl(
  [
    { type: 'open', agent: null, title: 'mine' },
    { type: 'command', by: 'person', command: 'ls', exitCode: 0 },
    { type: 'handoff', kind: 'hand_to', from: 'person', to: 'agent:codex', note: null },
    { type: 'approval_asked', by: 'agent:codex', line: 'make', why: 'not allowed' },
    { type: 'send', by: 'agent:codex', handoff: true, line: 'make', allowed: 'approval' },
    { type: 'command', by: 'agent:codex', handoff: true, command: 'make', allowed: 'approval', exitCode: 2 },
    { type: 'send', by: 'agent:codex', handoff: true, line: 'y', allowed: 'always' },
    { type: 'rejection', by: 'agent:codex', line: 'rm -rf x', reason: 'no', decidedBy: 'person' },
    { type: 'command', by: 'person', command: 'git status', exitCode: 0 },
  ],
  0,
);
const agentTerminal = jsonl(
  [
    { type: 'open', agent: 'codex', title: 'codex: build' },
    { type: 'command', by: 'agent:codex', command: 'npm test', allowed: 'allow_entry', exitCode: 0 },
    { type: 'policy', agent: 'codex', policy: 'ask' },
  ],
  5,
);
const otherAgent = jsonl(
  [
    { type: 'open', agent: 'claude', title: 'claude' },
    { type: 'command', by: 'agent:claude', command: 'pwd', exitCode: 0 },
  ],
  7,
);

describe('the timeline operation (readTimelines)', () => {
  const files = {
    '20260110T100000000Z-t1': { terminalId: 't1', text: personTerminal },
    '20260110T100500000Z-t2': { terminalId: 't2', text: agentTerminal },
    '20260110T100700000Z-t3': { terminalId: 't3', text: otherAgent },
  };

  it("reads one terminal's timeline whole, with its chain", async () => {
    const read = await readTimelines(source(files), { terminalId: 't1' });
    expect(read.records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(read.records.every((r) => r.terminalId === 't1' && r.fileLine === r.seq)).toBe(true);
    // The record's own `line` (a send's text) is not overwritten.
    expect(read.records[4]!.line).toBe('make');
    expect(read.chains).toEqual([expect.objectContaining({ terminalId: 't1', ok: true, firstBad: null })]);
    expect(read.truncated).toBe(false);
    expect((await readTimelines(source(files), { terminalId: 'nope' })).records).toEqual([]);
  });

  it("reads an agent's records across terminals: all of those it opened, its own and handoffs to it in others, none of other agents'", async () => {
    const read = await readTimelines(source(files), { agent: 'codex' });
    expect(read.records.map((r) => `${r.terminalId}:${r.type}`)).toEqual([
      't1:handoff',
      't1:approval_asked',
      't1:send',
      't1:command',
      't1:send',
      't1:rejection',
      't2:open',
      't2:command',
      't2:policy',
    ]);
    expect(read.chains.map((c) => c.terminalId)).toEqual(['t1', 't2']);
  });

  it('keeps the newest records up to the limit', async () => {
    const read = await readTimelines(source(files), { terminalId: 't1', limit: 3 });
    expect(read.records.map((r) => r.seq)).toEqual([7, 8, 9]);
    expect(read.truncated).toBe(true);
  });

  it('reports where a changed file breaks its chain', async () => {
    const changed = personTerminal.replace('"reason":"no"', '"reason":"fine"');
    const read = await readTimelines(source({ '20260110T100000000Z-t1': { terminalId: 't1', text: changed } }), { terminalId: 't1' });
    expect(read.chains[0]).toMatchObject({ ok: false, firstBad: 9 });
  });
});

describe("the Timeline panel's entries", () => {
  it('folds a send into the command it started, keeps one that started none, numbers commands as marks and marks entries from the break', async () => {
    const read = await readTimelines(source({ '20260110T100000000Z-t1': { terminalId: 't1', text: personTerminal } }), { terminalId: 't1' });
    const entries = toEntries(read.records, [{ ...read.chains[0]!, ok: false, firstBad: 9 }]);
    expect(entries.map((e) => e.type)).toEqual(['open', 'command', 'handoff', 'approval_asked', 'command', 'send', 'rejection', 'command']);
    const commands = entries.filter((e) => e.type === 'command');
    expect(commands.map((e) => [e.title, e.markId, e.outcome, e.allowed])).toEqual([
      ['ls', 1, 'ok', null],
      ['make', 2, 'failed', 'approval'],
      ['git status', 3, 'ok', null],
    ]);
    expect(entries.filter((e) => e.suspect).map((e) => e.title)).toEqual(['rm -rf x', 'git status']);
    expect(entries.find((e) => e.type === 'handoff')).toMatchObject({ by: 'person', agent: 'codex' });
  });

  it('filters by who and by outcome', async () => {
    const read = await readTimelines(source({ '20260110T100000000Z-t1': { terminalId: 't1', text: personTerminal } }), { terminalId: 't1' });
    const entries = toEntries(read.records, read.chains);
    expect(filterEntries(entries, 'person', 'all').map((e) => e.title)).toEqual(['Terminal opened: mine', 'ls', 'Handed to an agent', 'git status']);
    expect(filterEntries(entries, 'codex', 'all').map((e) => e.type)).toEqual(['handoff', 'approval_asked', 'command', 'send', 'rejection']);
    expect(filterEntries(entries, 'all', 'failed').map((e) => e.title)).toEqual(['make']);
    expect(filterEntries(entries, 'all', 'rejected').map((e) => e.title)).toEqual(['rm -rf x']);
    expect(filterEntries(entries, 'claude', 'all')).toEqual([]);
  });
});
