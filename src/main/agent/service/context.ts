import type { ApprovalInfo, SendResult } from '../../../shared/types.js';
import type { AgentHost } from '../../host/host.js';
import type { TerminalPort } from '../../host/terminal-port.js';
import type { Clock } from '../../clock.js';
import type { PolicySettings } from '../judge/policy.js';
import type { QuestionOwners } from '../pairing/question-owners.js';
import type { RanLog } from './ran-log.js';
import type { PendingRequests } from '../pairing/requests.js';
import type { ApprovalDecision, ApprovalRequestInfo, AgentConnection, HandoffDecision, HandoffRequestInfo } from '../types.js';
import type { TokenStore } from '../pairing/tokens.js';

/** What the agent layer keeps per terminal beyond the host's control machine and queue. */
export interface AgentTerminalState {
  /** Agents whose write on this terminal waits for the person's approval. */
  awaiting: Set<string>;
  /** A write approved after its send returned: the waits that follow report it until it settles. */
  approved: { command: string; approval: ApprovalInfo } | null;
}

/** The agent service's parts the tool handlers (send, wait, handoff, open) share. */
export interface AgentContext {
  readonly host: AgentHost;
  readonly clock: Clock;
  readonly tokens: TokenStore;
  readonly approvals: PendingRequests<ApprovalRequestInfo, ApprovalDecision>;
  readonly handoffs: PendingRequests<HandoffRequestInfo, HandoffDecision>;
  readonly questions: QuestionOwners<ApprovalRequestInfo, ApprovalDecision, HandoffRequestInfo, HandoffDecision>;
  readonly ran: RanLog;
  readonly home: string;
  readonly tandemDirs: string[];
  state(terminal: TerminalPort): AgentTerminalState;
  terminalFor(connection: AgentConnection, id: string, need: 'read' | 'write'): TerminalPort;
  visible(connection: AgentConnection, terminal: TerminalPort): 'own' | 'handed' | 'shared' | null;
  settingsOf(connection: AgentConnection): PolicySettings;
  isConnected(tokenHash: string): boolean;
}

export function emptyResult(cursor: string, control: 'agent' | 'user'): SendResult {
  return {
    status: 'running',
    evidence: 'bound',
    command: null,
    exitCode: null,
    cwd: null,
    output: '',
    truncated: null,
    cursor,
    control,
    handoff: null,
    approval: null,
    closedBy: null,
    durationMs: 0,
  };
}

/** The host's result with what only the agent layer knows: control, the handoff, the approval, the call's duration. */
export function decorate(ctx: AgentContext, terminal: TerminalPort, result: SendResult, approval: ApprovalInfo | null, startedAt: number): SendResult {
  // A takeover the agent did not ask for reads as an accepted handoff without a summary yet.
  const handoff = result.status === 'human_handoff' ? { state: terminal.handoff?.state ?? 'accepted', summary: '', note: null } : null;
  return { ...result, control: terminal.controller, handoff, approval, durationMs: Math.round(ctx.clock.now() - startedAt) };
}
