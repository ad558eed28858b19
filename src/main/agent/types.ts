/**
 * The agent layer's own shared types: a connection, the person's questions and their answers.
 * Kept apart from service.ts so the files that implement the tools need not import the service.
 */
import type { AgentIdentity } from './pairing/tokens.js';

/** One live MCP connection (a bridge process or an HTTP session) of an agent. */
export interface AgentConnection {
  readonly id: string;
  readonly identity: AgentIdentity;
  /** The agent's project directory: the default cwd of terminal_open. */
  readonly cwd: string | null;
  /** The Tandem terminal the agent itself runs in: never written by it. */
  readonly ownTerminalId: string | null;
}

export interface ApprovalRequestInfo {
  /** `command`: a line to type; `open`: a terminal_open whose `env` needs the person's yes. */
  kind: 'command' | 'open';
  agent: string;
  /** Empty for an open: the terminal does not exist yet. */
  terminalId: string;
  title: string;
  command: string;
  /** For an open: the variables (`NAME=value`) that are not on the harmless list. */
  env: string[];
  /** Why the allow list did not let it run, for the person's eyes. */
  why: string | null;
}

export type ApprovalDecision = { state: 'approved' } | { state: 'edited'; command: string } | { state: 'rejected'; reason: string };

/** The person's answer to a handoff request, with their words for a decline. */
export type HandoffDecision = { accept: true } | { accept: false; note: string | null };

export interface HandoffRequestInfo {
  agent: string;
  terminalId: string;
  title: string;
  message: string;
}
