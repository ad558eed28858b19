import { describe, expect, it } from 'vitest';
import { waitFor } from '../../src/main/clock.js';
import { ManualClock } from '../support/manual-clock.js';

describe('waitFor', () => {
  it('ends at the bound and leaves nothing behind', async () => {
    const clock = new ManualClock();
    const signal = new AbortController().signal;
    let subscribed = 0;
    const outcome = waitFor(clock, {
      ms: 100,
      signal,
      until: () => {
        subscribed++;
        return () => subscribed--;
      },
    });
    await clock.advance(99);
    let settled = false;
    void outcome.then(() => (settled = true));
    await clock.advance(0);
    expect(settled).toBe(false);
    await clock.advance(1);
    expect(await outcome).toEqual({ kind: 'timeout' });
    expect(subscribed).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('ends when the condition is met, with its value, clearing the timer', async () => {
    const clock = new ManualClock();
    let wake: ((value: string) => void) | null = null;
    const outcome = waitFor<string>(clock, { ms: 1000, until: (met) => void (wake = met) });
    await clock.advance(10);
    wake!('ready');
    expect(await outcome).toEqual({ kind: 'met', value: 'ready' });
    expect(clock.pending).toBe(0);
  });

  it('is met by a promise, and a rejected promise rejects', async () => {
    const clock = new ManualClock();
    expect(await waitFor(clock, { ms: 50, until: Promise.resolve(7) })).toEqual({ kind: 'met', value: 7 });
    await expect(waitFor(clock, { ms: 50, until: Promise.reject(new Error('boom')) })).rejects.toThrow('boom');
    expect(clock.pending).toBe(0);
  });

  it('ends on abort with the reason, before or during the wait', async () => {
    const clock = new ManualClock();
    const early = new AbortController();
    early.abort('gone');
    expect(await waitFor(clock, { ms: 50, signal: early.signal })).toEqual({ kind: 'aborted', reason: 'gone' });
    const late = new AbortController();
    const outcome = waitFor(clock, { ms: 50, signal: late.signal });
    late.abort('later');
    expect(await outcome).toEqual({ kind: 'aborted', reason: 'later' });
    expect(clock.pending).toBe(0);
  });

  it('settles once: a condition met while subscribing unsubscribes at once', async () => {
    const clock = new ManualClock();
    let unsubscribed = 0;
    const outcome = waitFor<string>(clock, {
      ms: 50,
      until: (met) => {
        met('now');
        met('again');
        return () => unsubscribed++;
      },
    });
    expect(await outcome).toEqual({ kind: 'met', value: 'now' });
    expect(unsubscribed).toBe(1);
  });

  it('waits unbounded with ms Infinity, arming no timer', async () => {
    const clock = new ManualClock();
    let wake: (() => void) | null = null;
    const outcome = waitFor(clock, { ms: Infinity, until: (met) => void (wake = () => met(undefined)) });
    expect(clock.pending).toBe(0);
    await clock.advance(1e9);
    wake!();
    expect(await outcome).toEqual({ kind: 'met', value: undefined });
  });
});
