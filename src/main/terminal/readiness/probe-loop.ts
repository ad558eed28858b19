/**
 * Waiting detection while calls are in flight: a look at the foreground job for each observer,
 * never two rounds at once, timed by ProbeCadence (probe-cadence.ts). A round that saw evidence
 * once is confirmed by a later look only after the PTY delivered what it held (`sync`).
 */
import type { Clock } from '../../clock.js';
import type { Observer } from './observer.js';
import { ProbeCadence } from './probe-cadence.js';

export interface ProbeLoopHost {
  readonly clock: Clock;
  readonly observers: Set<Observer>;
  /** A command has begun: only then can a program wait for the terminal. */
  begun(): boolean;
  /** One look for one observer (its evidence goes to the readiness engine); resolves with when a reader seen too early passes its quiet period. */
  look(observer: Observer): Promise<number | null>;
  /** Resolves once the PTY's pending output has been delivered. */
  sync(): Promise<void>;
}

export class ProbeLoop {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly cadence = new ProbeCadence();
  private probing = false;
  private confirming = false;

  constructor(private readonly host: ProbeLoopHost) {}

  /** Starts over at the shortest interval (a command started, a write went out). */
  kick(): void {
    this.cadence.reset();
    this.stop();
    this.schedule(this.cadence.nextMs);
  }

  /** A first look saw waiting: confirm it soon. */
  sooner(): void {
    this.confirming = true;
  }

  stop(): void {
    if (this.timer) this.host.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.host.observers.size === 0 || !this.host.begun()) return;
    this.timer = this.host.clock.setTimeout(() => {
      this.timer = null;
      void this.run();
    }, delayMs);
  }

  private async run(): Promise<void> {
    if (this.probing || !this.host.begun()) return;
    this.probing = true;
    this.confirming = false;
    let quietDueMs: number | null = null;
    try {
      for (const observer of [...this.host.observers]) {
        const due = await this.host.look(observer);
        if (due !== null) quietDueMs = Math.min(quietDueMs ?? due, due);
      }
    } finally {
      this.probing = false;
    }
    const round = { confirming: this.confirming, quietDueMs };
    const delayMs = this.cadence.after(round);
    // A confirming look only after the PTY's pending output arrived: it would void the candidate.
    if (round.confirming) void this.host.sync().then(() => this.schedule(delayMs));
    else this.schedule(delayMs);
  }
}
