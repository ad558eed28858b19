/**
 * Waiting detection while calls are in flight: a look at the foreground job for each observer,
 * soon after a command starts and then less often (10 ms growing to 100 ms), never two at once.
 */
import type { Clock } from './clock.js';
import type { Observer } from './observer.js';

const probeFirstIntervalMs = 10;
const probeMaxIntervalMs = 100;

export interface ProbeLoopHost {
  readonly clock: Clock;
  readonly observers: Set<Observer>;
  /** A command has begun: only then can a program wait for the terminal. */
  begun(): boolean;
  /** One look for one observer; its evidence goes to the readiness engine. */
  look(observer: Observer): Promise<void>;
}

export class ProbeLoop {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private intervalMs = probeFirstIntervalMs;
  private probing = false;

  constructor(private readonly host: ProbeLoopHost) {}

  /** Starts over at the shortest interval (a command started, a write went out). */
  kick(): void {
    this.intervalMs = probeFirstIntervalMs;
    this.stop();
    this.schedule();
  }

  /** A first look saw waiting: confirm it soon. */
  sooner(): void {
    this.intervalMs = probeFirstIntervalMs;
  }

  stop(): void {
    if (this.timer) this.host.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer || this.host.observers.size === 0 || !this.host.begun()) return;
    this.timer = this.host.clock.setTimeout(() => {
      this.timer = null;
      void this.run();
    }, this.intervalMs);
  }

  private async run(): Promise<void> {
    if (this.probing || !this.host.begun()) return;
    this.probing = true;
    try {
      for (const observer of [...this.host.observers]) await this.host.look(observer);
    } finally {
      this.probing = false;
    }
    this.intervalMs = Math.min(probeMaxIntervalMs, Math.ceil(this.intervalMs * 1.5));
    this.schedule();
  }
}
