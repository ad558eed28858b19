import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkSignals, sourceController } from '../../src/main/agent/mcp/linked-signal.js';

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

  it('holds a session source with one link per call in flight, up to its bound, without a leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const gone = sourceController(64);
      const links = Array.from({ length: 64 }, () => linkSignals([new AbortController().signal, gone.signal]));
      expect(abortListeners(gone.signal)).toBe(64);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
      for (const link of links) link.dispose();
      expect(abortListeners(gone.signal)).toBe(0);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
