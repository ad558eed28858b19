import { randomBytes } from 'node:crypto';
import { TandemError } from '../../../shared/errors.js';
import type { SendResult, TerminalInfo } from '../../../shared/types.js';
import type { AgentHost } from '../../host/host.js';
import type { TerminalPort } from '../../host/terminal-port.js';
import { type Clock, systemClock, waitFor } from '../../clock.js';
import type { SandboxMode } from '../../sandbox/types.js';
import type { AgentContext, AgentTerminalState } from './context.js';
import { handoff, wait } from './handback.js';
import { agentInfo, open } from './open.js';
import type { PolicySettings } from '../judge/policy.js';
import { RanLog } from './ran-log.js';
import { QuestionOwners } from '../pairing/question-owners.js';
import { PendingRequests } from '../pairing/requests.js';
import { send, signalTerminal } from './send.js';
import type { AgentIdentity, TokenStore } from '../pairing/tokens.js';
import type { ToolArgs } from '../mcp/tool-defs.js';
import type { AgentConnection, ApprovalDecision, ApprovalRequestInfo, HandoffDecision, HandoffRequestInfo } from '../types.js';
import { defaultStateDirs, knownStateDirs } from '../../state-dir.js';
import { acceptableProject } from './open-workspace.js';

export interface AgentServiceOptions {
  clock?: Clock;
  unattendedGraceMs?: number;
  sweepIntervalMs?: number;
  home?: string;
  /** Tandem's state directory: never read by an allowed command. */
  stateDir?: string;
  /** Where confined terminals keep their caches and what they hide; without it terminals run unconfined. */
  sandbox?: { fallback: SandboxMode; stateDir: string; discoveryDir: string };
}

/** The sweep's clock: its timers never keep the process alive. */
function backgroundClock(clock: Clock): Clock {
  return {
    now: () => clock.now(),
    setTimeout: (fn, ms) => {
      const handle = clock.setTimeout(fn, ms);
      (handle as { unref?: () => void }).unref?.();
      return handle;
    },
    clearTimeout: (handle) => clock.clearTimeout(handle),
  };
}

/**
 * The agent side of the host: who may see and drive which terminal, approvals, the write
 * queue, takeover and hand-back. Transports (MCP over HTTP, the stdio bridge) call `callTool`.
 */
export class AgentService {
  readonly approvals = new PendingRequests<ApprovalRequestInfo, ApprovalDecision>('approval');
  readonly handoffs = new PendingRequests<HandoffRequestInfo, HandoffDecision>('handoff');
  readonly ran = new RanLog();
  private readonly connections = new Map<string, AgentConnection>();
  private readonly owners = new Map<string, string>();
  private readonly states = new Map<string, AgentTerminalState>();
  private readonly goneAt = new Map<string, number>();
  private readonly clock: Clock;
  private readonly graceMs: number;
  private readonly disposed = new AbortController();
  private readonly ctx: AgentContext;
  private readonly home: string;
  private readonly connectionListeners = new Set<() => void>();
  private readonly opening = new Map<string, number>();
  private readonly sandbox: AgentServiceOptions['sandbox'];
  private readonly questions = new QuestionOwners(this.approvals, this.handoffs, (reason): ApprovalDecision => ({ state: 'rejected', reason }));

  constructor(
    private readonly host: AgentHost,
    readonly tokens: TokenStore,
    opts: AgentServiceOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.graceMs = opts.unattendedGraceMs ?? host.limits.unattendedGraceMs;
    this.home = opts.home ?? host.homeDir;
    const runtime = process.env.XDG_RUNTIME_DIR;
    // The running instance's, and where Tandem keeps state by default (another instance's, or an
    // earlier one's, keeps agents' tokens and the person's recordings there: round s40 D).
    const fixed = [opts.stateDir, runtime ? `${runtime}/tandem` : undefined, ...defaultStateDirs(this.home)].filter((dir): dir is string => Boolean(dir));
    const home = this.home;
    this.sandbox = opts.sandbox;
    void this.sweepEvery(opts.sweepIntervalMs ?? 60_000);
    this.ctx = {
      host,
      clock: this.clock,
      tokens,
      approvals: this.approvals,
      handoffs: this.handoffs,
      questions: this.questions,
      ran: this.ran,
      home: this.home,
      // Other instances' state directories (TANDEM_HOME) as they record themselves, read per use.
      get tandemDirs() {
        return [...fixed, ...knownStateDirs(home)];
      },
      state: (terminal) => this.state(terminal),
      terminalFor: (connection, id, need) => this.terminalFor(connection, id, need),
      visible: (connection, terminal) => this.visible(connection, terminal),
      settingsOf: (connection) => this.settingsOf(connection),
      isConnected: (tokenHash) => this.isConnected(tokenHash),
    };
    tokens.onRevoked(({ tokenHash }) => {
      for (const connection of [...this.connections.values()]) if (connection.identity.tokenHash === tokenHash) this.disconnect(connection.id);
      this.questions.withdrawAllOf(tokenHash, 'The agent was revoked.');
      // A person's terminal handed to that token comes back to the person.
      for (const view of host.list()) if (host.port(view.id).handedToKey === tokenHash) host.handToAgent(view.id, null);
    });
    host.setAgentPresence((name) => this.present(name));
    host.setAgentDirectory((name) => this.agentKey(name));
    // Closed terminals leave no agent state behind.
    host.onRemoved((id) => this.forget(id));
  }

  /** The named agent's terminals still in the host plus its opens in progress. */
  terminalCount(name: string): number {
    const hashes = new Set([...this.connections.values()].filter((c) => c.identity.name === name).map((c) => c.identity.tokenHash));
    const opening = [...hashes].reduce((sum, hash) => sum + (this.opening.get(hash) ?? 0), 0);
    return this.host.list().filter((view) => view.origin === 'agent' && view.agent === name).length + opening;
  }

  // ---- connections ---------------------------------------------------------------------------

  connect(identity: AgentIdentity, meta: { cwd?: string | null; ownTerminalId?: string | null } = {}): AgentConnection {
    const project = acceptableProject(meta.cwd ?? null, this.home, this.ctx.tandemDirs);
    if (project) this.tokens.adoptProject(identity, project);
    const connection: AgentConnection = {
      id: randomBytes(9).toString('base64url'),
      identity,
      cwd: meta.cwd ?? null,
      ownTerminalId: meta.ownTerminalId ?? null,
    };
    this.connections.set(connection.id, connection);
    this.goneAt.delete(identity.tokenHash);
    this.refreshConnected();
    return connection;
  }

  /** A session that went quiet is back (its stream reopened or it made a request). */
  reconnect(connection: AgentConnection): void {
    if (this.connections.has(connection.id)) return;
    this.connections.set(connection.id, connection);
    this.goneAt.delete(connection.identity.tokenHash);
    this.refreshConnected();
  }

  disconnect(connectionId: string): void {
    const connection = this.connections.get(connectionId);
    if (!connection) return;
    this.connections.delete(connectionId);
    if (!this.isConnected(connection.identity.tokenHash)) {
      this.goneAt.set(connection.identity.tokenHash, this.clock.now());
      // Its questions belong to a live agent: approving afterwards must run nothing.
      this.questions.withdrawAllOf(connection.identity.tokenHash, 'The agent disconnected.');
    }
    this.refreshConnected();
  }

  /** Which token a display name stands for: a paired agent's, else a connected agent's (allowed once). */
  agentKey(name: string): string | null {
    const paired = this.tokens.pairedKey(name);
    if (paired) return paired;
    for (const connection of this.connections.values()) if (connection.identity.name === name.trim()) return connection.identity.tokenHash;
    return null;
  }

  isLive(connectionId: string): boolean {
    return this.connections.has(connectionId);
  }

  onConnectionsChange(listener: () => void): () => void {
    this.connectionListeners.add(listener);
    return () => this.connectionListeners.delete(listener);
  }

  /** Live connections by agent name, for the UI's agents panel. */
  connectedAgents(): Array<{ name: string; connections: number }> {
    const counts = new Map<string, number>();
    for (const connection of this.connections.values()) counts.set(connection.identity.name, (counts.get(connection.identity.name) ?? 0) + 1);
    return [...counts.entries()].map(([name, connections]) => ({ name, connections }));
  }

  isAgentConnected(tokenHash: string): boolean {
    return this.isConnected(tokenHash);
  }

  private isConnected(tokenHash: string): boolean {
    for (const connection of this.connections.values()) if (connection.identity.tokenHash === tokenHash) return true;
    return false;
  }

  /** Whether an agent of this name has a live session. */
  private present(name: string): boolean {
    return [...this.connections.values()].some((connection) => connection.identity.name === name);
  }

  private refreshConnected(): void {
    for (const { id, handedTo } of this.host.list()) {
      // An agent's own terminal goes with its token; a handed one with the agent's name.
      const owner = this.owners.get(id);
      this.host.setAgentConnected(id, owner !== undefined ? this.isConnected(owner) : handedTo !== null && this.present(handedTo));
    }
    for (const listener of this.connectionListeners) listener();
  }

  /** Sweeps once per interval until disposed. */
  private async sweepEvery(intervalMs: number): Promise<void> {
    const clock = backgroundClock(this.clock);
    while ((await waitFor(clock, { ms: intervalMs, signal: this.disposed.signal })).kind === 'timeout') await this.sweepUnattended();
  }

  /** Closes terminals of agents gone longer than the grace, unless the person holds them or a command runs. */
  async sweepUnattended(): Promise<void> {
    const now = this.clock.now();
    for (const [terminalId, tokenHash] of [...this.owners]) {
      const gone = this.goneAt.get(tokenHash);
      if (gone === undefined || now - gone < this.graceMs || !this.host.has(terminalId)) continue;
      const terminal = this.host.port(terminalId);
      const status = terminal.status;
      if (terminal.controller === 'user' || status === 'running' || status === 'waiting_input') continue;
      await this.host.close(terminalId, null, { cause: 'unattended' }).catch(() => undefined);
      if (!this.host.has(terminalId)) this.forget(terminalId);
    }
    // An agent that owns no terminal has nothing to reclaim: forget when it left.
    const owning = new Set(this.owners.values());
    for (const tokenHash of [...this.goneAt.keys()]) if (!owning.has(tokenHash)) this.goneAt.delete(tokenHash);
  }

  /** Agents remembered as gone (for the bound's test). */
  get goneAgents(): number {
    return this.goneAt.size;
  }

  /** A closed terminal takes its questions to the person with it. */
  private forget(terminalId: string): void {
    this.owners.delete(terminalId);
    this.states.delete(terminalId);
    for (const request of this.approvals.list())
      if (request.terminalId === terminalId) this.approvals.answer(request.id, { state: 'rejected', reason: 'The terminal was closed.' });
    for (const request of this.handoffs.list()) if (request.terminalId === terminalId) this.handoffs.withdraw(request.id);
  }

  // ---- access ----------------------------------------------------------------------------

  private state(terminal: TerminalPort): AgentTerminalState {
    let state = this.states.get(terminal.id);
    if (!state) {
      state = { awaiting: new Set(), approved: null };
      this.states.set(terminal.id, state);
    }
    return state;
  }

  private visible(connection: AgentConnection, terminal: TerminalPort): 'own' | 'handed' | 'shared' | null {
    if (this.owners.get(terminal.id) === connection.identity.tokenHash) return 'own';
    if (terminal.origin === 'user' && terminal.handedToKey === connection.identity.tokenHash) return 'handed';
    if (terminal.origin === 'user' && terminal.shared) return 'shared';
    return null;
  }

  private terminalFor(connection: AgentConnection, id: string, need: 'read' | 'write'): TerminalPort {
    if (connection.ownTerminalId && id === connection.ownTerminalId) {
      throw new TandemError('forbidden', 'This is the terminal you are running in; open another terminal for commands.');
    }
    if (!this.host.has(id)) throw new TandemError('not_found', `No terminal with id "${id}"; call terminal_list to see yours.`);
    const terminal = this.host.port(id);
    const access = this.visible(connection, terminal);
    if (!access) throw new TandemError('forbidden', 'That terminal belongs to someone else; you can use only your own, shared and handed-over terminals.');
    if (need === 'write' && access === 'shared')
      throw new TandemError('forbidden', 'The person shared this terminal for reading only; ask them to hand it to you.');
    return terminal;
  }

  // ---- tools --------------------------------------------------------------------------------

  /** While an agent call waits on a terminal it can see, the UI knows the agent is watching it (`agentListening`). */
  async listening<T>(connection: AgentConnection, id: string, run: () => Promise<T>): Promise<T> {
    const terminal = this.host.has(id) ? this.host.port(id) : null;
    const done = terminal && this.visible(connection, terminal) ? terminal.beginAgentCall() : () => undefined;
    try {
      return await run();
    } finally {
      done();
    }
  }

  list(connection: AgentConnection): { terminals: TerminalInfo[] } {
    const terminals: TerminalInfo[] = [];
    for (const view of this.host.list()) {
      if (view.id === connection.ownTerminalId) continue;
      const terminal = this.host.port(view.id);
      if (this.visible(connection, terminal)) terminals.push(agentInfo(terminal));
    }
    return { terminals };
  }

  open(connection: AgentConnection, args: ToolArgs<'terminal_open'>, signal?: AbortSignal): Promise<TerminalInfo & { banner: string }> {
    return open(this.ctx, { owners: this.owners, opening: this.opening, sandbox: this.sandbox }, connection, args, signal);
  }

  /** The agent's approval policy as it is now; a revoked agent can do nothing more. */
  private settingsOf(connection: AgentConnection): PolicySettings {
    const settings = this.tokens.currentSettings(connection.identity);
    if (!settings) throw new TandemError('forbidden', 'This agent’s token was revoked; pair it again in Tandem.');
    return settings;
  }

  send(connection: AgentConnection, args: ToolArgs<'terminal_send'>, signal?: AbortSignal): Promise<SendResult> {
    return send(this.ctx, connection, args, signal);
  }

  wait(connection: AgentConnection, args: ToolArgs<'terminal_wait'>, signal?: AbortSignal): Promise<SendResult> {
    return wait(this.ctx, connection, args, signal);
  }

  read(connection: AgentConnection, args: ToolArgs<'terminal_read'>) {
    const terminal = this.terminalFor(connection, args.id, 'read');
    return terminal.read({ since: args.since, offset: args.offset, count: args.count, maxBytes: args.maxBytes });
  }

  signal(connection: AgentConnection, args: ToolArgs<'terminal_signal'>, signal?: AbortSignal): Promise<SendResult> {
    return signalTerminal(this.ctx, connection, args, signal);
  }

  handoff(connection: AgentConnection, args: ToolArgs<'terminal_handoff'>, signal?: AbortSignal): Promise<SendResult> {
    return handoff(this.ctx, connection, args, signal);
  }

  async close(connection: AgentConnection, args: ToolArgs<'terminal_close'>): Promise<{ closed: boolean; orphans: Array<{ pid: number; comm: string }> }> {
    const terminal = this.terminalFor(connection, args.id, 'write');
    if (this.visible(connection, terminal) !== 'own') throw new TandemError('forbidden', 'Only the person closes their own terminals; hand it back instead.');
    // Taken over, it is the person's until they hand it back: closing it would end what they run
    // there (black-box round 17).
    if (terminal.controller === 'user')
      throw new TandemError('user_control', 'The person has control of this terminal; close it once they hand it back (terminal_wait).');
    const result = await this.host.close(terminal.id, 'agent', { cause: 'agent' });
    if (result.closed) this.forget(terminal.id);
    return result;
  }

  dispose(): void {
    this.disposed.abort();
  }
}
