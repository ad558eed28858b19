/** Defaults from the agent API contract; every one is configurable by the host. */
export const DEFAULT_LIMITS = {
  maxTerminals: 32,
  maxRunningAgentTerminalsPerAgent: 4,
  maxRunningAgentTerminals: 8,
  maxCols: 500,
  maxRows: 200,
  scrollbackLines: 10_000,
  maxInputBytes: 64 * 1024,
  maxQueuedOperations: 128,
  defaultOutputBytes: 16 * 1024,
  maxOutputBytes: 256 * 1024,
  defaultWaitMs: 20_000,
  maxWaitMs: 55_000,
  unattendedGraceMs: 2 * 60 * 60 * 1000,
  /**
   * How long a new shell may take to show a verified prompt (a person's: to print anything).
   * pwsh needs about 2 s of CPU to start; on a loaded laptop (a build on every core) that is ten
   * times as long, and an agent's open that fails there helps nobody. A shell that never
   * integrates still fails, after this bound.
   */
  startupTimeoutMs: 30_000,
} as const;

export type Limits = { -readonly [K in keyof typeof DEFAULT_LIMITS]: number };
