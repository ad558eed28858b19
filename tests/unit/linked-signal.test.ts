import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkSignals } from '../../src/main/agent/linked-signal.js';

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('linkSignals', () => {
  it('leaves nothing on a long-lived source once each call is disposed', () => {
    const session = new AbortController();
    for (let i = 0; i < 10_000; i++) {
      const call = new AbortController();
      const linked = linkSignals([call.signal, session.signal]);
      expect(abortListeners(session.signal)).toBe(1);
      linked.dispose();
    }
    expect(abortListeners(session.signal)).toBe(0);
  });

  it('aborts with the reason of whichever source aborts first, and unlinks the others', () => {
    const call = new AbortController();
    const session = new AbortController();
    const linked = linkSignals([call.signal, session.signal]);
    session.abort(new Error('The agent disconnected.'));
    expect(linked.signal.aborted).toBe(true);
    expect((linked.signal.reason as Error).message).toBe('The agent disconnected.');
    expect(abortListeners(call.signal)).toBe(0);
    call.abort(new Error('later'));
    expect((linked.signal.reason as Error).message).toBe('The agent disconnected.');
  });

  it('is aborted at once by a source that already was', () => {
    const gone = new AbortController();
    gone.abort(new Error('gone'));
    const live = new AbortController();
    const linked = linkSignals([live.signal, gone.signal]);
    expect(linked.signal.aborted).toBe(true);
    expect(abortListeners(live.signal)).toBe(0);
  });
});
