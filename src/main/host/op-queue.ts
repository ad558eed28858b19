import { TandemError } from '../../shared/errors.js';

/** One agent operation's turn at a terminal: release it when the write has settled. */
export interface Turn {
  /** Aborted when the person takes the lease while this operation runs: it settles `human_handoff`. */
  readonly preempted: AbortSignal;
  release(): void;
}

interface Waiting {
  owner: string;
  grant: (turn: Turn) => void;
  fail: (error: unknown) => void;
}

/**
 * A terminal's FIFO of writes: agent sends, the person's input lease and resets. Reads and
 * waits bypass it. The person never waits: a lease or a reset is granted at once. A lease
 * preempts the running agent operation, and agent operations that reach the head while it is
 * held fail `user_control`; during a reset they wait. An operation that has not started when
 * its caller gives up is removed and never runs.
 */
export class OpQueue {
  private running: { owner: string; preempt: AbortController } | null = null;
  private readonly waiting: Waiting[] = [];
  private leased = false;
  private resets = 0;

  /** `max` bounds queued plus running agent operations (the contract's 128 by default). */
  constructor(private readonly max: number) {}

  get size(): number {
    return this.waiting.length + (this.running ? 1 : 0);
  }

  /** Whether the person holds the input lease. */
  get leaseHeld(): boolean {
    return this.leased;
  }

  /** Whether this owner has a write queued or running here. */
  holds(owner: string): boolean {
    return this.running?.owner === owner || this.waiting.some((entry) => entry.owner === owner);
  }

  enqueue(owner: string, signal?: AbortSignal): Promise<Turn> {
    if (this.size >= this.max) {
      return Promise.reject(new TandemError('queue_full', `This terminal already has ${this.max} queued operations; wait for them to finish.`));
    }
    return new Promise<Turn>((resolve, reject) => {
      const entry: Waiting = {
        owner,
        grant: (turn) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(turn);
        },
        fail: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(entry);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal?.reason ?? new Error('aborted'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
      this.next();
    });
  }

  /** The person takes the input lease: granted at once, the running agent operation is preempted. */
  grantLease(): void {
    if (this.leased) return;
    this.leased = true;
    this.running?.preempt.abort();
    this.next();
  }

  releaseLease(): void {
    if (!this.leased) return;
    this.leased = false;
    this.next();
  }

  /** The person's input: written at once under their lease, never queued; without the lease it is refused. */
  underLease<T>(write: () => T): T {
    if (!this.leased) throw new TandemError('forbidden', 'The agent drives this terminal; take control to type into it.');
    return write();
  }

  /** A person's operation (a reset): starts at once; agent operations wait until it ends. */
  async person<T>(run: () => Promise<T>): Promise<T> {
    this.resets += 1;
    try {
      return await run();
    } finally {
      this.resets -= 1;
      this.next();
    }
  }

  private next(): void {
    if (this.running !== null || this.resets > 0) return;
    // Under the person's lease, agent operations fail as they reach the head: none writes.
    while (this.leased && this.waiting.length > 0) {
      this.waiting.shift()!.fail(new TandemError('user_control', 'The person took control of this terminal; wait for them to hand it back (terminal_wait).'));
    }
    const entry = this.waiting.shift();
    if (!entry) return;
    entry.grant(this.start(entry.owner));
  }

  /**
   * The turn at once when nothing runs, waits, holds or resets the terminal (an agent's usual
   * send); null otherwise, and the caller queues. No signal is listened to, no promise made.
   */
  takeNow(owner: string): Turn | null {
    if (this.running !== null || this.resets > 0 || this.leased || this.waiting.length > 0 || this.size >= this.max) return null;
    return this.start(owner);
  }

  private start(owner: string): Turn {
    const running = { owner, preempt: new AbortController() };
    this.running = running;
    let released = false;
    return {
      preempted: running.preempt.signal,
      release: () => {
        if (released) return;
        released = true;
        this.running = null;
        this.next();
      },
    };
  }
}
