import { describe, expect, it } from 'vitest';
import { ManualClock } from '../support/manual-clock.js';
import type { WaitEvidence } from '../../src/main/terminal/readiness/probe.js';
import { cachedModes, modesMaxAgeMs, StatusWatcher, watchFirstMs, watchMaxMs, watchMaxMsSpawning } from '../../src/main/terminal/readiness/status-watcher.js';

function rig(answer: () => WaitEvidence | null, maxIntervalMs?: number) {
  const clock = new ManualClock();
  const looks: number[] = [];
  let changes = 0;
  let offset = 0;
  const watcher = new StatusWatcher({
    clock,
    baseline: () => null,
    probe: async () => {
      looks.push(clock.now());
      return answer();
    },
    offset: () => offset,
    onChange: () => changes++,
    maxIntervalMs,
  });
  return { clock, looks, watcher, changes: () => changes, output: () => (offset += 1) };
}

describe('StatusWatcher', () => {
  it('shows a program that waits within 300 ms of its start, and backs off to one look a second', async () => {
    const { clock, looks, watcher, changes } = rig(() => 'read');
    watcher.start();
    await clock.advance(300);
    expect(watcher.waiting).toBe('read');
    expect(changes()).toBe(1);
    expect(looks).toEqual([watchFirstMs]);
    await clock.advance(10_000);
    const gaps = looks.slice(1).map((at, i) => at - looks[i]!);
    // Never more than 4 looks a second, and one a second once backed off.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(watchFirstMs);
    expect(gaps.at(-1)).toBe(watchMaxMs);
    expect(looks.length).toBeLessThanOrEqual(14);
  });

  it('backs off further where a look starts a process (the ps tier), and output brings it back', async () => {
    const { clock, looks, watcher, output } = rig(() => null, watchMaxMsSpawning);
    watcher.start();
    await clock.advance(60_000);
    const gaps = looks.slice(1).map((at, i) => at - looks[i]!);
    expect(gaps.at(-1)).toBe(watchMaxMsSpawning);
    // The last 30 s hold six looks: one every 5 s.
    expect(looks.filter((at) => at > 30_000)).toHaveLength(6);
    output();
    watcher.activity();
    const before = looks.length;
    await clock.advance(watchFirstMs);
    expect(looks.length).toBe(before + 1);
  });

  it('does not look while output flows, and output clears the evidence until the next look', async () => {
    let waiting: WaitEvidence | null = null;
    const { clock, looks, watcher, output } = rig(() => waiting);
    watcher.start();
    for (let i = 0; i < 20; i++) {
      await clock.advance(100);
      output();
      watcher.activity();
    }
    expect(looks).toEqual([]);
    waiting = 'poll';
    await clock.advance(watchFirstMs);
    expect(watcher.waiting).toBe('poll');
    await clock.advance(5000);
    watcher.activity();
    expect(watcher.waiting).toBeNull();
    // Back at the first interval after activity, not the backed-off one.
    const before = looks.length;
    await clock.advance(watchFirstMs);
    expect(looks.length).toBe(before + 1);
    expect(watcher.waiting).toBe('poll');
  });

  it('ignores a look that raced output, adopts a send’s evidence, and forgets everything on stop', async () => {
    const r = rig(() => 'read');
    const racing = new StatusWatcher({
      clock: r.clock,
      baseline: () => null,
      probe: async () => {
        r.output();
        return 'read';
      },
      offset: () => r.output() - 1,
      onChange: () => undefined,
    });
    racing.start();
    await r.clock.advance(2000);
    expect(racing.waiting).toBeNull();
    racing.stop();

    r.watcher.start();
    r.watcher.adopt('echo_off');
    expect(r.watcher.waiting).toBe('echo_off');
    r.watcher.stop();
    expect(r.watcher.waiting).toBeNull();
    r.watcher.adopt('read');
    expect(r.watcher.waiting).toBeNull();
    const looks = r.looks.length;
    await r.clock.advance(5000);
    expect(r.looks.length).toBe(looks);
  });

  it('reads the terminal modes again only for a new foreground job or after a while', async () => {
    const clock = new ManualClock();
    let runs = 0;
    let job = 100;
    const modes = cachedModes(
      clock,
      () => job,
      async () => (runs++, { echo: true, icanon: true, isig: true }),
    );
    await modes('/dev/pts/1');
    await modes('/dev/pts/1');
    expect(runs).toBe(1);
    job = 101;
    await modes('/dev/pts/1');
    expect(runs).toBe(2);
    await clock.advance(modesMaxAgeMs);
    await modes('/dev/pts/1');
    expect(runs).toBe(3);
  });
});
