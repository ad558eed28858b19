import { randomBytes } from 'node:crypto';
import { TandemError } from '../../../shared/errors.js';

/**
 * Questions put to the person (pairing consent, command approval, handoff), each answered once
 * from the UI. Bounded: a flood of requests cannot grow memory without limit.
 */
export class PendingRequests<Info, Decision> {
  private readonly pending = new Map<string, { info: Info; resolve: (decision: Decision) => void; promise: Promise<Decision> }>();
  private readonly listeners = new Set<(change: { id: string; info: Info | null }) => void>();

  constructor(
    private readonly what: string,
    private readonly max = 64,
  ) {}

  open(info: Info): { id: string; decision: Promise<Decision> } {
    if (this.pending.size >= this.max) throw new TandemError('capacity', `Too many ${this.what} requests are waiting for the person; try again later.`);
    const id = randomBytes(9).toString('base64url');
    let resolve!: (decision: Decision) => void;
    const promise = new Promise<Decision>((r) => (resolve = r));
    this.pending.set(id, { info, resolve, promise });
    this.emit(id, info);
    return { id, decision: promise };
  }

  answer(id: string, decision: Decision): Info {
    const entry = this.pending.get(id);
    if (!entry) throw new TandemError('not_found', `No pending ${this.what} request "${id}"; it was answered or withdrawn.`);
    this.pending.delete(id);
    entry.resolve(decision);
    this.emit(id, null);
    return entry.info;
  }

  /** The requester gave up (or went away): the question disappears from the UI. */
  withdraw(id: string): void {
    if (this.pending.delete(id)) this.emit(id, null);
  }

  get(id: string): { info: Info; decision: Promise<Decision> } | null {
    const entry = this.pending.get(id);
    return entry ? { info: entry.info, decision: entry.promise } : null;
  }

  list(): Array<{ id: string } & Info> {
    return [...this.pending.entries()].map(([id, entry]) => ({ id, ...entry.info }));
  }

  onChange(listener: (change: { id: string; info: Info | null }) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(id: string, info: Info | null): void {
    for (const listener of this.listeners) listener({ id, info });
  }
}
