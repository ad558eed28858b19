/**
 * Viewers that attach while a real bash streams output: each one must get every character
 * after its snapshot exactly once. The snapshot's cursor row and the first frame join into the
 * next number, and the frames count on without a gap or a repeat (frames are batched reads,
 * encoded without being joined).
 */
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { outputString } from '../../src/main/host/attachment.js';
import { suiteHost } from './helpers.js';
import { until } from '../support/until.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

/** A snapshot as a viewer shows it: the last whole number on screen, and the cursor row's text before the cursor. */
async function screenOf(snapshot: string): Promise<{ last: number | null; cursorText: string }> {
  const t = new Terminal({ cols: 80, rows: 24, scrollback: 0, allowProposedApi: true });
  await new Promise<void>((resolve) => t.write(snapshot, resolve));
  const buffer = t.buffer.active;
  let last: number | null = null;
  for (let y = 0; y < buffer.cursorY; y++) {
    const text = buffer.getLine(buffer.viewportY + y)!.translateToString(true);
    if (/^\d{7}$/.test(text)) last = Number(text);
  }
  const cursorText = buffer
    .getLine(buffer.viewportY + buffer.cursorY)!
    .translateToString(true)
    .slice(0, buffer.cursorX);
  t.dispose();
  return { last, cursorText };
}

/** The numbers of the whole `seq -w` lines in `text`, from its first line break to its last. */
function numbers(text: string): number[] {
  // bash ends bracketed paste (`ESC [?2004l`, then CR) before the first line of output.
  const lines = text
    .split('\r\n')
    .slice(1, -1)
    .map((line) => line.slice(line.lastIndexOf('\r') + 1));
  return lines.filter((line) => /^\d{7}$/.test(line)).map(Number);
}

describe('viewers attaching while output streams', () => {
  const suite = suiteHost('tandem-viewers-');

  it('each gets the stream after its snapshot once: no gap, no repeat', async () => {
    const host = suite.host;
    const { id } = await host.create({ shell: '/bin/bash', cols: 80, rows: 24 });
    await until(() => host.get(id).session.status === 'idle', 'the prompt');
    const viewers: string[][] = [];
    const snapshots: string[] = [];
    const end = 'STREAM-END\r\n';
    /** Per viewer: whether its frames showed the end yet (each frame scanned once, with the seam before it). */
    const ended: boolean[] = [];
    const attach = async () => {
      const frames: string[] = [];
      const index = viewers.push(frames) - 1;
      ended.push(false);
      let tail = '';
      const client = `viewer-${viewers.length}`;
      // Each frame is acknowledged as a viewer does, so flow control never holds the stream.
      const frame = (attachmentId: string, seq: number, data: Parameters<typeof outputString>[0]) => {
        const text = outputString(data);
        frames.push(text);
        if (!ended[index] && ((tail + text.slice(0, end.length - 1)).includes(end) || text.includes(end))) ended[index] = true;
        tail = (tail + text.slice(-(end.length - 1))).slice(-(end.length - 1));
        queueMicrotask(() => host.ack(attachmentId, seq, client));
      };
      snapshots.push((await host.attach(id, client, { frame, closed: () => undefined, writable: () => undefined })).snapshot);
    };
    await attach();
    // The quotes keep the echoed command line from showing the end marker.
    await host.get(id).session.write('seq -w 1000000 1400000; echo STREAM-E""ND\r');
    // Viewers come while the numbers stream, each at another moment of the batching.
    for (let i = 0; i < 24; i++) {
      await new Promise((resolve) => setTimeout(resolve, 3 + (i % 5) * 7));
      await attach();
    }
    // A viewer that attached after the stream's end has it in its snapshot and nothing to follow.
    const late = snapshots.map((snapshot) => snapshot.includes('STREAM-END'));
    // A wait, not a speed target. The check reads flags: joining 25 viewers' 2.8 MB every 20 ms
    // to search them took most of the CPU the stream needed.
    await until(() => ended.every((seen, index) => seen || late[index]), 'every viewer to see the end', 45_000);
    for (const [index, frames] of viewers.entries()) {
      if (late[index]) continue;
      const seen = numbers(frames.join(''));
      expect(seen.length, `viewer ${index}`).toBeGreaterThan(0);
      // Consecutive whole lines: a repeated or missing piece would break the count.
      const breaks = seen.flatMap((value, at) => (at > 0 && value !== seen[at - 1]! + 1 ? [`${seen[at - 1]} → ${value}`] : []));
      expect(breaks, `viewer ${index}`).toEqual([]);
      expect(seen.at(-1)).toBe(1_400_000);
    }
    // Where the snapshot ends, the frames go on: the cursor row's text and the first frame
    // make the next number, not one the snapshot already showed.
    let joined = 0;
    for (const [index, frames] of viewers.entries()) {
      if (late[index]) continue;
      const { last, cursorText } = await screenOf(snapshots[index]!);
      if (last === null) continue;
      const first = `${cursorText}${frames.join('')}`.split('\r\n')[0]!;
      expect(first.slice(first.lastIndexOf('\r') + 1), `viewer ${index} after ${last}`).toBe(String(last + 1));
      joined += 1;
    }
    expect(joined).toBeGreaterThan(5);
    // The first viewer saw it all, and the later ones attached mid-stream.
    expect(numbers(viewers[0]!.join('')).length).toBe(400_001);
    expect(viewers.filter((frames) => numbers(frames.join(''))[0]! > 1_000_000).length).toBeGreaterThan(5);
  }, 180_000);
});
