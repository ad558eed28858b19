/**
 * The count of unacknowledged output (src/main/host/attachment.ts `UnackedFrames`): exact per
 * frame for the host's own viewers; merged into buckets for a remote's views, so a remote that
 * sends a million one-character frames keeps a short list, at the price of releasing a bucket
 * only once an acknowledgement covers its last frame.
 */
import { describe, expect, it } from 'vitest';
import { UnackedFrames } from '../../src/main/host/attachment.js';

describe('UnackedFrames', () => {
  it('releases exactly the frames an acknowledgement covers when nothing merges', () => {
    const unacked = new UnackedFrames();
    for (let seq = 1; seq <= 5; seq++) unacked.sent(seq, 10 * seq);
    expect(unacked.chars).toBe(150);
    expect(unacked.ack(2)).toBe(true);
    expect(unacked.chars).toBe(120);
    expect(unacked.ack(2)).toBe(false);
    expect(unacked.ack(9)).toBe(true);
    expect(unacked.chars).toBe(0);
  });

  it('merges small frames into buckets of the given size, each released once its last frame is acknowledged', () => {
    const unacked = new UnackedFrames(64);
    for (let seq = 1; seq <= 1000; seq++) unacked.sent(seq, 1);
    expect(unacked.chars).toBe(1000);
    // Frames 1..64 are the first bucket; 65..128 the second: an acknowledgement of 100 releases the first only.
    unacked.ack(100);
    expect(unacked.chars).toBe(1000 - 64);
    unacked.ack(128);
    expect(unacked.chars).toBe(1000 - 128);
    unacked.ack(1000);
    expect(unacked.chars).toBe(0);
  });
});
