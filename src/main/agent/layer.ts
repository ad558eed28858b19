import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentsState, OpArgs, OpResult } from '../../shared/contract.js';
import { TandemError } from '../../shared/errors.js';
import type { AgentPanel } from '../host/dispatch.js';
import type { TerminalHost } from '../host/host.js';
import type { Clock } from '../terminal/clock.js';
import { type BridgeCommand, clientConfigs } from './configs.js';
import { McpHttpEndpoint } from './mcp-http.js';
import { PairingBroker } from './pairing.js';
import { defaultPolicy } from './policy.js';
import { AgentService } from './service.js';
import { TokenStore } from './tokens.js';

export interface AgentLayerOptions {
  stateDir: string;
  trustLocalAgents?: boolean;
  allowOrigins?: readonly string[];
  isUiCredential?: (secret: string) => boolean;
  bridge?: BridgeCommand;
  clock?: Clock;
  unattendedGraceMs?: number;
}

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

/**
 * Everything agents reach: tokens, pairing, the MCP endpoint, approvals and handoffs, plus the
 * agents panel the UI drives. Mounted on the host's loopback HTTP server at /mcp and /pair.
 */
export class AgentLayer implements AgentPanel {
  readonly tokens: TokenStore;
  readonly service: AgentService;
  readonly pairing: PairingBroker;
  readonly mcp: McpHttpEndpoint;
  private readonly listeners = new Set<(state: AgentsState) => void>();
  private scheduled = false;
  private readonly bridge: BridgeCommand;

  constructor(host: TerminalHost, opts: AgentLayerOptions) {
    this.tokens = new TokenStore(opts.stateDir);
    this.service = new AgentService(host, this.tokens, { clock: opts.clock, unattendedGraceMs: opts.unattendedGraceMs });
    this.pairing = new PairingBroker(this.tokens, {
      trustLocalAgents: opts.trustLocalAgents,
      allowOrigins: opts.allowOrigins,
      clock: opts.clock,
      nameInUse: (name) => this.tokens.isPaired(name) || this.service.connectedAgents().some((entry) => entry.name === name),
    });
    this.mcp = new McpHttpEndpoint(this.service, { allowOrigins: opts.allowOrigins, isUiCredential: opts.isUiCredential });
    this.bridge = opts.bridge ?? { command: 'tandem', args: ['mcp'] };
    const changed = () => this.changed();
    this.pairing.requests.onChange(changed);
    this.pairing.onDeniedChange(changed);
    this.service.approvals.onChange(changed);
    this.service.handoffs.onChange(changed);
    this.service.onConnectionsChange(changed);
    this.tokens.onRevoked(changed);
  }

  /** The HTTP routes to mount: `/mcp` and `/pair`. */
  routes(): Record<string, RouteHandler> {
    return {
      '/mcp': (req, res) => this.mcp.handle(req, res),
      '/pair': (req, res, path) => this.pairing.handle(req, res, path),
    };
  }

  private changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const state = this.state();
      for (const listener of this.listeners) listener(state);
    });
  }

  state(): AgentsState {
    const connected = this.service.connectedAgents();
    return {
      paired: this.tokens.list().map((agent) => ({
        name: agent.name,
        createdAt: agent.createdAt,
        policy: agent.settings.policy,
        allow: agent.settings.allow,
        deny: agent.settings.deny,
        connected: connected.some((entry) => entry.name === agent.name),
      })),
      connected,
      pairings: this.pairing.requests.list().map(({ id, name, pid, exe, cwd, at }) => ({ id, name, pid, exe, cwd, at, nameInUse: this.pairing.nameInUse(name) })),
      allowedOnce: this.tokens.listEphemeral().map(({ id, name, tokenHash }) => ({ id, name, connected: this.service.isAgentConnected(tokenHash) })),
      deniedClaims: this.pairing.deniedClaims(),
      approvals: this.service.approvals.list(),
      handoffs: this.service.handoffs.list(),
    };
  }

  onChange(listener: (state: AgentsState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  pairAgent({ name }: OpArgs<'pairAgent'>): OpResult<'pairAgent'> {
    if (!this.tokens.isPaired(name.trim()) && this.service.agentKey(name)) {
      throw new TandemError('invalid_argument', `An agent allowed once is connected as "${name.trim()}"; choose another name, or revoke that agent first.`);
    }
    const token = this.tokens.pair(name);
    this.changed();
    return { name: name.trim(), token, configs: clientConfigs(this.bridge, name.trim(), token) };
  }

  revokeAgent({ name }: OpArgs<'revokeAgent'>): void {
    this.tokens.revoke(name.trim());
  }

  setAgentPolicy({ name, policy, allow, deny }: OpArgs<'setAgentPolicy'>): void {
    const current = this.tokens.list().find((agent) => agent.name === name.trim());
    if (!current) throw new TandemError('not_found', `No paired agent named "${name}".`);
    this.tokens.setSettings(current.name, { policy, allow: allow ?? current.settings.allow ?? defaultPolicy.allow, deny: deny ?? current.settings.deny ?? defaultPolicy.deny });
    this.changed();
  }

  answerPairing({ requestId, decision }: OpArgs<'answerPairing'>): void {
    this.pairing.answer(requestId, decision);
  }

  denyAllPairings(): void {
    this.pairing.denyAll();
  }

  liftPairingDenial({ id }: OpArgs<'liftPairingDenial'>): void {
    this.pairing.liftDenial(id);
  }

  revokeAllowedOnce({ id }: OpArgs<'revokeAllowedOnce'>): void {
    this.tokens.revokeEphemeralById(id);
    this.changed();
  }

  answerApproval({ requestId, decision, command, reason }: OpArgs<'answerApproval'>): void {
    if (decision === 'edit' && !command) throw new TandemError('invalid_argument', 'command: the edited command line is required to edit then approve.');
    this.service.approvals.answer(
      requestId,
      decision === 'approve' ? { state: 'approved' } : decision === 'edit' ? { state: 'edited', command: command! } : { state: 'rejected', reason: reason?.trim() || 'The person rejected this command.' },
    );
  }

  answerHandoff({ requestId, accept }: OpArgs<'answerHandoff'>): void {
    this.service.handoffs.answer(requestId, accept ? 'accept' : 'decline');
  }

  async close(): Promise<void> {
    await this.mcp.close();
    this.service.dispose();
  }
}
