import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TerminalHost } from '../../src/main/host/host.js';
import { RecordingStore } from '../../src/main/record/store.js';
import { systemClock } from '../../src/main/clock.js';
import { defaultSettings } from '../../src/shared/settings.js';
import { until } from '../support/until.js';

// A real bash in a real PTY through the host, the person typing through a view as the UI does.
let root: string;
let host: TerminalHost;
let store: RecordingStore;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'tandem-record-'));
  const home = join(root, 'home');
  store = new RecordingStore(join(root, 'state', 'recordings'), { clock: systemClock, bounds: () => defaultSettings });
  host = new TerminalHost({ env: { ...process.env, HOME: home, SHELL: '/bin/bash', ZDOTDIR: undefined, HISTFILE: undefined }, home: root, recordings: store });
});
afterAll(async () => {
  await host.shutdown();
  rmSync(root, { recursive: true, force: true });
});

type Event = [number, string, string];
function events(cast: string): Event[] {
  return cast
    .trimEnd()
    .split('\n')
    .slice(1)
    .filter((line) => !line.startsWith('#'))
    .map((line) => JSON.parse(line) as Event);
}
function records(timeline: string): Array<Record<string, unknown>> {
  return timeline
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function personTerminal(): Promise<{ id: string; view: string; type: (text: string) => Promise<void> }> {
  const { id } = await host.create({ shell: 'bash', cwd: root, cols: 80, rows: 24 });
  const { attachment } = await host.attach(id, 'person-ui', { frame: () => undefined, closed: () => undefined, writable: () => undefined });
  return { id, view: attachment.id, type: (text) => host.input(attachment.id, text, true) };
}

async function commandEnded(id: string, command: string): Promise<void> {
  await until(() => host.get(id).view().lastCommand?.command === command, `the command ${command}`);
}

describe('a terminal recorded as asciicast v3 with its timeline', () => {
  it('commands, input, a resize and the exit become o/i/r/m/x events; the timeline has each command with its exit code and cwd', async () => {
    const { id, view, type } = await personTerminal();
    await type('true\r');
    await commandEnded(id, 'true');
    await type('(exit 7)\r');
    await commandEnded(id, '(exit 7)');
    host.resize(view, 100, 30);
    await type('cd /tmp\r');
    await commandEnded(id, 'cd /tmp');
    await type('exit 3\r');
    await until(() => host.get(id).view().status === 'exited', 'the shell to exit');
    await host.close(id);
    await until(async () => (await store.export(id)).verification.ok, 'the finished recording');
    const exported = await store.export(id);

    const [header, ...rest] = exported.cast.trimEnd().split('\n');
    expect(JSON.parse(header!)).toMatchObject({ version: 3, term: { cols: 80, rows: 24, type: 'xterm-256color' }, command: 'bash' });
    expect(typeof JSON.parse(header!).timestamp).toBe('number');
    const evs = events(exported.cast);
    // Every line after the header is an event, but the last: the timeline's head, as a v3 comment.
    expect(evs.length).toBe(rest.length - 1);
    expect(rest.at(-1)).toMatch(/^# timeline-head \d+ [0-9a-f]{64}$/);
    for (const [interval, code, data] of evs) {
      expect(interval).toBeGreaterThanOrEqual(0);
      expect(['o', 'i', 'r', 'm', 'x']).toContain(code);
      expect(typeof data).toBe('string');
    }
    const of = (code: string) => evs.filter((e) => e[1] === code).map((e) => e[2]);
    expect(of('o').join('')).toContain('exit 3');
    expect(of('i')).toEqual(['true\r', '(exit 7)\r', 'cd /tmp\r', 'exit 3\r']);
    expect(of('r')).toEqual(['100x30']);
    expect(of('x')).toEqual(['3']);
    const markers = of('m');
    expect(markers[0]).toBe('input by person');
    expect(markers).toContain(`command end: exit 7 · ${root}`);
    expect(markers).toContain('command end: exit 0 · /tmp');
    expect(markers.filter((m) => m.startsWith('command start by person')).length).toBe(4);

    const recs = records(exported.timeline);
    expect(recs[0]).toMatchObject({ seq: 1, type: 'open', terminal: id, origin: 'user', prev: null });
    const commands = recs.filter((r) => r.type === 'command');
    expect(commands.map((c) => [c.command, c.exitCode, c.by])).toEqual([
      ['true', 0, 'person'],
      ['(exit 7)', 7, 'person'],
      ['cd /tmp', 0, 'person'],
    ]);
    expect(commands[2]!.cwd).toBe('/tmp');
    // Each names its command mark in the terminal's views (numbered from 1 as commands start).
    expect(commands.map((c) => c.mark)).toEqual([1, 2, 3]);
    for (const c of commands) expect(c.end as number).toBeGreaterThanOrEqual(c.start as number);
    expect(recs.at(-1)).toMatchObject({ type: 'close', cause: 'host', exitCode: 3 });
    expect(exported.verification).toEqual({ ok: true, records: recs.length, firstBad: null, reason: null });

    // Files 0600 in a 0700 directory.
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    const listed = (await store.list()).find((r) => r.terminalId === id)!;
    expect(statSync(join(store.dir, `${listed.id}.cast`)).mode & 0o777).toBe(0o600);
    expect(statSync(join(store.dir, `${listed.id}.timeline.jsonl`)).mode & 0o777).toBe(0o600);
    expect(listed.live).toBe(false);
  });

  it('what is typed at read -s is never in the recording; a credential-shaped value in output is redacted', async () => {
    const { id, type } = await personTerminal();
    await type('read -s -p \'pw: \' SECRETVAR; echo "got ${#SECRETVAR}"\r');
    // bash blocks in read with echo off: the host's own evidence that it waits for input.
    await until(() => host.get(id).view().status === 'waiting_input' && host.get(id).session.screen.text.includes('pw: '), 'the password prompt');
    // Pasted in one piece with its Enter: the prompt restores echo microseconds after reading it.
    await type('hunter2-zebra-secret\r');
    await until(() => host.get(id).session.screen.text.includes('got 20'), 'the read to finish');
    // Keystroke by keystroke as well.
    await type('read -s -p \'pw2: \' OTHER; echo "got2 ${#OTHER}"\r');
    await until(() => host.get(id).view().status === 'waiting_input' && host.get(id).session.screen.text.includes('pw2: '), 'the second prompt');
    for (const key of 'sneaky-keys-9') await type(key);
    await type('\r');
    await until(() => host.get(id).session.screen.text.includes('got2 13'), 'the second read');
    // The value appears only in output (the typed line holds an arithmetic expansion, not the value).
    await type("printf 'GITHUB_%s=ghp_rec%sordtest\\n' TOKEN $((1+1))\r");
    await until(() => host.get(id).session.screen.text.includes('GITHUB_TOKEN=ghp_rec2ordtest'), 'the token on screen');
    await type('echo postgres://app:pa$((2+2))ss@db.example/x\r');
    await until(() => host.get(id).session.screen.text.includes('pa4ss@db'), 'the URL on screen');
    // A program that pauses between a name and its value, while the view is resized (black-box round s46).
    await type("printf 'API_KEY = '; sleep 0.3; printf 'zq9%s%s\\n' PAUSED VALUE\r");
    await new Promise((resolve) => setTimeout(resolve, 100));
    host.get(id).session.resize(100, 30);
    await until(() => host.get(id).session.screen.text.includes('zq9PAUSEDVALUE'), 'the paused value on screen');
    // A credential typed a key at a time (echoed: it is in the typed keys and in the output).
    for (const key of 'echo GITHUB_TOKEN=zq9TYPEDVALUE') await type(key);
    await type('\r');
    await until(
      () =>
        host
          .get(id)
          .session.screen.text.split('\n')
          .some((line) => line.trim() === 'GITHUB_TOKEN=zq9TYPEDVALUE'),
      'the typed line to run',
    );
    // A directory named like a credential: the cwd in the command records and markers too (round s46b).
    await type('mkdir -p "$(printf \'d/GITHUB_%s=zq9%s\' TOKEN DIRVALUE)" && cd "$_" && echo in-dir\r');
    await until(() => host.get(id).session.screen.text.includes('in-dir') && host.get(id).session.cwd?.includes('DIRVALUE') === true, 'the cd');
    await type('true\r');
    await until(() => host.get(id).session.lastCommand?.command === 'true', 'a command in it');
    await host.close(id);
    await until(async () => (await store.export(id)).verification.ok, 'the finished recording');
    const listed = (await store.list()).find((r) => r.terminalId === id)!;
    const cast = readFileSync(join(store.dir, `${listed.id}.cast`), 'utf8');
    const timeline = readFileSync(join(store.dir, `${listed.id}.timeline.jsonl`), 'utf8');
    expect(cast).not.toContain('zq9DIRVALUE');
    expect(timeline).not.toContain('zq9DIRVALUE');
    expect(timeline).toContain('GITHUB_TOKEN=[redacted]');
    expect(cast).toContain('API_KEY = [redacted]');
    expect(cast).not.toContain('PAUSEDVALUE');
    // The typed line holds the value too: the command in the timeline is redacted whole as well.
    expect(cast).not.toContain('TYPEDVALUE');
    expect(timeline).not.toContain('TYPEDVALUE');
    for (const secret of ['hunter2-zebra-secret', 'hunter2', 'sneaky-keys-9', 'sneaky', 'ghp_rec2ordtest', 'pa4ss']) {
      expect(cast).not.toContain(secret);
      expect(timeline).not.toContain(secret);
    }
    // Single keystrokes are not in any i event either.
    const typed = events(cast)
      .filter((e) => e[1] === 'i')
      .map((e) => e[2]);
    expect(typed.some((t) => t.length === 1 && 'sneaky-keys-9'.includes(t) && t !== '\r')).toBe(false);
    expect(events(cast).filter((e) => e[1] === 'm' && e[2] === 'input hidden: person').length).toBeGreaterThanOrEqual(14);
    expect(cast).toContain('GITHUB_TOKEN=[redacted]');
    expect(cast).toContain('postgres://app:[redacted]@db.example/x');
    expect(cast).toContain('got 20');
    expect(records(timeline).filter((r) => r.type === 'input_hidden').length).toBeGreaterThanOrEqual(14);
  });

  it('recording off: no files for a new terminal', async () => {
    const offRoot = mkdtempSync(join(tmpdir(), 'tandem-record-off-'));
    const offStore = new RecordingStore(join(offRoot, 'recordings'), { clock: systemClock, bounds: () => ({ ...defaultSettings, recording: false }) });
    const offHost = new TerminalHost({ env: { ...process.env, HOME: offRoot, ZDOTDIR: undefined, HISTFILE: undefined }, home: offRoot, recordings: offStore });
    try {
      const { id } = await offHost.create({ shell: 'bash', cwd: offRoot });
      expect(offHost.recorderOf(id)).toBeNull();
      await offHost.close(id);
      expect(await offStore.list()).toEqual([]);
    } finally {
      await offHost.shutdown();
      rmSync(offRoot, { recursive: true, force: true });
    }
  });
});
