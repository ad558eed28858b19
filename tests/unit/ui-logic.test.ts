/**
 * The terminal view's logic without a browser: the protocol guard (on xterm.js's headless
 * build, which shares the browser build's parser and replies), frame ordering, batched
 * acknowledgements, the typed-input window and input chunking.
 */
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import type { Terminal } from '@xterm/xterm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AckBatcher } from '../../src/renderer/src/terminal/ack-batcher';
import { ackDelayMs, ackEveryChars } from '../../src/shared/wire';
import { type Frame, FrameSequencer, frameGapTimeoutMs } from '../../src/renderer/src/terminal/frame-sequencer';
import { chunkInput } from '../../src/renderer/src/terminal/input-chunks';
import { swallowProtocolRequests } from '../../src/renderer/src/terminal/protocol-guard';
import { TypedInputTracker, typedWindowMs } from '../../src/renderer/src/terminal/typed-input';

const { Terminal: Headless } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

/** What xterm.js replies to `input`, with or without the guard. */
async function repliesTo(input: string, guarded: boolean): Promise<string[]> {
  const term = new Headless({ cols: 80, rows: 24, allowProposedApi: true });
  if (guarded) swallowProtocolRequests(term as unknown as Terminal);
  const replies: string[] = [];
  term.onData((data) => replies.push(data));
  await new Promise<void>((resolve) => term.write(input, resolve));
  term.dispose();
  return replies;
}

describe('protocol guard', () => {
  const requests: Record<string, string> = {
    'DA1 (CSI c)': '\x1b[c',
    'DA2 (CSI > c)': '\x1b[>c',
    'DSR status (CSI 5 n)': '\x1b[5n',
    'CPR (CSI 6 n)': '\x1b[6n',
    'DECXCPR (CSI ? 6 n)': '\x1b[?6n',
    'DECRQM ANSI (CSI 4 $ p)': '\x1b[4$p',
    'DECRQM DEC (CSI ? 25 $ p)': '\x1b[?25$p',
    'XTVERSION (CSI > q)': '\x1b[>q',
    'window size report (CSI 18 t)': '\x1b[18t',
    'OSC 10 ?': '\x1b]10;?\x07',
    'OSC 11 ?': '\x1b]11;?\x1b\\',
    'OSC 12 ?': '\x1b]12;?\x07',
    'DECRQSS (DCS $ q m)': '\x1bP$qm\x1b\\',
  };

  it('leaves xterm.js with requests it would answer (the test would notice a missing guard)', async () => {
    expect(await repliesTo(Object.values(requests).join(''), false)).not.toEqual([]);
  });

  for (const [name, request] of Object.entries(requests)) {
    it(`sends no reply to ${name}`, async () => {
      expect(await repliesTo(request, true)).toEqual([]);
    });
  }

  it('still applies what is not a request: colours set by OSC 10, text, title stack', async () => {
    const term = new Headless({ cols: 20, rows: 2, allowProposedApi: true });
    swallowProtocolRequests(term as unknown as Terminal);
    await new Promise<void>((resolve) => term.write('\x1b]10;#ff0000\x07\x1b[22tabc\x1b[23t', resolve));
    expect(term.buffer.active.getLine(0)?.translateToString(true)).toBe('abc');
    term.dispose();
  });
});

describe('FrameSequencer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('applies frames in sequence order after the snapshot, dropping covered ones', () => {
    const applied: number[] = [];
    const gap = vi.fn();
    const sequencer = new FrameSequencer((frame: Frame) => applied.push(frame.seq), gap);
    sequencer.reset(3);
    for (const seq of [2, 3, 5, 4, 7, 6, 5]) sequencer.push({ seq, data: `f${seq}` });
    expect(applied).toEqual([4, 5, 6, 7]);
    vi.advanceTimersByTime(frameGapTimeoutMs * 2);
    expect(gap).not.toHaveBeenCalled();
  });

  it('reports a gap that stays open', () => {
    const gap = vi.fn();
    const sequencer = new FrameSequencer(() => undefined, gap);
    sequencer.reset(0);
    sequencer.push({ seq: 2, data: 'x' });
    vi.advanceTimersByTime(frameGapTimeoutMs - 1);
    expect(gap).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(gap).toHaveBeenCalledTimes(1);
  });
});

describe('AckBatcher', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('acknowledges once per delay, not per frame', () => {
    const acks: number[] = [];
    const batcher = new AckBatcher((seq) => acks.push(seq));
    batcher.reset(0);
    for (let seq = 1; seq <= 20; seq++) batcher.applied(seq, 100);
    expect(acks).toEqual([]);
    vi.advanceTimersByTime(ackDelayMs);
    expect(acks).toEqual([20]);
  });

  it('acknowledges at once when a lot of output was applied', () => {
    const acks: number[] = [];
    const batcher = new AckBatcher((seq) => acks.push(seq));
    batcher.reset(5);
    batcher.applied(6, ackEveryChars / 2);
    batcher.applied(7, ackEveryChars / 2);
    expect(acks).toEqual([7]);
    vi.advanceTimersByTime(ackDelayMs);
    expect(acks).toEqual([7]);
  });

  it('forgets pending acknowledgements when the view re-attaches', () => {
    const acks: number[] = [];
    const batcher = new AckBatcher((seq) => acks.push(seq));
    batcher.applied(1, 10);
    batcher.reset(0);
    vi.advanceTimersByTime(ackDelayMs);
    expect(acks).toEqual([]);
  });
});

describe('TypedInputTracker', () => {
  function tracker(): { typed: TypedInputTracker; element: EventTarget; clock: { now: number } } {
    const clock = { now: 1000 };
    const typed = new TypedInputTracker(() => clock.now);
    const element = new EventTarget();
    typed.observe(element as HTMLElement);
    return { typed, element, clock };
  }

  it('counts data as typed only shortly after a key, paste, composition or drop', () => {
    for (const type of ['keydown', 'paste', 'compositionend', 'drop']) {
      const { typed, element, clock } = tracker();
      expect(typed.isTyped('a')).toBe(false);
      element.dispatchEvent(new Event(type));
      expect(typed.isTyped('a')).toBe(true);
      clock.now += typedWindowMs + 1;
      expect(typed.isTyped('a')).toBe(false);
    }
  });

  it('never counts focus or mouse reports, nor data after a click', () => {
    const { typed, element } = tracker();
    element.dispatchEvent(new Event('keydown'));
    expect(typed.isTyped('\x1b[I')).toBe(false);
    expect(typed.isTyped('\x1b[O')).toBe(false);
    expect(typed.isTyped('\x1b[<0;12;5M')).toBe(false);
    expect(typed.isTyped('\x1b[M !!')).toBe(false);
    expect(typed.isTyped('\x1b[A')).toBe(true);
    element.dispatchEvent(new Event('wheel'));
    expect(typed.isTyped('\x1b[A')).toBe(false);
  });

  it("counts a paste the person chose in the view's menu as typed, though a click came first", () => {
    const { typed, element, clock } = tracker();
    element.dispatchEvent(new Event('mousedown'));
    clock.now += 5;
    expect(typed.isTyped('pasted')).toBe(false);
    typed.markMenuPaste();
    expect(typed.isTyped('pasted')).toBe(true);
    clock.now += typedWindowMs + 1;
    expect(typed.isTyped('pasted')).toBe(false);
  });
});

describe('chunkInput', () => {
  it('keeps small input whole and splits a large paste without breaking a surrogate pair', () => {
    expect(chunkInput('ls\r')).toEqual(['ls\r']);
    const paste = `${'a'.repeat(4)}😀${'b'.repeat(5)}`;
    const chunks = chunkInput(paste, 5);
    expect(chunks.join('')).toBe(paste);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(5);
      expect(() => encodeURIComponent(chunk)).not.toThrow();
    }
  });
});
