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

describe('OpQueue: the person never waits', () => {
  it('a lease is granted at once: it preempts the running operation, queued ones fail user_control at the head', async () => {
    const queue = new OpQueue(8);
    const running = await queue.enqueue('a');
    const queued = queue.enqueue('b');
    const later = queue.enqueue('c');
    queue.grantLease();
    expect(queue.leaseHeld).toBe(true);
    expect(running.preempted.aborted).toBe(true);
    // Still queued behind the running one until it settles.
    expect(queue.holds('b')).toBe(true);
    running.release();
    await expect(queued).rejects.toMatchObject({ code: 'user_control' });
    await expect(later).rejects.toMatchObject({ code: 'user_control' });
    await expect(queue.enqueue('d')).rejects.toMatchObject({ code: 'user_control' });
    expect(queue.size).toBe(0);
    expect(queue.underLease(() => 'written')).toBe('written');
    queue.releaseLease();
    expect(() => queue.underLease(() => 'written')).toThrow(expect.objectContaining({ code: 'forbidden' }));
    const after = await queue.enqueue('e');
    expect(after.preempted.aborted).toBe(false);
    after.release();
  });

  it("a person's operation (a reset) starts at once; agent operations wait for it and then run", async () => {
    const queue = new OpQueue(8);
    const running = await queue.enqueue('a');
    let finishReset!: () => void;
    const order: string[] = [];
    const reset = queue.person(async () => {
      order.push('reset started');
      await new Promise<void>((resolve) => (finishReset = resolve));
      order.push('reset done');
    });
    const queued = queue.enqueue('b').then((turn) => (order.push('b'), turn));
    running.release();
    await Promise.resolve();
    expect(order).toEqual(['reset started']);
    finishReset();
    await reset;
    (await queued).release();
    expect(order).toEqual(['reset started', 'reset done', 'b']);
    expect(running.preempted.aborted).toBe(false);
  });

  it('grants a turn at once only when nothing runs, waits, resets or holds the lease', async () => {
    const queue = new OpQueue(8);
    const now = queue.takeNow('a');
    expect(now).not.toBeNull();
    expect(queue.takeNow('b')).toBeNull(); // one runs
    const queued = queue.enqueue('b');
    now!.release();
    const second = await queued;
    expect(queue.holds('b')).toBe(true);
    const third = queue.enqueue('c');
    second.release();
    expect(queue.takeNow('d')).toBeNull(); // c was waiting first and runs now
    (await third).release();
    queue.grantLease();
    expect(queue.takeNow('e')).toBeNull(); // the person's lease: agent writes go through the queue and fail there
    await expect(queue.enqueue('e')).rejects.toMatchObject({ code: 'user_control' });
    queue.releaseLease();
    let resetting: () => void = () => undefined;
    const reset = queue.person(() => new Promise<void>((resolve) => (resetting = resolve)));
    expect(queue.takeNow('f')).toBeNull(); // a reset in progress
    resetting();
    await reset;
    const free = queue.takeNow('g');
    expect(free).not.toBeNull();
    free!.release();
    expect(queue.size).toBe(0);
  });
});
