/**
 * A PTY child's pid, read when it is known. node-pty 1.2.0-beta.11 and later report pid 0 on
 * Windows until ConPTY connects (it sets the pid just before the first output), so a pid copied
 * at spawn stayed 0: every close then tore down the tree of pid 0 (System).
 */

/** When a PTY's child was created, bracketed by this host's wall clock (ms since the epoch). */
export interface CreatedWindow {
  /** Taken just before the spawn call: the child cannot be older. */
  notBeforeMs: number;
  /** Taken when its pid was first read as non-zero: the child existed by then. */
  notAfterMs: number;
}

export class ChildPid {
  private known = 0;
  private window: CreatedWindow | null = null;

  /** `read` is node-pty's `pid` (0 while unknown); `spawnedAtMs` was taken before the spawn call. */
  constructor(
    private readonly read: () => number,
    private readonly spawnedAtMs: number,
    private readonly wallClock: () => number = Date.now,
  ) {}

  /** The pid, or 0 while node-pty does not know it yet. */
  get pid(): number {
    this.refresh();
    return this.known;
  }

  /** When the child was created; null while its pid is unknown. */
  get created(): CreatedWindow | null {
    this.refresh();
    return this.window;
  }

  /** Reads node-pty's pid again until it is non-zero; call it at every output and at exit. */
  refresh(): void {
    if (this.known > 0) return;
    const pid = this.read();
    if (pid > 0) {
      this.known = pid;
      this.window = { notBeforeMs: this.spawnedAtMs, notAfterMs: this.wallClock() };
    }
  }
}
