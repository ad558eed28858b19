import { describe, expect, it } from 'vitest';
import { exportNames, idleLimitS, parseCast } from '../../src/renderer/src/components/recordings/cast';

const header = JSON.stringify({ version: 3, term: { cols: 80, rows: 24 }, timestamp: 1764748800, title: 'dev: project' });
const cast = (...events: unknown[][]): string => [header, ...events.map((e) => JSON.stringify(e)), '# timeline-head 1 abc', ''].join('\n');

/**
 * What the replay gives asciinema-player (src/renderer/src/components/recordings/cast.ts): only
 * the markers a person seeks to, in the order of the list (so `seek({ marker: k })` is entry k),
 * the time of the markers left out carried to the next event, pauses shortened, and each
 * command named from the timeline's record of the same start.
 */
describe('parseCast: the replay of a Tandem .cast', () => {
  it('keeps the seekable markers in list order, carries the time of the others, and shortens pauses', () => {
    const text = cast(
      [0.5, 'o', '$ '],
      [0.1, 'm', 'input by person'],
      [0.2, 'i', 'ls\r'],
      [0.1, 'm', 'command start by person'],
      [0.3, 'o', 'a.txt\r\n'],
      [0.1, 'm', 'command end: exit 0 · /tmp'],
      [30, 'm', 'approval asked: rm -rf build'],
      [1, 'm', 'input by codex'],
      [0.5, 'i', 'rm -rf build\r'],
      [0.2, 'm', 'command start by codex: rm -rf build'],
      [0.1, 'm', 'command end: exit 1 · /tmp'],
      [2, 'm', 'handoff requested to person: look'],
      [0.1, 'x', '0'],
    );
    const timeline = [
      JSON.stringify({ seq: 1, type: 'command', command: 'ls', start: 0.9, by: 'person', exitCode: 0 }),
      JSON.stringify({ seq: 2, type: 'command', command: 'rm -rf build', start: 33.1, by: 'codex', exitCode: 1 }),
    ].join('\n');
    const parsed = parseCast(text, timeline);
    expect(parsed.entries.map((e) => [e.kind, e.text, e.by, e.exitCode])).toEqual([
      ['command', 'ls', 'person', 0],
      ['approval', 'approval asked: rm -rf build', null, null],
      ['command', 'rm -rf build', 'codex', 1],
      ['handoff', 'handoff requested to person: look', null, null],
    ]);
    const events = parsed.playerData.slice(1) as [number, string, string][];
    // Markers the list does not show are not the player's markers: its k-th marker is entry k.
    expect(events.filter((e) => e[1] === 'm').map((e) => e[2])).toEqual(parsed.entries.map((e) => e.label));
    // Each entry's replay time is where its marker lands in the events handed to the player.
    let at = 0;
    const markerTimes: number[] = [];
    for (const [interval, code] of events) {
      at += interval;
      if (code === 'm') markerTimes.push(at);
    }
    markerTimes.forEach((time, i) => expect(time).toBeCloseTo(parsed.entries[i]!.playT, 6));
    // The 30 s pause (with the dropped end marker's 0.1 s) is shortened; real times are kept apart.
    expect(parsed.entries[1]!.t).toBeCloseTo(31.3, 6);
    expect(parsed.entries[1]!.playT - parsed.entries[0]!.playT).toBeCloseTo(0.3 + idleLimitS, 6);
    expect(parsed.duration).toBeCloseTo(35.2, 6);
    expect(parsed.playDuration).toBeLessThan(parsed.duration - 25);
    expect(parsed.badLines).toBe(0);
    expect(parsed.cuts).toEqual([]);
  });

  it('names a command without a timeline record from its marker, or says its line is not known', () => {
    const parsed = parseCast(cast([0.1, 'm', 'command start by codex: make test'], [1, 'm', 'command start by person']), '');
    expect(parsed.entries.map((e) => [e.text, e.by])).toEqual([
      ['make test', 'codex'],
      ['command (its line is not known)', 'person'],
    ]);
  });

  it('reports the recorder’s cuts and unreadable lines, and refuses what is not asciicast v3', () => {
    const text = `${cast([0.1, 'o', 'x'], [0.1, 'm', "recording stopped: the 20 MiB bound of this terminal's recording was reached (the timeline goes on)"])}[0.1, "o", "cut mid-wri`;
    const parsed = parseCast(text, '');
    expect(parsed.cuts).toEqual(["recording stopped: the 20 MiB bound of this terminal's recording was reached (the timeline goes on)"]);
    expect(parsed.entries.map((e) => e.kind)).toEqual(['notice']);
    expect(parsed.badLines).toBe(1);
    expect(() => parseCast('{"version":2,"width":80,"height":24}\n', '')).toThrow(/not asciicast v3 \(version 2\)/);
    expect(() => parseCast('garbage', '')).toThrow(/no readable header/);
  });

  it('names exported files after the title and the recording id', () => {
    expect(exportNames('20261203T090000000Z-t1', 'codex: npm test / build')).toEqual({
      cast: 'tandem-codex-npm-test-build-20261203T090000000Z-t1.cast',
      timeline: 'tandem-codex-npm-test-build-20261203T090000000Z-t1.timeline.jsonl',
    });
    expect(exportNames('20261203T090000000Z-t1', '').cast).toBe('tandem-terminal-20261203T090000000Z-t1.cast');
  });
});
