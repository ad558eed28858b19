import type { EventName, EventPayload } from '../../shared/contract.js';

type Deliver = <K extends EventName>(event: K, payload: EventPayload<K>) => void;

/**
 * Keeps a client's attachment events behind the reply of the `attach` call that created the
 * attachment. The host may emit the first output frame (what the snapshot did not cover)
 * while `attach` is still running; without this gate that frame could reach the client
 * before the client knows the attachment exists. Both transports use it.
 *
 * While any `attach` call of this client is in flight, `output`, `writable` and
 * `attachmentClosed` events are queued in order; other events (roster, agents) pass through.
 * The queue is flushed once the last in-flight `attach` has had its reply sent.
 */
const attachmentEvents: ReadonlySet<EventName> = new Set<EventName>(['output', 'writable', 'attachmentClosed']);

export class EventGate {
  private holds = 0;
  private queue: Array<() => void> = [];

  constructor(private readonly deliver: Deliver) {}

  send<K extends EventName>(event: K, payload: EventPayload<K>): void {
    this.run(event, () => this.deliver(event, payload));
  }

  /** Runs a transport's own delivery of `event` now, or in order behind the held attachment events. */
  run(event: EventName, deliver: () => void): void {
    if (this.holds > 0 && attachmentEvents.has(event)) {
      this.queue.push(deliver);
      return;
    }
    deliver();
  }

  /** Holds attachment events until the returned release runs (call it after sending the reply). */
  hold(): () => void {
    this.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      if (this.holds > 0) return;
      const queued = this.queue;
      this.queue = [];
      for (const deliver of queued) deliver();
    };
  }

  /** Drops queued events (the client went away). */
  clear(): void {
    this.queue = [];
  }
}
