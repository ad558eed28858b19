import { describe, expect, it } from 'vitest';
import { OpQueue } from '../../src/main/host/op-queue.js';

describe('OpQueue', () => {
  it('runs writes one at a time in FIFO order', async () => {
    const queue = new OpQueue(8);
    const order: string[] = [];
    const first = await queue.enqueue('a');
    const second = queue.enqueue('b').then((turn) => (order.push('b'), turn));
    const third = queue.enqueue('c').then((turn) => (order.push('c'), turn));
    expect(queue.holds('b')).toBe(true);
    order.push('a');
    first.release();
    (await second).release();
    (await third).release();
    expect(order).toEqual(['a', 'b', 'c']);
    expect(queue.size).toBe(0);
  });

  it('refuses past its bound with queue_full', async () => {
    const queue = new OpQueue(2);
    await queue.enqueue('a');
    void queue.enqueue('b');
    await expect(queue.enqueue('c')).rejects.toMatchObject({ code: 'queue_full' });
  });

  it('removes an operation whose caller gives up before it starts: it never runs', async () => {
    const queue = new OpQueue(8);
    const first = await queue.enqueue('a');
    const controller = new AbortController();
    const waiting = queue.enqueue('b', controller.signal);
    controller.abort(new Error('bound passed'));
    await expect(waiting).rejects.toThrow('bound passed');
    expect(queue.holds('b')).toBe(false);
    first.release();
    const next = await queue.enqueue('c');
    expect(queue.holds('c')).toBe(true);
    next.release();
  });
});
