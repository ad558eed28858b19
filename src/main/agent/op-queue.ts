import { TandemError } from '../../shared/errors.js';

/** One operation's turn at a terminal: release it when the write has settled. */
export interface Turn {
  release(): void;
}

interface Waiting {
  owner: string;
  grant: (turn: Turn) => void;
  fail: (error: unknown) => void;
}

/**
 * A terminal's FIFO of writes: agent sends and resets. Reads and waits bypass it. An operation
 * that has not started when its caller gives up is removed and never runs.
 */
export class OpQueue {
  private running: string | null = null;
  private readonly waiting: Waiting[] = [];

  constructor(private readonly max: number) {}

  get size(): number {
    return this.waiting.length + (this.running ? 1 : 0);
  }

  /** Whether this owner has a write queued or running here. */
  holds(owner: string): boolean {
    return this.running === owner || this.waiting.some((entry) => entry.owner === owner);
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
        fail: reject,
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

  private next(): void {
    if (this.running !== null) return;
    const entry = this.waiting.shift();
    if (!entry) return;
    this.running = entry.owner;
    let released = false;
    entry.grant({
      release: () => {
        if (released) return;
        released = true;
        this.running = null;
        this.next();
      },
    });
  }
}
