/**
 * The wire both ends share (src/shared/wire.ts): the flow-control invariant holds for the
 * constants in use, the check catches each way of breaking it, and the real host and viewer
 * halves (Attachment, AckBatcher) keep a viewer that keeps up within the low watermark.
 */
import { describe, expect, it } from 'vitest';
import { opNames } from '../../src/shared/contract.js';
import { flowControl, flowControlViolations, ipcEventChannel, ipcOpChannel } from '../../src/shared/wire.js';
import { Attachment } from '../../src/main/host/attachment.js';
import { AckBatcher } from '../../src/renderer/src/terminal/ack-batcher.js';

describe('flow control', () => {
  it('holds the invariant with the constants both ends use', () => {
    expect(flowControlViolations(flowControl)).toEqual([]);
  });

  it.each([
    ['ackEveryChars', { ackEveryChars: flowControl.lowWatermarkChars }, /ackEveryChars \+ frameMaxChars/],
    ['frameMaxChars', { frameMaxChars: flowControl.lowWatermarkChars }, /ackEveryChars \+ frameMaxChars/],
    ['lowWatermarkChars', { lowWatermarkChars: flowControl.highWatermarkChars }, /below highWatermarkChars/],
    ['highWatermarkChars', { highWatermarkChars: flowControl.maxBufferedChars }, /below maxBufferedChars/],
    ['stalledAfterMs', { stalledAfterMs: flowControl.ackDelayMs * 5 }, /ten times ackDelayMs/],
    ['ackDelayMs', { ackDelayMs: 0 }, /ackDelayMs must be a positive integer/],
  ])('refuses a %s that breaks it', (_name, change, problem) => {
    expect(flowControlViolations({ ...flowControl, ...change }).join('\n')).toMatch(problem);
  });

  it('keeps a viewer that acknowledges by size within the low watermark of the host', () => {
    const frames: Array<{ seq: number; chars: number }> = [];
    const attachment = new Attachment(
      'client',
      'terminal',
      0,
      { frame: (_id, seq, data) => frames.push({ seq, chars: data.length }), closed: () => {}, writable: () => {} },
      0,
    );
    const batcher = new AckBatcher((seq) => attachment.ack(seq, 1));
    let worst = 0;
    let x = 7;
    for (let i = 0; i < 2000; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      attachment.send('x'.repeat(1 + (x % flowControl.frameMaxChars)));
      worst = Math.max(worst, attachment.behindChars);
      const frame = frames.shift()!;
      batcher.applied(frame.seq, frame.chars);
    }
    batcher.cancel();
    expect(worst).toBeGreaterThan(flowControl.ackEveryChars);
    expect(worst).toBeLessThanOrEqual(flowControl.lowWatermarkChars);
  });
});

describe('IPC channels', () => {
  it('give every operation its own channel, none of them the event channel', () => {
    const channels = opNames.map(ipcOpChannel);
    expect(new Set(channels).size).toBe(opNames.length);
    expect(channels).not.toContain(ipcEventChannel);
  });
});
