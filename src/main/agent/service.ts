import { randomBytes } from 'node:crypto';
import { TandemError } from '../../shared/errors.js';
import type { ApprovalInfo, HandoffInfo, SendResult, TerminalInfo } from '../../shared/types.js';
import type { TerminalHost } from '../host/host.js';
import type { ManagedTerminal } from '../host/managed-terminal.js';
import { which } from '../shells/resolve.js';
import { type Clock, systemClock } from '../terminal/clock.js';
import { findRefusedControl, describeControl } from '../../shared/control-chars.js';
import { envNeedingApproval } from './judge/env-names.js';
import { loadGrammars } from './judge/tree-sitter.js';
import { OpQueue } from './op-queue.js';
import { sandboxRequest } from '../sandbox/agent-sandbox.js';
import type { SandboxMode } from '../sandbox/types.js';
import { handBackSummary } from './hand-back.js';
import { confirmedSandbox } from './open-workspace.js';
import { judge, type PolicySettings } from './policy.js';
import { RanLog } from './ran-log.js';
import { QuestionOwners } from './question-owners.js';
import { redirectedBy } from './redirect-check.js';
import { PendingRequests } from './requests.js';
import type { AgentIdentity, TokenStore } from './tokens.js';
import type { ToolArgs } from './tool-defs.js';

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


/** How long a send waits for the shell's redirect report of the command that just ended. */
const redirectReportWaitMs = 1000;

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

interface TerminalState {
  queue: OpQueue;
  /** Output offset when the person took control: the hand-back summary starts there. */
  leaseOffset: number | null;
  handoff: { requestId: string; state: HandoffInfo['state']; note: string | null } | null;
  waiters: Set<() => void>;
  /** Agents whose write on this terminal waits for the person's approval. */
  awaiting: Set<string>;
  /** A write approved after its send returned: the waits that follow report it until it settles. */
  approved: { command: string; approval: ApprovalInfo } | null;
}

function emptyResult(cursor: string, control: 'agent' | 'user'): SendResult {
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
  private readonly states = new Map<string, TerminalState>();
  private readonly goneAt = new Map<string, number>();
  private readonly clock: Clock;
  private readonly graceMs: number;
  private readonly sweepTimer: ReturnType<typeof setInterval>;
  private readonly home: string;
  private readonly tandemDirs: string[];
  private readonly connectionListeners = new Set<() => void>();
  private readonly opening = new Map<string, number>();
  private readonly sandbox: AgentServiceOptions['sandbox'];
  private readonly questions = new QuestionOwners(this.approvals, this.handoffs, (reason): ApprovalDecision => ({ state: 'rejected', reason }));

  constructor(
    private readonly host: TerminalHost,
    readonly tokens: TokenStore,
    opts: AgentServiceOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.graceMs = opts.unattendedGraceMs ?? host.limits.unattendedGraceMs;
    this.home = opts.home ?? host.homeDir;
    const runtime = process.env.XDG_RUNTIME_DIR;
    this.tandemDirs = [opts.stateDir, runtime ? `${runtime}/tandem` : undefined].filter((dir): dir is string => Boolean(dir));
    this.sandbox = opts.sandbox;
    this.sweepTimer = setInterval(() => void this.sweepUnattended(), opts.sweepIntervalMs ?? 60_000);
    this.sweepTimer.unref();
    tokens.onRevoked(({ tokenHash }) => {
      for (const connection of [...this.connections.values()]) if (connection.identity.tokenHash === tokenHash) this.disconnect(connection.id);
      this.questions.withdrawAllOf(tokenHash, 'The agent was revoked.');
      // A person's terminal handed to that token comes back to the person.
      for (const view of host.list()) if (host.get(view.id).meta.handedToKey === tokenHash) host.handToAgent(view.id, null);
    });
    host.agentPresence = (name) => [...this.connections.values()].some((connection) => connection.identity.name === name);
    host.setAgentDirectory((name) => this.agentKey(name));
    // Terminals the person closed (or reset away) leave no agent state behind.
    host.onRoster((terminals) => {
      const present = new Set(terminals.map((terminal) => terminal.id));
      for (const id of [...this.states.keys(), ...this.owners.keys()]) if (!present.has(id)) this.forget(id);
    });
  }

  /** The named agent's terminals still in the host plus its opens in progress. */
  terminalCount(name: string): number {
    const hashes = new Set([...this.connections.values()].filter((c) => c.identity.name === name).map((c) => c.identity.tokenHash));
    const opening = [...hashes].reduce((sum, hash) => sum + (this.opening.get(hash) ?? 0), 0);
    return this.host.list().filter((view) => view.origin === 'agent' && view.agent === name).length + opening;
  }

  // ---- connections ---------------------------------------------------------------------------

  connect(identity: AgentIdentity, meta: { cwd?: string | null; ownTerminalId?: string | null } = {}): AgentConnection {
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

  private refreshConnected(): void {
    for (const { id } of this.host.list()) {
      const terminal = this.host.get(id);
      // An agent's own terminal goes with its token; a handed one with the agent's name.
      const owner = this.owners.get(id);
      const connected = owner !== undefined ? this.isConnected(owner) : terminal.meta.handedTo !== null && this.host.agentPresence(terminal.meta.handedTo);
      if (terminal.meta.agentConnected !== connected) {
        terminal.meta.agentConnected = connected;
        this.host.touch();
      }
    }
    for (const listener of this.connectionListeners) listener();
  }

  /** Closes terminals of agents gone longer than the grace, unless the person holds them or a command runs. */
  async sweepUnattended(): Promise<void> {
    const now = this.clock.now();
    for (const [terminalId, tokenHash] of [...this.owners]) {
      const gone = this.goneAt.get(tokenHash);
      if (gone === undefined || now - gone < this.graceMs || !this.host.has(terminalId)) continue;
      const terminal = this.host.get(terminalId);
      const status = terminal.session.status;
      if (terminal.meta.control === 'user' || status === 'running' || status === 'waiting_input') continue;
      await this.host.close(terminalId, null).catch(() => undefined);
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
    for (const request of this.approvals.list()) if (request.terminalId === terminalId) this.approvals.answer(request.id, { state: 'rejected', reason: 'The terminal was closed.' });
    for (const request of this.handoffs.list()) if (request.terminalId === terminalId) this.handoffs.withdraw(request.id);
  }

  // ---- access ----------------------------------------------------------------------------

  private state(terminal: ManagedTerminal): TerminalState {
    let state = this.states.get(terminal.id);
    if (!state) {
      state = { queue: new OpQueue(this.host.limits.maxQueuedOperations), leaseOffset: null, handoff: null, waiters: new Set(), awaiting: new Set(), approved: null };
      this.states.set(terminal.id, state);
      const current = state;
      terminal.onControl((control) => {
        current.leaseOffset = control === 'user' ? terminal.session.streamOffset : current.leaseOffset;
        if (control === 'user' && current.handoff?.state === 'pending') current.handoff.state = 'accepted';
        for (const wake of [...current.waiters]) wake();
      });
    }
    return state;
  }

  private visible(connection: AgentConnection, terminal: ManagedTerminal): 'own' | 'handed' | 'shared' | null {
    if (this.owners.get(terminal.id) === connection.identity.tokenHash) return 'own';
    if (terminal.meta.origin === 'user' && terminal.meta.handedToKey === connection.identity.tokenHash) return 'handed';
    if (terminal.meta.origin === 'user' && terminal.meta.shared) return 'shared';
    return null;
  }

  private terminalFor(connection: AgentConnection, id: string, need: 'read' | 'write'): ManagedTerminal {
    if (connection.ownTerminalId && id === connection.ownTerminalId) {
      throw new TandemError('forbidden', 'This is the terminal you are running in; open another terminal for commands.');
    }
    if (!this.host.has(id)) throw new TandemError('not_found', `No terminal with id "${id}"; call terminal_list to see yours.`);
    const terminal = this.host.get(id);
    const access = this.visible(connection, terminal);
    if (!access) throw new TandemError('forbidden', 'That terminal belongs to someone else; you can use only your own, shared and handed-over terminals.');
    if (need === 'write' && access === 'shared') throw new TandemError('forbidden', 'The person shared this terminal for reading only; ask them to hand it to you.');
    return terminal;
  }

  private info(terminal: ManagedTerminal): TerminalInfo {
    const { handedTo: _handedTo, agentListening: _listening, ...view } = terminal.view();
    return view;
  }

  // ---- tools --------------------------------------------------------------------------------

  /** While an agent call waits on a terminal it can see, the UI knows the agent is watching it (`agentListening`). */
  async listening<T>(connection: AgentConnection, id: string, run: () => Promise<T>): Promise<T> {
    const terminal = this.host.has(id) ? this.host.get(id) : null;
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
      if (this.visible(connection, this.host.get(view.id))) terminals.push(this.info(this.host.get(view.id)));
    }
    return { terminals };
  }

  async open(connection: AgentConnection, args: ToolArgs<'terminal_open'>, signal?: AbortSignal): Promise<TerminalInfo & { banner: string }> {
    const owner = connection.identity.tokenHash;
    const settings = this.settingsOf(connection);
    if (settings.policy !== 'always') {
      this.checkLaunch(args);
      await this.approveLaunchEnv(connection, args, signal);
    }
    const cwd = args.cwd ?? connection.cwd ?? this.home;
    const question = { ask: (info: ApprovalRequestInfo) => this.questions.ask(this.approvals, owner, info), withdraw: (id: string) => this.approvals.withdraw(id), clock: this.clock, waitMs: this.host.limits.maxWaitMs };
    const current = () => this.sandbox && sandboxRequest(this.settingsOf(connection), { ...this.sandbox, agent: connection.identity.name });
    const sandbox = await confirmedSandbox(question, { agent: connection.identity.name, title: args.title, shell: args.shell, cwd, project: connection.cwd, home: this.home }, current, signal);
    const running = (ids: string[]) => ids.filter((id) => this.host.has(id) && this.host.get(id).session.status !== 'exited').length;
    const mine = running([...this.owners.entries()].filter(([, tokenHash]) => tokenHash === owner).map(([id]) => id)) + (this.opening.get(owner) ?? 0);
    if (mine >= this.host.limits.maxRunningAgentTerminalsPerAgent) {
      throw new TandemError('capacity', `You already run ${this.host.limits.maxRunningAgentTerminalsPerAgent} terminals; close one with terminal_close first.`);
    }
    const openingTotal = [...this.opening.values()].reduce((sum, count) => sum + count, 0);
    if (running([...this.owners.keys()]) + openingTotal >= this.host.limits.maxRunningAgentTerminals) {
      throw new TandemError('capacity', `Agents already run ${this.host.limits.maxRunningAgentTerminals} terminals on this machine; close one first.`);
    }
    // Reserved while the shell starts, so concurrent opens cannot pass the limits together.
    this.opening.set(owner, (this.opening.get(owner) ?? 0) + 1);
    let terminal: ManagedTerminal;
    try {
      terminal = await this.host.createManaged({
        origin: 'agent',
        agent: connection.identity.name,
        title: args.title,
        shell: args.shell ?? (which('bash') ? 'bash' : undefined),
        cwd,
        sandbox,
        env: args.env,
        cols: args.cols,
        rows: args.rows,
        signal,
      });
    } finally {
      const left = (this.opening.get(owner) ?? 1) - 1;
      if (left > 0) this.opening.set(owner, left);
      else this.opening.delete(owner);
    }
    this.owners.set(terminal.id, owner);
    terminal.meta.agentConnected = this.isConnected(owner);
    return { ...this.info(terminal), banner: terminal.session.banner };
  }

  /**
   * Opening a terminal runs no command, so it is not approved: it must not be a way around
   * approvals. Unless the agent runs under `always`, the shell must be one Tandem discovered,
   * and variables that run code or change which programs run are refused.
   */
  private checkLaunch(args: ToolArgs<'terminal_open'>): void {
    if (args.shell && /[\\/]/.test(args.shell)) {
      const known = this.host.environment().shells.map((shell) => shell.path);
      if (!known.includes(args.shell)) {
        throw new TandemError('forbidden', `shell "${args.shell}" is not one of this machine's shells; name one (bash, zsh, sh, pwsh) or use a discovered path.`);
      }
    }
  }

  /**
   * Variables beyond the harmless list (locale, colour, width, time zone) can turn later
   * allowed commands into code execution (HOME, PATH, GIT_*, LD_*...): the open waits for the
   * person, who sees them, for at most the longest wait of a call.
   */
  private async approveLaunchEnv(connection: AgentConnection, args: ToolArgs<'terminal_open'>, signal?: AbortSignal): Promise<void> {
    const names = envNeedingApproval(args.env);
    if (names.length === 0) return;
    const request = this.questions.ask(this.approvals, connection.identity.tokenHash, {
      kind: 'open',
      agent: connection.identity.name,
      terminalId: '',
      title: args.title,
      command: `open "${args.title}"${args.shell ? ` in ${args.shell}` : ''}${args.cwd ? ` at ${args.cwd}` : ''}`,
      env: names.map((name) => `${name}=${args.env![name]}`),
      why: 'these variables can change what later commands run',
    });
    const bound = new AbortController();
    const onAbort = () => bound.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const decision = await this.raceDeadline(request.decision, this.clock.now() + this.host.limits.maxWaitMs, bound.signal);
      if (decision === 'timeout' || decision === 'aborted') {
        this.approvals.withdraw(request.id);
        if (decision === 'aborted') throw signal?.reason ?? new Error('aborted');
        throw new TandemError('rejected', `The person did not approve the env ${names.join(', ')} in time; open without them, or ask the person first.`);
      }
      if (decision.state === 'rejected') throw new TandemError('rejected', decision.reason || 'The person rejected opening a terminal with this env.');
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The agent's approval policy as it is now; a revoked agent can do nothing more. */
  private settingsOf(connection: AgentConnection): PolicySettings {
    const settings = this.tokens.currentSettings(connection.identity);
    if (!settings) throw new TandemError('forbidden', 'This agent’s token was revoked; pair it again in Tandem.');
    return settings;
  }

  async send(connection: AgentConnection, args: ToolArgs<'terminal_send'>, signal?: AbortSignal): Promise<SendResult> {
    const startedAt = this.clock.now();
    const terminal = this.terminalFor(connection, args.id, 'write');
    const state = this.state(terminal);
    if (terminal.meta.control === 'user') {
      throw new TandemError('user_control', 'The person has control of this terminal; wait for them to hand it back (terminal_wait).');
    }
    if (terminal.session.status === 'exited') throw new TandemError('exited', 'The shell of this terminal has exited; open a new terminal.');
    if (args.text === undefined && !args.keys?.length) throw new TandemError('invalid_argument', 'text or keys is required.');
    const control = findRefusedControl(args.text ?? '');
    if (control) {
      throw new TandemError('invalid_argument', `text contains ${describeControl(control.char)} at position ${control.index}; control characters are refused in text, send keys (Escape, C-c...) instead.`);
    }
    const owner = connection.identity.tokenHash;
    if (state.queue.holds(owner) || state.awaiting.has(owner)) {
      throw new TandemError('busy', 'You already have a write waiting for approval, queued or running on this terminal; wait for its result first.');
    }
    const waitMs = args.waitMs ?? this.host.limits.defaultWaitMs;
    const deadline = startedAt + waitMs;

    let text = args.text;
    let keys = args.keys;
    let approval: ApprovalInfo | null = null;
    // Judged exactly as it will be typed; the person sees keys by name after the text.
    const line = [text ?? '', ...(keys ?? []).map((key) => (key.length === 1 ? key : `<${key}>`))].join(' ').trim();
    const settings = this.settingsOf(connection);
    // A grammar that fails to load classifies nothing: lines ask, they are never let through.
    const grammars = await loadGrammars().catch(() => null);
    const judgeLine = (line: string, hasKeys: boolean) =>
      judge(line, settings, {
        hasKeys,
        shell: terminal.session.shell.dialect?.name ?? null,
        grammars,
        operands: { cwd: terminal.session.cwd ?? terminal.session.workspace, workspace: terminal.session.workspace, roots: { home: this.home, tandemDirs: this.tandemDirs } },
        home: this.home,
      });
    const judgement = judgeLine(text ?? '', (keys?.length ?? 0) > 0);
    let verdict = judgement.verdict;
    let why = judgement.verdict === 'ask' ? judgement.why : null;
    // An allowed line asks when the shell reported what would make its program run something else.
    if (verdict === 'run' && settings.policy !== 'always' && terminal.session.status === 'idle') {
      const report = await terminal.session.freshRedirects(redirectReportWaitMs);
      if (state.queue.holds(owner) || state.awaiting.has(owner)) throw new TandemError('busy', 'You already have a write waiting for approval, queued or running on this terminal; wait for its result first.');
      if (redirectedBy(text ?? '', report, (expanded) => judgeLine(expanded, false).verdict === 'run')) {
        verdict = 'ask';
        why = 'the shell reported an alias, a function or a PATH change that could make this program run something else';
      }
    }
    if (verdict === 'deny') throw new TandemError('rejected', `"${line.slice(0, 80)}" matches the deny list and was not sent.`);

    // The slot is held from here: while asking, while queued, while running.
    const bound = new AbortController();
    const onCallerAbort = () => bound.abort(signal?.reason);
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      if (verdict === 'ask') {
        const request = this.questions.ask(this.approvals, connection.identity.tokenHash, {
          kind: 'command',
          agent: connection.identity.name,
          terminalId: terminal.id,
          title: terminal.meta.title,
          command: line,
          env: [],
          why,
        });
        // The agent's slot is held while the person decides.
        state.awaiting.add(owner);
        void request.decision.then(() => state.awaiting.delete(owner));
        const decision = await this.raceDeadline(request.decision, deadline, bound.signal);
        if (decision === 'timeout') {
          // Still pending: it stays for the person, and runs if approved later.
          void this.runWhenApproved(connection, terminal, request.decision, args);
          return { ...emptyResult(terminal.session.cursor, terminal.meta.control), status: 'awaiting_approval', evidence: 'bound', approval: { state: 'pending', reason: null }, durationMs: Math.round(this.clock.now() - startedAt) };
        }
        if (decision === 'aborted') {
          this.approvals.withdraw(request.id);
          state.awaiting.delete(owner);
          throw bound.signal.reason ?? new Error('aborted');
        }
        if (decision.state === 'rejected') throw new TandemError('rejected', decision.reason || 'The person rejected this command.');
        approval = { state: decision.state, reason: null };
        if (decision.state === 'edited') {
          // The edited line is what runs: nothing the agent sent rides along.
          text = decision.command;
          keys = undefined;
        }
      }
      if (verdict === 'run') this.ran.record(connection.identity.name, { command: line, terminalId: terminal.id, title: terminal.meta.title, at: new Date().toISOString() });
      return await this.runTurn(connection, terminal, { ...args, text, keys }, deadline, bound.signal, approval, startedAt);
    } finally {
      signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  private async runWhenApproved(connection: AgentConnection, terminal: ManagedTerminal, decision: Promise<ApprovalDecision>, args: ToolArgs<'terminal_send'>): Promise<void> {
    const answer = await decision;
    // Decided late: it runs only if the agent, the terminal and its control are still as they were.
    if (answer.state === 'rejected' || !this.tokens.currentSettings(connection.identity) || !this.isConnected(connection.identity.tokenHash) || !this.host.has(terminal.id) || terminal.meta.control === 'user') return;
    const state = this.state(terminal);
    const turn = await state.queue.enqueue(connection.identity.tokenHash);
    try {
      const edited = answer.state === 'edited';
      const line = edited ? answer.command : [args.text ?? '', ...(args.keys ?? [])].join(' ').trim();
      state.approved = { command: line, approval: { state: answer.state, reason: null } };
      await terminal.session
        .send({ text: edited ? answer.command : args.text, keys: edited ? undefined : args.keys, submit: args.submit, input: args.input, waitMs: 0 })
        .catch(() => undefined);
    } finally {
      turn.release();
    }
  }

  private raceDeadline<T>(promise: Promise<T>, deadline: number, signal: AbortSignal): Promise<T | 'timeout' | 'aborted'> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => resolve('timeout'), Math.max(0, deadline - this.clock.now()));
      const onAbort = () => resolve('aborted');
      signal.addEventListener('abort', onAbort, { once: true });
      void promise.then((value) => {
        this.clock.clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      });
    });
  }

  private async runTurn(
    connection: AgentConnection,
    terminal: ManagedTerminal,
    args: ToolArgs<'terminal_send'>,
    deadline: number,
    signal: AbortSignal,
    approval: ApprovalInfo | null,
    startedAt: number,
  ): Promise<SendResult> {
    const state = this.state(terminal);
    const queued = new AbortController();
    const timer = this.clock.setTimeout(() => queued.abort(new TandemError('busy', 'The terminal stayed busy with earlier operations for the whole wait; nothing was sent.')), Math.max(0, deadline - this.clock.now()));
    const onAbort = () => queued.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let turn;
    try {
      turn = await state.queue.enqueue(connection.identity.tokenHash, queued.signal);
    } finally {
      this.clock.clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
    try {
      if (terminal.meta.control === 'user') throw new TandemError('user_control', 'The person took control of this terminal; wait for them to hand it back (terminal_wait).');
      state.approved = null;
      const handoff = this.handoffSignal(terminal);
      try {
        const result = await terminal.session.send({
          text: args.text,
          keys: args.keys,
          submit: args.submit,
          input: args.input,
          waitMs: Math.max(0, deadline - this.clock.now()),
          maxOutputBytes: args.maxOutputBytes,
          signal,
          handoff: handoff.signal,
        });
        return this.decorate(terminal, result, approval, startedAt);
      } finally {
        handoff.dispose();
      }
    } finally {
      turn.release();
    }
  }

  /** An AbortSignal that fires when the person takes control of the terminal. */
  private handoffSignal(terminal: ManagedTerminal): { signal: AbortSignal; dispose: () => void } {
    const controller = new AbortController();
    const off = terminal.onControl((control) => {
      if (control === 'user') controller.abort();
    });
    return { signal: controller.signal, dispose: off };
  }

  private decorate(terminal: ManagedTerminal, result: SendResult, approval: ApprovalInfo | null, startedAt: number): SendResult {
    const state = this.states.get(terminal.id);
    // A takeover the agent did not ask for reads as an accepted handoff without a summary yet.
    const handoff: HandoffInfo | null = result.status === 'human_handoff' ? { state: state?.handoff?.state ?? 'accepted', summary: '', note: null } : null;
    return { ...result, control: terminal.meta.control, handoff, approval, durationMs: Math.round(this.clock.now() - startedAt) };
  }

  async wait(connection: AgentConnection, args: ToolArgs<'terminal_wait'>, signal?: AbortSignal): Promise<SendResult> {
    const startedAt = this.clock.now();
    const terminal = this.terminalFor(connection, args.id, 'read');
    const waitMs = args.waitMs ?? this.host.limits.defaultWaitMs;
    if (terminal.meta.control === 'user' && this.visible(connection, terminal) !== 'shared') {
      return this.waitForHandBack(terminal, waitMs, startedAt, signal);
    }
    const handoff = this.handoffSignal(terminal);
    try {
      const result = await terminal.session.wait({ since: args.since, waitMs, maxOutputBytes: args.maxOutputBytes, signal, handoff: handoff.signal });
      const approved = this.takeApproved(terminal, result);
      return this.decorate(terminal, approved ? { ...result, command: result.command ?? approved.command } : result, approved?.approval ?? null, startedAt);
    } finally {
      handoff.dispose();
    }
  }

  /** Waits after a late approval name the approved command, until one reports it settled. */
  private takeApproved(terminal: ManagedTerminal, result: SendResult): TerminalState['approved'] {
    const state = this.states.get(terminal.id);
    const approved = state?.approved ?? null;
    if (state && (result.status === 'done' || result.status === 'exited')) state.approved = null;
    return approved;
  }

  /** While the person holds control, waits settle only on hand-back, decline, exit or the bound. */
  private async waitForHandBack(terminal: ManagedTerminal, waitMs: number, startedAt: number, signal?: AbortSignal): Promise<SendResult> {
    const state = this.state(terminal);
    const outcome = await new Promise<'returned' | 'declined' | 'exited' | 'bound' | 'aborted'>((resolve) => {
      const timer = this.clock.setTimeout(() => finish('bound'), waitMs);
      const offState = terminal.session.onStateChange(() => {
        if (terminal.session.status === 'exited') finish('exited');
      });
      const wake = () => {
        if (terminal.meta.control === 'agent') finish(state.handoff?.state === 'declined' ? 'declined' : 'returned');
      };
      const onAbort = () => finish('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      state.waiters.add(wake);
      const finish = (value: 'returned' | 'declined' | 'exited' | 'bound' | 'aborted') => {
        this.clock.clearTimeout(timer);
        offState();
        state.waiters.delete(wake);
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      if (terminal.session.status === 'exited') finish('exited');
    });
    if (outcome === 'aborted') throw signal?.reason ?? new Error('aborted');
    const base = emptyResult(terminal.session.cursor, terminal.meta.control);
    if (outcome === 'exited') return { ...base, status: 'exited', evidence: 'exit', exitCode: terminal.session.exitCode, closedBy: terminal.session.closedBy, durationMs: Math.round(this.clock.now() - startedAt) };
    if (outcome === 'bound') {
      return { ...base, status: 'human_handoff', evidence: 'handoff', handoff: { state: state.handoff?.state ?? 'accepted', summary: '', note: null }, durationMs: Math.round(this.clock.now() - startedAt) };
    }
    return this.describeAfterHandBack(terminal, startedAt);
  }

  /** The terminal as it is at hand-back, with a summary of what the person ran. */
  private async describeAfterHandBack(terminal: ManagedTerminal, startedAt: number): Promise<SendResult> {
    const state = this.state(terminal);
    const since = state.leaseOffset ?? terminal.session.streamOffset;
    const commands = terminal.session.commandsSince(since);
    const words = terminal.takeHandBackWords();
    const summary = handBackSummary(commands, words?.shareOutput ? terminal.session.outputSince(since) : null, () => terminal.session.screen.text);
    const status = terminal.session.status;
    let evidence: SendResult['evidence'] = 'handoff';
    let resultStatus: SendResult['status'] = status === 'idle' ? 'done' : status === 'exited' ? 'exited' : 'running';
    if (status === 'running' || status === 'waiting_input') {
      const waiting = await terminal.session.probeNow();
      if (waiting) resultStatus = 'waiting_input';
    }
    if (resultStatus === 'exited') evidence = 'exit';
    const last = commands.at(-1);
    const handoffState: HandoffInfo['state'] = state.handoff?.state === 'declined' ? 'declined' : 'returned';
    const note = handoffState === 'declined' ? (state.handoff?.note ?? null) : (words?.note ?? null);
    state.handoff = null;
    state.leaseOffset = null;
    return {
      ...emptyResult(terminal.session.cursor, terminal.meta.control),
      status: resultStatus,
      evidence,
      command: last?.command ?? null,
      exitCode: resultStatus === 'done' ? (last?.exitCode ?? terminal.session.lastCommandExitCode) : null,
      cwd: terminal.session.cwd,
      handoff: { state: handoffState, summary, note },
      durationMs: Math.round(this.clock.now() - startedAt),
    };
  }

  read(connection: AgentConnection, args: ToolArgs<'terminal_read'>) {
    const terminal = this.terminalFor(connection, args.id, 'read');
    return terminal.session.read({ since: args.since, offset: args.offset, count: args.count, maxBytes: args.maxBytes });
  }

  async signal(connection: AgentConnection, args: ToolArgs<'terminal_signal'>, signal?: AbortSignal): Promise<SendResult> {
    const startedAt = this.clock.now();
    const terminal = this.terminalFor(connection, args.id, 'write');
    if (terminal.meta.control === 'user') throw new TandemError('user_control', 'The person has control of this terminal; wait for them to hand it back.');
    const cursor = terminal.session.cursor;
    const status = terminal.session.status;
    await terminal.session.signal(args.signal);
    if (status !== 'running' && status !== 'waiting_input') {
      return { ...emptyResult(terminal.session.cursor, terminal.meta.control), status: status === 'exited' ? 'exited' : 'done', evidence: status === 'exited' ? 'exit' : 'marker', cwd: terminal.session.cwd, closedBy: terminal.session.closedBy };
    }
    const result = await terminal.session.wait({ since: cursor, waitMs: 5000, signal });
    return this.decorate(terminal, result, null, startedAt);
  }

  async handoff(connection: AgentConnection, args: ToolArgs<'terminal_handoff'>, signal?: AbortSignal): Promise<SendResult> {
    const startedAt = this.clock.now();
    const terminal = this.terminalFor(connection, args.id, 'write');
    const state = this.state(terminal);
    // One question per terminal: a new request replaces an unanswered one.
    if (state.handoff?.state === 'pending') this.handoffs.withdraw(state.handoff.requestId);
    const request = this.questions.ask(this.handoffs, connection.identity.tokenHash, { agent: connection.identity.name, terminalId: terminal.id, title: terminal.meta.title, message: args.message });
    state.handoff = { requestId: request.id, state: 'pending', note: null };
    void request.decision.then((decision) => {
      if (state.handoff?.requestId !== request.id || !this.host.has(terminal.id)) return;
      if (decision.accept) this.host.takeControl(terminal.id);
      else {
        state.handoff.state = 'declined';
        state.handoff.note = decision.note;
        for (const wake of [...state.waiters]) wake();
      }
    });
    const waitMs = args.waitMs ?? this.host.limits.defaultWaitMs;
    const deadline = startedAt + waitMs;
    // Phase 1: until the person answers.
    const answered = await new Promise<'answered' | 'bound' | 'aborted'>((resolve) => {
      const timer = this.clock.setTimeout(() => finish('bound'), waitMs);
      const wake = () => {
        if (state.handoff?.state !== 'pending') finish('answered');
      };
      const onAbort = () => finish('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      state.waiters.add(wake);
      const finish = (value: 'answered' | 'bound' | 'aborted') => {
        this.clock.clearTimeout(timer);
        state.waiters.delete(wake);
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      if (terminal.meta.control === 'user') finish('answered');
    });
    if (answered === 'aborted') {
      this.handoffs.withdraw(request.id);
      state.handoff = null;
      throw signal?.reason ?? new Error('aborted');
    }
    const base = { ...emptyResult(terminal.session.cursor, terminal.meta.control), cwd: terminal.session.cwd };
    if (answered === 'bound') return { ...base, status: 'running', evidence: 'bound', handoff: { state: 'pending', summary: '', note: null }, durationMs: Math.round(this.clock.now() - startedAt) };
    if (state.handoff?.state === 'declined') {
      const note = state.handoff.note;
      state.handoff = null;
      return { ...base, status: terminal.session.status === 'idle' ? 'done' : 'running', evidence: 'handoff', handoff: { state: 'declined', summary: '', note }, durationMs: Math.round(this.clock.now() - startedAt) };
    }
    // Phase 2: accepted; until the person hands back.
    return this.waitForHandBack(terminal, Math.max(0, deadline - this.clock.now()), startedAt, signal);
  }

  async close(connection: AgentConnection, args: ToolArgs<'terminal_close'>): Promise<{ closed: boolean; orphans: Array<{ pid: number; comm: string }> }> {
    const terminal = this.terminalFor(connection, args.id, 'write');
    if (this.visible(connection, terminal) !== 'own') throw new TandemError('forbidden', "Only the person closes their own terminals; hand it back instead.");
    const result = await this.host.close(terminal.id, 'agent');
    if (result.closed) this.forget(terminal.id);
    return result;
  }

  dispose(): void {
    clearInterval(this.sweepTimer);
  }
}
