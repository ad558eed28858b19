/**
 * The interrupt's follow-up looks (src/main/terminal/readiness/interrupt.ts) in a loop of short
 * jobs, where which group is in front at each look is a race: the platform here is a tiny fake
 * that answers a scripted sequence of foreground groups (the race, made deterministic), and the
 * clock is a ManualClock. The real loop runs in tests/integration/engine.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { PtyPlatform } from '../../src/main/pty/platform.js';
import { interrupt, type InterruptTarget } from '../../src/main/terminal/readiness/interrupt.js';
import type { ReadinessState } from '../../src/main/terminal/readiness/readiness.js';
import { ManualClock } from '../support/manual-clock.js';

const shell = 100;

/** Each look at the foreground group takes the next answer; the last one repeats. */
function scripted(fronts: number[], signalled: Array<[number, string]>): PtyPlatform {
  let looks = 0;
  return {
    os: 'linux',
    processGroups: true,
    foregroundGroup: () => fronts[Math.min(looks++, fronts.length - 1)],
    shellGroup: () => shell,
    foregroundProgram: () => 'sleep',
    signalGroup: (pgid: number, name: string) => void signalled.push([pgid, name]),
    signalJob: () => undefined,
  } as unknown as PtyPlatform;
}

/** `quietInput`: nothing typed since the line was submitted (the key goes first) or typed ahead (SIGINT to the group). */
function target(platform: PtyPlatform, clock: ManualClock, written: string[], quietInput = false): InterruptTarget {
  const state: ReadinessState = { integration: 'full', phase: { kind: 'running', seq: 7, started: true }, lastStartSeq: 7, lastEndSeq: 6, ptyExit: null };
  return {
    pid: shell,
    platform,
    clock,
    ttyPath: null,
    readiness: () => state,
    interrupting: () => undefined,
    write: async (data) => void written.push(data),
    probeNow: async () => false,
    quietInput: () => quietInput,
    gone: () => false,
    onStateChange: () => () => undefined,
  };
}

describe('an interrupt in a loop of short jobs', () => {
  it('follows the next job when a look finds the shell in front between two jobs, and gives the shell no key', async () => {
    const clock = new ManualClock();
    const signalled: Array<[number, string]> = [];
    const written: string[] = [];
    // The first job is signalled (it may already be gone); at the next look the shell is between
    // jobs; at the one after, the next job is in front.
    await interrupt(target(scripted([500, 500, shell, 501], signalled), clock, written));
    expect(signalled).toEqual([[500, 'SIGINT']]);
    await clock.advance(1000);
    expect(signalled).toEqual([[500, 'SIGINT']]);
    await clock.advance(1000);
    expect(signalled).toEqual([
      [500, 'SIGINT'],
      [501, 'SIGINT'],
    ]);
    expect(written).toEqual([]);
  });

  it('stops looking after its bound while the shell stays in front', async () => {
    const clock = new ManualClock();
    const signalled: Array<[number, string]> = [];
    await interrupt(target(scripted([500, 500, shell], signalled), clock, []));
    await clock.advance(60_000);
    expect(signalled).toEqual([[500, 'SIGINT']]);
    expect(clock.pending).toBe(0);
  });

  it('with nothing typed ahead, the first job gets Ctrl+C as a key (the terminal signals it), and the next job is followed as well', async () => {
    const clock = new ManualClock();
    const signalled: Array<[number, string]> = [];
    const written: string[] = [];
    await interrupt(target(scripted([500, shell, 501], signalled), clock, written, true));
    expect(written).toEqual(['\x03']);
    expect(signalled).toEqual([]);
    await clock.advance(1000);
    expect(signalled).toEqual([]);
    await clock.advance(1000);
    expect(signalled).toEqual([[501, 'SIGINT']]);
    expect(written).toEqual(['\x03']);
    await clock.advance(60_000);
    expect(written).toEqual(['\x03']);
  });
});
