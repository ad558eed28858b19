/** What a terminal session is asked and answers, beside the session itself. */
import type { Palette } from '../../../shared/palette.js';
import type { Origin, TerminalStatus } from '../../../shared/types.js';
import type { PtyPlatform } from '../../pty/platform.js';
import type { spawnPty } from '../../pty/pump.js';
import type { SandboxRequest } from '../../sandbox/launch.js';
import type { StartupFiles } from '../../shells/dialect.js';
import type { ResolvedShell } from '../../shells/resolve.js';
import type { Clock } from '../../clock.js';

export interface SessionOptions {
  shell: ResolvedShell;
  cwd: string;
  /** The workspace's real path as decided at open (an agent's); the cwd's real path now when absent. */
  workspace?: string;
  origin: Origin;
  id?: string;
  cols?: number;
  rows?: number;
  /** Variables the caller asks for, applied last. */
  env?: Record<string, string>;
  baseEnv?: NodeJS.ProcessEnv;
  /** Names an agent terminal inherits beyond the fixed set (the person's `agentEnvAllow`). */
  agentEnvAllow?: readonly string[];
  startupFiles?: StartupFiles;
  /** An agent terminal's verified prompt, and a person's integration report after the first output. */
  startupTimeoutMs?: number;
  /** A person's terminal: how long its shell may take to print anything (default: `startupTimeoutMs`). */
  firstOutputTimeoutMs?: number;
  instancePath?: string | null;
  scrollback?: number;
  /** The person's palette, for colour queries (OSC 4, 10, 11, 12); unanswered without it. */
  palette?: () => Palette;
  historyChars?: number;
  maxInputBytes?: number;
  /** How long a send or wait that names no wait of its own waits (default: the contract's 20 s). */
  defaultWaitMs?: number;
  /** The /proc syscall tier of waiting detection (Linux); on by default. */
  procTier?: boolean;
  clock?: Clock;
  signal?: AbortSignal;
  /** Confines the shell (agent terminals); the open fails `sandbox_unavailable` rather than run unconfined. */
  sandbox?: SandboxRequest;
  /** Starts the PTY: node-pty (`spawnPty`) unless a test gives its own. */
  spawn?: typeof spawnPty;
  /** The POSIX or Windows behaviours: this process's own unless a test gives the other. */
  platform?: PtyPlatform;
}

export interface SendRequest {
  text?: string;
  keys?: string[];
  submit?: boolean;
  input?: boolean;
  /** At the shell's own line editor: erase what the line holds first, so the shell runs exactly the text (issue 23). */
  clearLine?: boolean;
  waitMs?: number;
  maxOutputBytes?: number;
  /** Cancels: the observation is dropped and the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Settles the observation now with `human_handoff` (the person took control). */
  handoff?: AbortSignal;
}

export interface WaitRequest {
  since?: string;
  waitMs?: number;
  maxOutputBytes?: number;
  signal?: AbortSignal;
  handoff?: AbortSignal;
}

/** terminal_read's request: a line window (`offset`/`count` back from the newest) or the output since a cursor. */
export interface ReadRequest {
  since?: string;
  offset?: number;
  count?: number;
  maxBytes?: number;
}

export interface TerminalRead {
  text: string;
  lineBegin: number;
  lineEnd: number;
  totalLines: number;
  cursor: string;
  screen: { row: number; col: number; altScreen: boolean };
  status: TerminalStatus;
}

export interface CloseResult {
  closed: boolean;
  orphans: Array<{ pid: number; comm: string }>;
}

export function clampInt(value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  return Math.min(max, Math.max(min, Math.floor(value)));
}
