import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { redact } from '../../src/main/record/redact.js';
import { type RecordingBounds, RecordingStore, pruneEveryMs } from '../../src/main/record/store.js';
import { verifyTimeline } from '../../src/main/record/timeline.js';
import { defaultSettings } from '../../src/shared/settings.js';
import { caught } from '../support/caught.js';
import { ManualClock } from '../support/manual-clock.js';
import { recordingMeta } from '../support/recording-meta.js';

const day = 24 * 60 * 60 * 1000;
const meta = (terminalId: string) => recordingMeta(terminalId);

let dir: string;
let clock: ManualClock;
let wall: number;
let bounds: RecordingBounds;
let store: RecordingStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-record-unit-'));
  clock = new ManualClock();
  wall = Date.UTC(2026, 0, 10);
  bounds = { ...defaultSettings };
  store = new RecordingStore(join(dir, 'recordings'), { clock, wall: () => wall, bounds: () => bounds });
});
afterEach(() => {
  store.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** `count` terminals opened and closed in a row, a second apart, each writing 60 KB of output. */
async function filledInARow(prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    wall += 1000;
    const recorder = store.open(meta(`${prefix}${i}`))!;
    for (let j = 0; j < 60; j++) {
      recorder.output(`${'y'.repeat(999)}\n`);
      recorder.flushOutput(true);
    }
    await store.finish(recorder, 'agent', 0);
  }
}

/** A finished recording with a few records, made through the store as the host makes them. */
async function finished(terminalId: string): Promise<string> {
  const recorder = store.open(meta(terminalId))!;
  recorder.send({ who: 'agent', name: 'a' }, 'ls', 'allow_entry');
  recorder.rejected({ who: 'agent', name: 'a' }, 'rm -rf x', 'no', 'person');
  recorder.handoff('request', { from: 'agent:a', to: 'person', note: 'please log in' });
  recorder.output('hello\r\n');
  await store.finish(recorder, 'agent', 0);
  return (await store.list()).find((r) => r.terminalId === terminalId)!.id;
}

describe('the timeline hash chain', () => {
  it('a finished timeline verifies; a changed, removed, moved or inserted record is found at its line', async () => {
    const id = await finished('t1');
    const path = join(store.dir, `${id}.timeline.jsonl`);
    const text = readFileSync(path, 'utf8');
    const lines = text.trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['open', 'send', 'rejection', 'handoff', 'close']);
    expect((await store.export(id)).verification).toEqual({ ok: true, records: 5, firstBad: null, reason: null });

    const check = async (changed: string[]) => {
      writeFileSync(path, `${changed.join('\n')}\n`);
      return (await store.export(id)).verification;
    };
    // A changed field (the person's rejection turned into nothing to see): the next line's prev no longer matches.
    expect(await check(lines.map((l, i) => (i === 2 ? l.replace('"decidedBy":"person"', '"decidedBy":"deny_list"') : l)))).toMatchObject({
      ok: false,
      firstBad: 4,
    });
    // The last record edited: no line after it breaks, the head kept in the .cast does.
    expect(await check(lines.map((l, i) => (i === 4 ? l.replace('"cause":"agent"', '"cause":"ui"') : l)))).toMatchObject({ ok: false, firstBad: 5 });
    // A removed record.
    expect(await check(lines.filter((_, i) => i !== 1))).toMatchObject({ ok: false, firstBad: 2 });
    // The first record removed.
    expect(await check(lines.slice(1))).toMatchObject({ ok: false, firstBad: 1 });
    // Two records swapped.
    expect(await check([lines[0]!, lines[2]!, lines[1]!, lines[3]!, lines[4]!])).toMatchObject({ ok: false, firstBad: 2 });
    // A record inserted.
    expect(await check([lines[0]!, lines[1]!, lines[1]!, ...lines.slice(2)])).toMatchObject({ ok: false, firstBad: 3 });
    // Records cut off the end: no close record.
    expect(await check(lines.slice(0, 3))).toMatchObject({ ok: false, firstBad: 4 });
    // A forged record appended after the close, with a correct chain, is still caught: the last record must be close.
    const forged = JSON.stringify({ seq: 6, type: 'command', allowed: 'approval', prev: 'x' });
    expect(await check([...lines, forged])).toMatchObject({ ok: false, firstBad: 6 });
  });

  it("a live terminal's timeline is checked against the writer's own head: lines cut off the end are found", async () => {
    const recorder = store.open(meta('live1'))!;
    recorder.send({ who: 'agent', name: 'a' }, 'ls', 'allow_entry');
    recorder.send({ who: 'agent', name: 'a' }, 'pwd', 'allow_entry');
    await recorder.flushed();
    const id = (await store.list())[0]!.id;
    expect((await store.export(id)).verification.ok).toBe(true);
    const path = join(store.dir, `${id}.timeline.jsonl`);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    writeFileSync(path, `${lines.slice(0, 2).join('\n')}\n`);
    expect((await store.export(id)).verification).toMatchObject({ ok: false, firstBad: 3 });
    await store.finish(recorder, 'ui', null);
  });

  it('verifyTimeline on text: garbage and a wrong seq', () => {
    expect(verifyTimeline('not json\n')).toMatchObject({ ok: false, firstBad: 1, reason: 'not JSON' });
    expect(verifyTimeline(`${JSON.stringify({ seq: 2, prev: null })}\n`)).toMatchObject({ ok: false, firstBad: 1 });
    expect(verifyTimeline('')).toMatchObject({ ok: true, records: 0 });
  });
});

describe('bounds', () => {
  it('the oldest finished recordings go first, by age at start and by total size, then every hour on the clock; live ones stay', async () => {
    const a = await finished('old1');
    wall += 1000;
    const b = await finished('mid1');
    wall += 1000;
    const c = await finished('new1');
    const live = store.open(meta('live2'))!;
    await live.flushed();
    const at = (id: string, ms: number) => {
      for (const ext of ['cast', 'timeline.jsonl']) utimesSync(join(store.dir, `${id}.${ext}`), ms / 1000, ms / 1000);
    };
    at(a, wall - 31 * day);
    at(b, wall - 2 * day);
    at(c, wall - 1 * day);
    // Age: only the one older than 30 days.
    expect(await store.start()).toEqual([a]);
    // Size: the total is over a bound that fits all but half of the older one's output: that output goes.
    const listed = await store.list();
    const liveBytes = listed.filter((r) => r.live).reduce((sum, r) => sum + r.castBytes + r.timelineBytes, 0);
    const [older, newer] = listed.filter((r) => !r.live);
    bounds = { ...bounds, recordingTotalMiB: (liveBytes + newer!.castBytes + newer!.timelineBytes + older!.timelineBytes + older!.castBytes / 2) / 1048576 };
    expect(await store.prune()).toEqual([b]);
    // Its output went; its timeline (what ran, who approved it) stays while output can go instead.
    const after = await store.list();
    expect(after.map((r) => r.terminalId).sort()).toEqual(['live2', 'mid1', 'new1']);
    expect(after.find((r) => r.terminalId === 'mid1')).toMatchObject({ castBytes: 0, timelineBytes: expect.any(Number) });
    expect((await store.export(b)).verification.ok).toBe(true);
    // Time passes: the hourly prune (injected clock) removes what has aged past the bound.
    bounds = { ...bounds, recordingTotalMiB: 500 };
    wall += 30 * day;
    await clock.advance(pruneEveryMs);
    await store.prune();
    expect((await store.list()).map((r) => r.terminalId)).toEqual(['live2']);
    await store.finish(live, 'ui', null);
    expect(readdirSync(store.dir).length).toBe(2);
  });

  it("an agent's later flood of output fills the bound with no older timeline removed: output goes first (black-box round 13)", async () => {
    const evidence = await finished('evidence');
    const timeline = readFileSync(join(store.dir, `${evidence}.timeline.jsonl`), 'utf8');
    bounds = { ...bounds, recordingTotalMiB: 0.2, recordingMaxMiB: 0.05 };
    await filledInARow('flood', 20);
    await store.prune();
    expect(readFileSync(join(store.dir, `${evidence}.timeline.jsonl`), 'utf8')).toBe(timeline);
    expect((await store.export(evidence)).verification.ok).toBe(true);
  });

  it('terminals opened and closed in a row keep the total near its bound without waiting for the hourly prune', async () => {
    // Black-box round s39: 30 terminals each filling their own bound wrote 586 MiB in a minute
    // against a 500 MiB setting, since the total was enforced only every hour.
    bounds = { ...bounds, recordingTotalMiB: 0.2, recordingMaxMiB: 0.05 };
    const total = () => readdirSync(store.dir).reduce((sum, name) => sum + statSync(join(store.dir, name)).size, 0);
    await filledInARow('churn', 40);
    // At most the bound plus the recordings finished since the last prune (a twentieth of it), plus one.
    expect(total()).toBeLessThanOrEqual(0.2 * 1048576 * 1.05 + 0.06 * 1048576);
    expect(readdirSync(store.dir).length).toBeLessThan(40 * 2);
  });

  it("past its size bound a terminal's .cast keeps no more output and says so once; the timeline goes on", async () => {
    bounds = { ...bounds, recordingMaxMiB: 0.02 };
    const recorder = store.open(meta('big1'))!;
    for (let i = 0; i < 100; i++) {
      recorder.output(`${'x'.repeat(999)}\n`);
      recorder.flushOutput(true);
    }
    recorder.send({ who: 'agent', name: 'a' }, 'after-the-bound', 'allow_entry');
    await store.finish(recorder, 'ui', 0);
    const id = (await store.list())[0]!.id;
    const cast = readFileSync(join(store.dir, `${id}.cast`), 'utf8');
    expect(Buffer.byteLength(cast)).toBeLessThanOrEqual(0.02 * 1048576);
    expect(cast.match(/recording stopped/g)?.length).toBe(1);
    expect(cast.trimEnd().split('\n').at(-2)).toMatch(/^\[[\d.]+,"x","0"\]$/);
    expect(cast.trimEnd().split('\n').at(-1)).toMatch(/^# timeline-head 4 [0-9a-f]{64}$/);
    const exported = await store.export(id);
    expect(exported.timeline).toContain('after-the-bound');
    expect(exported.timeline).toMatch(/"type":"recording",.*"state":"stopped","reason":"size"/);
    expect(exported.verification.ok).toBe(true);
  });

  it('export refuses ids that are not recording or terminal ids (no path leaves the directory)', async () => {
    await finished('t2');
    writeFileSync(join(dir, 'secret.cast'), 'not yours');
    for (const id of ['../secret', '../../etc/passwd', 'a/b', '..']) expect(await caught(() => store.export(id))).toMatchObject({ code: 'invalid_argument' });
    expect(await caught(() => store.export('nosuchterminal'))).toMatchObject({ code: 'not_found' });
  });
});

describe('redaction (the scrub of agent environments, on recorded text)', () => {
  it('names the scrub calls credentials and values shaped like one', () => {
    expect(redact('export GITHUB_TOKEN=ghp_abc next')).toBe('export GITHUB_TOKEN=[redacted] next');
    expect(redact('"OPENAI_API_KEY": "sk-123"')).toBe('"OPENAI_API_KEY": "[redacted]"');
    expect(redact('Password: hunter2')).toBe('Password: [redacted]');
    expect(redact('postgres://u:p4ss@h/db')).toBe('postgres://u:[redacted]@h/db');
    expect(redact('x https://hooks.slack.com/services/T/B/X y')).toBe('x https://hooks.slack.com/[redacted] y');
    // Not credentials: the scrub keeps these names.
    for (const kept of ['TOKENIZERS_PARALLELISM=false', 'SSH_AUTH_SOCK=/tmp/a', 'a=b c:d http://x.com/a', 'KEYBOARD=us']) expect(redact(kept)).toBe(kept);
  });

  it('a value cut between two reads is still redacted whole', async () => {
    const recorder = store.open(meta('cut1'))!;
    recorder.output('export AWS_SECRET_ACC');
    recorder.output('ESS_KEY=abcd');
    await clock.advance(16);
    recorder.output('efgh more\r\n');
    await clock.advance(100);
    await store.finish(recorder, 'ui', 0);
    const id = (await store.list())[0]!.id;
    const cast = readFileSync(join(store.dir, `${id}.cast`), 'utf8');
    expect(cast).not.toContain('abcd');
    expect(cast).toContain('AWS_SECRET_ACCESS_KEY=[redacted] more');
  });
});
