import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { castWriter, heldTailChars, maxInFlightChars, newCastWriter } from '../../src/main/record/cast-writer.js';
import { redact } from '../../src/main/record/redact.js';
import { credentialNames, credentialSuffixes, isCredentialName, keptNames } from '../../src/main/shells/credentials.js';
import { RecordingStore } from '../../src/main/record/store.js';
import { defaultSettings } from '../../src/shared/settings.js';
import { ManualClock } from '../support/manual-clock.js';
import { recordingMeta } from '../support/recording-meta.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-cast-writer-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const MiB = 1024 * 1024;

/** The same events through a writer: a header, colored output, a non-ASCII line, a marker, the exit. */
async function write(thread: boolean, name: string, maxBytes = MiB): Promise<{ text: string; size: number; stops: string[]; mode: string }> {
  const writer = newCastWriter(thread);
  const stops: string[] = [];
  const path = join(dir, name);
  const file = writer.open({ path, maxBytes, reserve: 256, startAt: 1000, stoppedMarker: 'bound reached', onStopped: (reason) => stops.push(reason) });
  file.raw('{"version":3}\n');
  expect(file.event('o', '\x1b[32mgreen\x1b[0m\r\n', 1000, false)).toBe(true);
  expect(file.event('o', 'naïve ✓ 日本 "quoted" \\ \u2028\r\n', 1250.5, false)).toBe(true);
  // An event timed before the last one is written at the last one's time (no negative interval).
  expect(file.event('m', 'command start', 1200, false)).toBe(true);
  expect(file.event('x', '0', 3000, true)).toBe(true);
  const size = await file.close();
  return { text: readFileSync(path, 'utf8'), size, stops, mode: writer.mode };
}

describe('the .cast writer (its own thread, or the same program inline)', () => {
  it('writes the same lines on its thread as inline, timed against the event before, 0600', async () => {
    const threaded = await write(true, 'a.cast');
    const inline = await write(false, 'b.cast');
    expect(threaded.mode).toBe('thread');
    expect(inline.mode).toBe('inline');
    expect(threaded.text).toBe(inline.text);
    expect(threaded.text.split('\n')).toEqual([
      '{"version":3}',
      '[0,"o","\\u001b[32mgreen\\u001b[0m\\r\\n"]',
      '[0.2505,"o","naïve ✓ 日本 \\"quoted\\" \\\\ \u2028\\r\\n"]',
      '[0,"m","command start"]',
      '[1.7495,"x","0"]',
      '',
    ]);
    expect(threaded.size).toBe(Buffer.byteLength(threaded.text));
    expect(statSync(join(dir, 'a.cast')).mode & 0o777).toBe(0o600);
    expect(castWriter().mode).toBe(process.env.TANDEM_RECORD_THREAD === '0' ? 'inline' : 'thread');
  });

  it('stops at its size bound once, keeping the reserve for the marker and the exit', async () => {
    for (const thread of [true, false]) {
      const writer = newCastWriter(thread);
      const stops: string[] = [];
      const path = join(dir, `bound-${thread}.cast`);
      const file = writer.open({ path, maxBytes: 4096, reserve: 512, startAt: 0, stoppedMarker: 'bound reached', onStopped: (reason) => stops.push(reason) });
      let taken = 0;
      for (let i = 0; i < 50; i++) if (file.event('o', 'y'.repeat(200), i, false)) taken += 1;
      // The recorder learns of the bound from the writer's answer, so it posted all 50.
      expect(taken).toBe(50);
      await file.drained();
      expect(stops).toEqual(['size']);
      expect(file.event('o', 'after', 60, false)).toBe(false);
      expect(file.event('x', '0', 61, true)).toBe(true);
      const size = await file.close();
      const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
      expect(size).toBeLessThanOrEqual(4096);
      expect(lines.filter((line) => line.includes('bound reached'))).toHaveLength(1);
      expect(lines.at(-1)).toMatch(/^\[0\.0\d+,"x","0"\]$/);
      expect(lines.length).toBeGreaterThan(10);
    }
  });

  it('refuses output past its in-flight bound until the writer has caught up', async () => {
    for (const thread of [true, false]) {
      const file = newCastWriter(thread).open({
        path: join(dir, `flight-${thread}.cast`),
        maxBytes: 1024 * MiB,
        reserve: 0,
        startAt: 0,
        stoppedMarker: '',
        onStopped: () => undefined,
      });
      const chunk = 'z'.repeat(MiB);
      let taken = 0;
      // One turn of the loop: no answer from the writer can arrive in between.
      for (let i = 0; i < 20; i++) if (file.event('o', chunk, i, false)) taken += 1;
      expect(taken).toBe(maxInFlightChars / MiB);
      expect(file.inFlight).toBe(maxInFlightChars);
      await file.drained();
      expect(file.inFlight).toBe(0);
      expect(file.event('o', chunk, 30, false)).toBe(true);
      expect(await file.close()).toBeGreaterThan(17 * MiB);
    }
  });
});

describe('output through the writer (joined, a cut tail held, redacted there)', () => {
  it('redacts a credential cut between reads and batches, on its thread as inline', async () => {
    const texts: string[] = [];
    for (const thread of [true, false]) {
      const path = join(dir, `held-${thread}.cast`);
      const file = newCastWriter(thread).open({ path, maxBytes: MiB, reserve: 0, startAt: 0, stoppedMarker: '', onStopped: () => undefined });
      const batches = [['export AWS_SECRET_ACC', 'ESS_KEY=abcd'], ['efgh more\r\nGITHUB_'], ['TOKEN=ghp_1234'], []];
      batches.forEach((pieces, i) => file.output(pieces, pieces.join('').length, i * 16, pieces.length === 0));
      // A marker does not let go of what is held (the last 4,096 characters of a longer token); the close does.
      file.output(['password=hunter2 ', 'x'.repeat(heldTailChars + 1)], heldTailChars + 18, 100, false);
      file.event('m', 'after', 101, false);
      expect(await file.close()).toBeGreaterThan(0);
      texts.push(readFileSync(path, 'utf8'));
    }
    expect(texts[0]).toBe(texts[1]);
    const events = texts[0]!
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as [number, string, string]);
    expect(events.map((e) => e[2]).join('')).toBe(
      `export AWS_SECRET_ACCESS_KEY=[redacted] more\r\nGITHUB_TOKEN=[redacted]password=[redacted] xafter${'x'.repeat(heldTailChars)}`,
    );
    expect(texts[0]).not.toMatch(/abcd|efgh|ghp_|hunter2/);
    expect(events.at(-3)![2]).toBe('password=[redacted] x');
    expect(events.at(-1)![2]).toBe('x'.repeat(heldTailChars));
  });

  it('redacts across its own parts of a long read and a value cut just after its separator', async () => {
    const texts: string[] = [];
    // A read longer than the writer's parts (32 Ki characters), a token across the first boundary.
    const long = `${'a '.repeat(16_370)}GITHUB_TOKEN=ghp_${'s'.repeat(40)} ${'b'.repeat(9_000)}\r\n`;
    expect(long.indexOf('ghp_')).toBeLessThan(32 * 1024);
    expect(long.indexOf('ghp_') + 44).toBeGreaterThan(32 * 1024);
    for (const thread of [true, false]) {
      const path = join(dir, `parts-${thread}.cast`);
      const file = newCastWriter(thread).open({ path, maxBytes: 4 * MiB, reserve: 0, startAt: 0, stoppedMarker: '', onStopped: () => undefined });
      file.output([long], long.length, 0, false);
      file.output(['Password: '], 10, 16, false);
      file.output(['hunter2\r\nexport API_KEY = '], 26, 32, false);
      file.output(['"sk-live-1" done\r\n'], 19, 48, true);
      await file.close();
      texts.push(readFileSync(path, 'utf8'));
    }
    expect(texts[0]).toBe(texts[1]);
    const data = texts[0]!
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as [number, string, string])[2])
      .join('');
    expect(data).not.toMatch(/ghp_|hunter2|sk-live/);
    expect(data).toBe(long.replace(/ghp_s+/, '[redacted]') + 'Password: [redacted]\r\nexport API_KEY = "[redacted]" done\r\n');
  });

  it('holds what may still become a credential until more of it comes, across pauses, keys, resizes and markers (black-box round s46)', async () => {
    type Step = ['o', string] | ['i', string] | ['r' | 'm', string];
    // Each key as it is typed, then echoed; then Enter.
    const typed = (line: string): Step[] =>
      [...line, '\r'].flatMap((key): Step[] => [
        ['i', key],
        ['o', key === '\r' ? '\r\n' : key],
      ]);
    const cases: Record<string, Step[]> = {
      pause: [
        ['o', 'GITHUB_TOKEN='],
        ['m', 'later'],
        ['o', 'zq9SEKRIT1\r\n'],
      ],
      'cut in the name': [
        ['o', 'GITHUB_TO'],
        ['r', '100x30'],
        ['o', 'KEN=zq9SEKRIT2\r\n'],
      ],
      'cut in the value': [
        ['o', 'GITHUB_TOKEN=zq9SEK'],
        ['i', 'a'],
        ['o', 'RIT3rest\r\n'],
      ],
      'space before the separator': [
        ['o', 'GITHUB_TOKEN ='],
        ['o', ' zq9SEKRIT4\r\n'],
        ['o', 'password :'],
        ['o', ' zq9SEKRIT5\r\n'],
      ],
      'separator and space, then the value': [
        ['o', 'Password: '],
        ['m', 'waiting for input'],
        ['o', 'zq9SEKRIT6\r\n'],
      ],
      'a tab before the name': [
        ['o', `${'x'.repeat(5000)}\tGITHUB_TOKEN=`],
        ['o', 'zq9SEKRIT7\r\n'],
      ],
      'a long value': [
        ['o', `export GITHUB_TOKEN=zq9SEKRIT8${'v'.repeat(40_000)}`],
        ['o', `${'v'.repeat(9000)}TAILEND more\r\n`],
      ],
      'a long run of values': [['o', `${'x'.repeat(4200)}${';GITHUB_TOKEN=SEKRIT9Q'.repeat(150)}\r\n`]],
      'a URL cut before its password': [
        ['o', 'curl https://user'],
        ['m', 'x'],
        ['o', ':zq9SEKRITa@example.com/db\r\n'],
      ],
      'a webhook cut in its path': [
        ['o', 'https://hooks.slack.com/services/T000/'],
        ['o', 'B000/zq9SEKRITb\r\n'],
      ],
      'typed a key at a time': typed('echo GITHUB_TOKEN=zq9SEKRITc'),
      'the exit after a name': [
        ['o', 'ok\r\npassword: '],
        ['o', 'zq9SEKRITd'],
      ],
      // Round s46b: a name whose separator is still to come, a scheme cut inside `://`, long tokens.
      'a name, then its separator': [
        ['o', 'GITHUB_TOKEN '],
        ['o', '= zq9SEKRITe\r\n'],
        ['o', '{"password"'],
        ['o', ': "zq9SEKRITf"}\r\n'],
        ['o', 'API_KEY '],
        ['o', ': zq9SEKRITg\r\n'],
      ],
      'a scheme cut inside ://': [
        ['o', 'psql postgres:/'],
        ['o', '/u:zq9SEKRITh@h/db\r\n'],
        ['o', 'https:/'],
        ['o', '/hooks.slack.com/services/T0/B0/zq9SEKRITi\r\n'],
      ],
      'a value cut before <': [
        ['o', 'GITHUB_TOKEN=ab-'],
        ['o', '<zq9SEKRITj\r\n'],
      ],
      'a long token before a URL': [
        ['o', `${'A'.repeat(4090)}postgres://u:zq9SEKRITk`],
        ['o', '@h/db\r\n'],
      ],
      // Round s46c: a user part holding `@` kept the password even in one piece.
      'a user part with @': [['o', 'git clone https://me@corp.com:zq9SEKRITp@git.example/repo.git\r\n']],
      'a long name': [
        ['o', `${'X'.repeat(4090)}_TOKEN=`],
        ['o', 'zq9SEKRITl\r\n'],
      ],
      'typed with spaces a key at a time': typed('echo API_KEY = zq9SEKRITm; psql postgres://u:zq9SEKRITn@h/db'),
    };
    for (const [name, steps] of Object.entries(cases)) {
      const texts: string[] = [];
      for (const thread of [true, false]) {
        const path = join(dir, `${name.replace(/\W/g, '_')}-${thread}.cast`);
        const file = newCastWriter(thread).open({ path, maxBytes: 4 * MiB, reserve: 0, startAt: 0, stoppedMarker: '', onStopped: () => undefined });
        steps.forEach(([code, data], i) => {
          // Long outputs come as the PTY delivers them: in reads of a few KiB.
          if (code === 'o') file.output(data.match(/[^]{1,4000}/g) ?? [], data.length, i * 50, false);
          else file.event(code, data, i * 50, false);
        });
        file.event('x', '0', steps.length * 50, true);
        await file.close();
        texts.push(readFileSync(path, 'utf8'));
      }
      expect(texts[0], name).toBe(texts[1]);
      const events = texts[0]!
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as [number, string, string]);
      const joined = (code: string) =>
        events
          .filter((e) => e[1] === code)
          .map((e) => e[2])
          .join('');
      expect(texts[0], name).not.toMatch(/SEKRIT|RIT3rest|TAILEND|vvvv/);
      expect(joined('o'), name).toContain('[redacted]');
      if (name === 'typed a key at a time') expect(joined('i')).toBe('echo GITHUB_TOKEN=[redacted]\r');
      if (name === 'typed with spaces a key at a time') expect(joined('i')).toBe('echo API_KEY = [redacted] psql postgres://u:[redacted]@h/db\r');
      if (name === 'a name, then its separator')
        expect(joined('o')).toBe('GITHUB_TOKEN = [redacted]\r\n{"password": "[redacted]"}\r\nAPI_KEY : [redacted]\r\n');
      if (name === 'the exit after a name') expect(events.at(-1)).toEqual([expect.any(Number), 'x', '0']);
      // Everything else is kept, in its order.
      if (name === 'separator and space, then the value') expect(joined('o')).toBe('Password: [redacted]\r\n');
      if (name === 'a URL cut before its password') expect(joined('o')).toBe('curl https://user:[redacted]@example.com/db\r\n');
    }
  });

  it("the thread's redaction decides names as the agent environment's scrub does", () => {
    const names = [
      ...credentialNames,
      ...credentialSuffixes.map((suffix) => `MY${suffix}`),
      ...keptNames,
      'TOKENIZERS_PARALLELISM',
      'KEYBOARD',
      'PATH',
      'EDITOR',
    ];
    for (const name of names) {
      for (const spelled of [name, name.toLowerCase()]) {
        const line = `${spelled}=value123 next`;
        expect(redact(line) !== line, line).toBe(isCredentialName(spelled));
      }
    }
  });
});

describe('a gap in the recording', () => {
  it('takes the first token after output the writer could not take for the rest of a value', async () => {
    for (const thread of [true, false]) {
      const path = join(dir, `gap-${thread}.cast`);
      const file = newCastWriter(thread).open({ path, maxBytes: MiB, reserve: 0, startAt: 0, stoppedMarker: '', onStopped: () => undefined });
      file.output(['ok\r\nexport GITHUB_'], 17, 0, false);
      // (The recorder skipped a batch here: `TOKEN=`, perhaps.)
      file.output(['zq9SEKRITo more\r\n'], 18, 20, false, true);
      await file.close();
      const text = readFileSync(path, 'utf8');
      expect(text).not.toContain('SEKRIT');
      expect(text).toContain('more');
    }
  });
});

describe('what a recorder writes about its terminal', () => {
  it('redacts a title that holds a credential (an agent names its terminals), in the header and the open record', async () => {
    const clock = new ManualClock();
    const store = new RecordingStore(join(dir, 'recordings'), { clock, wall: () => Date.UTC(2026, 0, 10), bounds: () => ({ ...defaultSettings }) });
    try {
      await store.finish(store.open(recordingMeta('titled', { title: 'deploy GITHUB_TOKEN=zq9TITLEVALUE' }))!, 'agent', 0);
      const id = (await store.list())[0]!.id;
      for (const name of [`${id}.cast`, `${id}.timeline.jsonl`]) {
        const text = readFileSync(join(store.dir, name), 'utf8');
        expect(text, name).not.toContain('zq9TITLEVALUE');
        expect(text, name).toContain('deploy GITHUB_TOKEN=[redacted]');
      }
    } finally {
      store.dispose();
    }
  });
});

describe('a recorder ahead of its writer', () => {
  it('skips what the writer could not take, and says how much where it went missing', async () => {
    const clock = new ManualClock();
    const store = new RecordingStore(join(dir, 'recordings'), {
      clock,
      wall: () => Date.UTC(2026, 0, 10),
      bounds: () => ({ ...defaultSettings, recordingMaxMiB: 1024 }),
    });
    try {
      const recorder = store.open(recordingMeta('fast', { origin: 'user', agent: null }))!;
      const chunk = `${'w'.repeat(MiB - 1)}\n`;
      for (let i = 0; i < 20; i++) {
        recorder.output(chunk);
        recorder.flushOutput(true);
      }
      await recorder.flushed();
      // The next batch, with the writer caught up, carries the marker first.
      // (A line break first: the first token after a gap is taken for the rest of a value.)
      recorder.output('\r\nafter\r\n');
      recorder.flushOutput(true);
      await store.finish(recorder, 'ui', 0);
      const id = (await store.list())[0]!.id;
      const lines = readFileSync(join(store.dir, `${id}.cast`), 'utf8')
        .trimEnd()
        .split('\n');
      const outputs = lines.filter((line) => line.includes('"o"'));
      expect(outputs).toHaveLength(maxInFlightChars / MiB + 1);
      const skipped = lines.findIndex((line) => line.includes(`recording skipped ${20 * MiB - maxInFlightChars} characters of output`));
      expect(skipped).toBeGreaterThan(0);
      expect(lines[skipped + 1]).toContain('after');
    } finally {
      store.dispose();
    }
  });
});
