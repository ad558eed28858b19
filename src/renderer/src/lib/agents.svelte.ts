import type { AgentsState, OpArgs, OpName, OpResult, TandemApi } from '../../../shared/contract';
import { askNotificationPermission } from './notifier';
import { type Problem, toProblem } from './problem';
import { terminals } from './terminals.svelte';

export type AgentPolicy = AgentsState['paired'][number]['policy'];
export type PairedAgent = AgentsState['paired'][number];
export type PairingQuestion = AgentsState['pairings'][number];
export type ApprovalQuestion = AgentsState['approvals'][number];
export type HandoffQuestion = AgentsState['handoffs'][number];
export type PairResult = OpResult<'pairAgent'>;

/** Something the person is asked, in the order it arrived within its kind. */
export type Question = { kind: 'pairing'; item: PairingQuestion } | { kind: 'approval'; item: ApprovalQuestion } | { kind: 'handoff'; item: HandoffQuestion };

export type SandboxMode = NonNullable<PairedAgent['sandbox']>;

export const sandboxLabels: Record<SandboxMode, string> = {
  'workspace-write': 'Sandbox: writes only in its workspace',
  'read-only': 'Sandbox: read-only',
  off: 'No sandbox',
};

export const policyLabels: Record<AgentPolicy, string> = {
  always: 'Always run',
  ask: 'Ask for every command',
  'ask-unless-allowed': 'Ask unless allow-listed',
};

const empty: AgentsState = { paired: [], connected: [], pairings: [], allowedOnce: [], deniedClaims: [], approvals: [], handoffs: [], ran: [] };

/**
 * The agents panel's state as the host pushes it (paired agents, live connections and the
 * questions waiting for the person), and the person's answers.
 */
export class AgentsStore {
  state = $state.raw<AgentsState>(empty);
  /** True once the host answered `agents`. */
  loaded = $state(false);
  /** Why the panel is unavailable (a host without the agent layer). */
  problem = $state<Problem | null>(null);
  /** Questions being answered: their buttons wait. */
  answering = $state<Record<string, boolean>>({});

  /** Handoffs first (an agent is stuck), then approvals (an agent waits), then pairings. */
  readonly questions = $derived<Question[]>([
    ...this.state.handoffs.map((item) => ({ kind: 'handoff' as const, item })),
    ...this.state.approvals.map((item) => ({ kind: 'approval' as const, item })),
    ...this.state.pairings.map((item) => ({ kind: 'pairing' as const, item })),
  ]);

  /** Names the person can hand a terminal to: paired agents and agents connected now (allowed once). */
  readonly names = $derived(
    [...this.state.paired.map((agent) => agent.name), ...this.state.connected.map((agent) => agent.name)]
      .filter((name, index, all) => all.indexOf(name) === index)
      .sort((a, b) => a.localeCompare(b)),
  );

  private api: TandemApi | null = null;
  private offEvent = (): void => undefined;

  constructor(private readonly report: (problem: Problem) => void) {}

  /** Reads the panel from a (new) connection and follows its changes. */
  async bind(api: TandemApi): Promise<void> {
    this.offEvent();
    this.api = api;
    this.offEvent = api.on('agents', (state) => this.apply(state));
    try {
      const state = await api.call('agents', {});
      if (this.api !== api) return;
      this.apply(state);
      this.problem = null;
    } catch (error) {
      if (this.api === api) this.problem = toProblem(error);
    }
  }

  private apply(state: AgentsState): void {
    this.state = state;
    this.loaded = true;
    const open = [...state.pairings, ...state.approvals, ...state.handoffs].map((question) => question.id);
    for (const id of Object.keys(this.answering)) if (!open.includes(id)) delete this.answering[id];
  }

  private async run<K extends OpName>(op: K, args: OpArgs<K>): Promise<OpResult<K> | null> {
    const api = this.api;
    if (!api) return null;
    try {
      return await api.call(op, args);
    } catch (error) {
      this.report(toProblem(error));
      return null;
    }
  }

  /** Answers a question once; an answered (or already withdrawn) question leaves the list at once. */
  private async answer<K extends 'answerPairing' | 'answerApproval' | 'answerHandoff'>(op: K, args: OpArgs<K>): Promise<boolean> {
    const api = this.api;
    const id = args.requestId;
    if (!api || this.answering[id]) return false;
    this.answering[id] = true;
    let gone = true;
    try {
      await api.call(op, args);
      return true;
    } catch (error) {
      const problem = toProblem(error);
      gone = problem.code === 'not_found';
      this.report(problem);
      return false;
    } finally {
      delete this.answering[id];
      if (gone) this.forget(id);
    }
  }

  private forget(id: string): void {
    this.state = {
      ...this.state,
      pairings: this.state.pairings.filter((question) => question.id !== id),
      approvals: this.state.approvals.filter((question) => question.id !== id),
      handoffs: this.state.handoffs.filter((question) => question.id !== id),
    };
  }

  answerPairing(requestId: string, decision: OpArgs<'answerPairing'>['decision']): Promise<boolean> {
    // The person now works with an agent: from here on it may call them (asked from this click).
    if (decision !== 'deny') void askNotificationPermission();
    return this.answer('answerPairing', { requestId, decision });
  }

  approve(requestId: string): Promise<boolean> {
    return this.answer('answerApproval', { requestId, decision: 'approve' });
  }

  approveEdited(requestId: string, command: string): Promise<boolean> {
    return this.answer('answerApproval', { requestId, decision: 'edit', command });
  }

  reject(requestId: string, reason: string): Promise<boolean> {
    const trimmed = reason.trim();
    return this.answer('answerApproval', { requestId, decision: 'reject', ...(trimmed ? { reason: trimmed } : {}) });
  }

  /** `note`: the person's words for the agent on a decline (`handoff.note`). */
  answerHandoff(requestId: string, accept: boolean, note = ''): Promise<boolean> {
    const trimmed = note.trim();
    return this.answer('answerHandoff', { requestId, accept, ...(!accept && trimmed ? { note: trimmed } : {}) });
  }

  /** "Deny all": for a flood of pairing requests; each claim stays denied until lifted. */
  async denyAllPairings(): Promise<boolean> {
    return (await this.run('denyAllPairings', {})) !== null;
  }

  /** `machine`: a claim denied on that remote machine, lifted there. */
  async liftDenial(id: string, machine?: string): Promise<boolean> {
    return this.done(await this.run('liftPairingDenial', { id, ...(machine ? { machine } : {}) }), machine);
  }

  /** `machine`: an agent allowed once on that remote machine, revoked there. */
  async revokeAllowedOnce(id: string, machine?: string): Promise<boolean> {
    return this.done(await this.run('revokeAllowedOnce', { id, ...(machine ? { machine } : {}) }), machine);
  }

  /** A remote machine's agents are read again after a change there (its agents event follows too). */
  private done(result: unknown, machine: string | undefined): boolean {
    if (result === null) return false;
    if (machine) void terminals.refreshMachines();
    return true;
  }

  async pair(name: string): Promise<PairResult | null> {
    void askNotificationPermission();
    return await this.run('pairAgent', { name: name.trim() });
  }

  /** `machine`: an agent paired on that remote machine, revoked there. */
  async revoke(name: string, machine?: string): Promise<boolean> {
    if (machine) return this.done(await this.run('revokeAgent', { name, machine }), machine);
    const done = (await this.run('revokeAgent', { name })) !== null;
    if (done) this.state = { ...this.state, paired: this.state.paired.filter((agent) => agent.name !== name) };
    return done;
  }

  /** Refused (busy) while the agent has terminals open: the notice says to close them first. */
  async setSandbox(agent: PairedAgent, change: { sandbox?: SandboxMode; network?: boolean }, machine?: string): Promise<boolean> {
    const args = { name: agent.name, policy: agent.policy, allow: agent.allow, deny: agent.deny, ...change };
    if (machine) return this.done(await this.run('setAgentPolicy', { ...args, machine }), machine);
    const done = (await this.run('setAgentPolicy', args)) !== null;
    if (done) this.state = { ...this.state, paired: this.state.paired.map((entry) => (entry.name === agent.name ? { ...entry, ...change } : entry)) };
    return done;
  }

  /** The agent's project: where its opens need no question (refused with a notice when the folder is not there). */
  async setProject(agent: PairedAgent, project: string, machine?: string): Promise<boolean> {
    const args = { name: agent.name, policy: agent.policy, allow: agent.allow, deny: agent.deny, project };
    if (machine) return this.done(await this.run('setAgentPolicy', { ...args, machine }), machine);
    return (await this.run('setAgentPolicy', args)) !== null;
  }

  async setPolicy(agent: PairedAgent, change: { policy?: AgentPolicy; allow?: string[]; deny?: string[] }, machine?: string): Promise<boolean> {
    const next = { policy: change.policy ?? agent.policy, allow: change.allow ?? agent.allow, deny: change.deny ?? agent.deny };
    if (machine) return this.done(await this.run('setAgentPolicy', { name: agent.name, ...next, machine }), machine);
    // Shown at once; the host's event confirms it (or the failure puts it back).
    const before = this.state;
    this.state = { ...before, paired: before.paired.map((entry) => (entry.name === agent.name ? { ...entry, ...next } : entry)) };
    const done = (await this.run('setAgentPolicy', { name: agent.name, ...next })) !== null;
    if (!done && this.state.paired.some((entry) => entry.name === agent.name)) {
      this.state = { ...this.state, paired: this.state.paired.map((entry) => (entry.name === agent.name ? agent : entry)) };
    }
    return done;
  }
}

export const agents = new AgentsStore((problem) => (terminals.notice = problem));
