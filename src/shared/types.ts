/** Result and state types of the agent API contract. Field names are public interface. */

export type SendStatus = 'done' | 'waiting_input' | 'running' | 'human_handoff' | 'awaiting_approval' | 'exited';

export type Evidence = 'marker' | 'read' | 'poll' | 'echo_off' | 'continuation' | 'exit' | 'handoff' | 'bound';

export type Controller = 'agent' | 'user';
export type Origin = 'agent' | 'user';

/** What a terminal is doing now, as the engine knows it. */
export type TerminalStatus = 'starting' | 'idle' | 'running' | 'waiting_input' | 'exited';

export interface Truncation {
  omittedLines: number;
  omittedBytes: number;
}

export interface HandoffInfo {
  state: 'pending' | 'accepted' | 'declined' | 'returned';
  summary: string;
  /** The person's own words on hand-back or decline, or null. */
  note: string | null;
}

export interface ApprovalInfo {
  state: 'pending' | 'approved' | 'edited' | 'rejected';
  reason: string | null;
}

/** The last command that ended at a prompt, from its end marker. */
export interface LastCommand {
  command: string | null;
  exitCode: number | null;
  /** ISO 8601 time the end marker arrived. */
  finishedAt: string;
}

/** Who closed a terminal whose shell `exited`: null when the shell exited by itself. */
export type ClosedBy = 'person' | 'agent' | null;

export interface SendResult {
  status: SendStatus;
  evidence: Evidence;
  command: string | null;
  exitCode: number | null;
  cwd: string | null;
  output: string;
  truncated: Truncation | null;
  cursor: string;
  control: Controller;
  handoff: HandoffInfo | null;
  approval: ApprovalInfo | null;
  closedBy: ClosedBy;
  durationMs: number;
  /** A confined command that failed on a path the sandbox keeps read-only or hides: which, and why (src/main/sandbox/refusal.ts). Absent otherwise. */
  sandbox?: { path: string; access: 'read-only' | 'hidden'; mode: 'workspace-write' | 'read-only'; why: string };
}

export interface TerminalInfo {
  id: string;
  title: string;
  origin: Origin;
  agent: string | null;
  agentConnected: boolean;
  control: Controller;
  shared: boolean;
  shell: string;
  integration: boolean;
  pid: number;
  cwd: string | null;
  cols: number;
  rows: number;
  status: TerminalStatus;
  exitCode: number | null;
  /** The sandbox the shell runs in; null when unconfined. */
  sandbox: { mode: 'workspace-write' | 'read-only'; network: boolean } | null;
  lastCommand: LastCommand | null;
  /** For a person's eyes: the title a program set (OSC 0/2), else the foreground program's name, else null. */
  program: string | null;
}

export const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGQUIT', 'SIGTSTP', 'SIGHUP'] as const;
export type SignalName = (typeof SIGNALS)[number];

export const NAMED_KEYS: Readonly<Record<string, string>> = {
  Enter: '\r',
  Tab: '\t',
  Escape: '\x1b',
  Backspace: '\x7f',
  Up: '\x1b[A',
  Down: '\x1b[B',
  Right: '\x1b[C',
  Left: '\x1b[D',
  Home: '\x1b[H',
  End: '\x1b[F',
  PageUp: '\x1b[5~',
  PageDown: '\x1b[6~',
};
