import { describe, expect, it } from 'vitest';
import { confirmGapMs, earlyLooksPerReset, ProbeCadence, probeFirstIntervalMs, probeMaxIntervalMs } from '../../src/main/terminal/readiness/probe-cadence';

const nothing = { confirming: false, quietDueMs: null };

describe('ProbeCadence', () => {
  it('backs off from the first interval to the ceiling while nothing is in sight', () => {
    const cadence = new ProbeCadence();
    expect(cadence.nextMs).toBe(probeFirstIntervalMs);
    const delays = Array.from({ length: 10 }, () => cadence.after(nothing));
    expect(delays.slice(0, 3)).toEqual([15, 23, 35]);
    expect(Math.max(...delays)).toBe(probeMaxIntervalMs);
    expect(delays.at(-1)).toBe(probeMaxIntervalMs);
    cadence.reset();
    expect(cadence.nextMs).toBe(probeFirstIntervalMs);
  });

  it('confirms evidence after the gap and restarts the back-off', () => {
    const cadence = new ProbeCadence();
    for (let i = 0; i < 6; i++) cadence.after(nothing);
    expect(cadence.after({ confirming: true, quietDueMs: null })).toBe(confirmGapMs);
    expect(cadence.after(nothing)).toBe(15);
  });

  it('looks when a reader passes its quiet period, never sooner than the gap', () => {
    const cadence = new ProbeCadence();
    expect(cadence.after({ confirming: false, quietDueMs: 6.2 })).toBe(7);
    expect(cadence.after({ confirming: false, quietDueMs: 0.5 })).toBe(confirmGapMs);
    // Due later than the back-off step: the back-off wins.
    expect(cadence.after({ confirming: false, quietDueMs: 500 })).toBe(35);
  });

  it('bounds early looks per reset, so a reader under a trickle of output costs the back-off', () => {
    const cadence = new ProbeCadence();
    const early = { confirming: false, quietDueMs: 5 };
    const delays = Array.from({ length: earlyLooksPerReset + 3 }, () => cadence.after(early));
    expect(delays.slice(0, earlyLooksPerReset)).toEqual(Array(earlyLooksPerReset).fill(5));
    expect(delays.slice(earlyLooksPerReset).every((ms) => ms > 5)).toBe(true);
    cadence.reset();
    expect(cadence.after(early)).toBe(5);
  });
});
