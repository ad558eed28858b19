import { realpathSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAbsolute } from 'node:path';
import type { AgentsState, OpArgs, OpResult } from '../../shared/contract.js';
import { describeControl, findRefusedControl } from '../../shared/control-chars.js';
import { TandemError } from '../../shared/errors.js';
import type { AgentPanel } from '../host/dispatch.js';
import type { AgentHost } from '../host/host.js';
import type { Clock } from '../clock.js';
import type { BridgeCommand } from '../launch/bridge-command.js';
import { clientConfigs } from './bridge/configs.js';
import { McpHttpEndpoint } from './mcp/mcp-http.js';
import { PairingBroker } from './pairing/pairing.js';
import { parseAllowEntry } from './judge/allow-entries.js';
import { defaultPolicy } from './judge/policy.js';
import { AgentService } from './service/service.js';
import { sameAgentName, TokenStore } from './pairing/tokens.js';
import { checkSandboxChange, effectiveSandbox, pairingSandbox, platformDefaultMode } from '../sandbox/agent-sandbox.js';
import { knownSandboxProblem, sandboxProblem } from '../sandbox/availability.js';
import type { SandboxMode } from '../sandbox/types.js';
import { discoveryDir } from '../host/instance.js';

export interface AgentLayerOptions {
  stateDir: string;
  trustLocalAgents?: boolean;
  allowOrigins?: readonly string[];
  isUiCredential?: (secret: string) => boolean;
  bridge?: BridgeCommand;
  clock?: Clock;
  unattendedGraceMs?: number;
  /**
   * The sandbox of agents whose settings name none (paired before the setting existed); default:
   * the platform's. When given (tests), new pairings get it too instead of the person's setting.
   */
  defaultSandbox?: SandboxMode;
  /** The sandbox of agents trusted by --trust-local-agents (`--agent-sandbox`); default off. */
  trustedSandbox?: SandboxMode;
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
  private readonly defaultSandbox: SandboxMode;

  /** The host, for the timelines of an agent's terminals. */
  private readonly host: AgentHost;

  constructor(host: AgentHost, opts: AgentLayerOptions) {
    this.host = host;
    this.tokens = new TokenStore(opts.stateDir);
    this.defaultSandbox = opts.defaultSandbox ?? platformDefaultMode();
    // A new pairing records its sandbox, so a later change of the default never alters an agent with terminals open.
    this.tokens.newSettings = () => ({ ...defaultPolicy, ...pairingSandbox(host.settings.get(), opts.defaultSandbox) });
    this.service = new AgentService(host, this.tokens, {
      clock: opts.clock,
      unattendedGraceMs: opts.unattendedGraceMs,
      stateDir: opts.stateDir,
      sandbox: { fallback: this.defaultSandbox, stateDir: opts.stateDir, discoveryDir: discoveryDir() },
    });
    this.pairing = new PairingBroker(this.tokens, {
      trustLocalAgents: opts.trustLocalAgents,
      allowOrigins: opts.allowOrigins,
      clock: opts.clock,
      trustedSandbox: opts.trustedSandbox,
      home: host.homeDir,
      nameInUse: (name) => this.tokens.isPairedLike(name) || this.service.connectedAgents().some((entry) => sameAgentName(entry.name, name)),
    });
    this.mcp = new McpHttpEndpoint(this.service, { allowOrigins: opts.allowOrigins, isUiCredential: opts.isUiCredential });
    this.bridge = opts.bridge ?? { command: 'tandem', args: ['mcp'] };
    const changed = () => this.changed();
    this.pairing.requests.onChange(changed);
    this.pairing.onDeniedChange(changed);
    this.service.approvals.onChange(changed);
    this.service.handoffs.onChange(changed);
    this.service.ran.onChange(changed);
    this.service.onConnectionsChange(changed);
    this.tokens.onRevoked(changed);
    // Probed once, off the event loop, so the panel can say why confined terminals would fail (e.g. Ubuntu's AppArmor rule).
    if (process.platform !== 'win32') void sandboxProblem().then(changed, () => undefined);
  }

  /** The HTTP routes to mount: `/mcp` and `/pair`. */
  routes(): Record<string, RouteHandler> {
    return {
      '/mcp': (req, res) => this.mcp.handle(req, res),
      '/pair': (req, res, path) => this.pairing.handle(req, res, path),
    };
  }

  private changed(): void {
    // Nobody watches (no UI attached): the state, ran log and all, is not built for nothing.
    if (this.scheduled || this.listeners.size === 0) return;
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
        ...effectiveSandbox(agent.settings, this.defaultSandbox),
        ...(agent.settings.homeReadable ? { homeReadable: agent.settings.homeReadable } : {}),
        ...(agent.settings.project ? { project: agent.settings.project } : {}),
        ...(agent.settings.networkDomains ? { networkDomains: agent.settings.networkDomains } : {}),
      })),
      connected,
      pairings: this.pairing.requests
        .list()
        .map(({ id, name, pid, exe, cwd, at, verified }) => ({ id, name, pid, exe, cwd, at, nameInUse: this.pairing.nameInUse(name), verified })),
      pairingsPausedUntil: this.pairing.pausedUntilIso(),
      allowedOnce: this.tokens.listEphemeral().map(({ id, name, tokenHash }) => ({ id, name, connected: this.service.isAgentConnected(tokenHash) })),
      deniedClaims: this.pairing.deniedClaims(),
      sandboxProblem: process.platform === 'win32' ? null : (knownSandboxProblem() ?? null),
      approvals: this.service.approvals.list(),
      handoffs: this.service.handoffs.list(),
      ran: this.service.ran.list(),
    };
  }

  onChange(listener: (state: AgentsState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  pairAgent({ name, project }: OpArgs<'pairAgent'>): OpResult<'pairAgent'> {
    if (!this.tokens.isPaired(name.trim()) && this.service.agentKey(name)) {
      throw new TandemError('invalid_argument', `An agent allowed once is connected as "${name.trim()}"; choose another name, or revoke that agent first.`);
    }
    const folder = project === undefined ? undefined : projectFolder(project);
    const token = this.tokens.pair(name, { ...this.tokens.newSettings(), ...(folder ? { project: folder } : {}) });
    this.changed();
    return { name: name.trim(), token, configs: clientConfigs(this.bridge, name.trim(), token) };
  }

  revokeAgent({ name }: OpArgs<'revokeAgent'>): void {
    this.tokens.revoke(name.trim());
  }

  setAgentPolicy({ name, policy, allow, deny, sandbox, network, homeReadable, networkDomains, project }: OpArgs<'setAgentPolicy'>): void {
    const current = this.tokens.list().find((agent) => agent.name === name.trim());
    if (!current) throw new TandemError('not_found', `No paired agent named "${name}".`);
    const folder = project === undefined ? current.settings.project : projectFolder(project);
    for (const entry of allow ?? []) {
      const parsed = parseAllowEntry(entry);
      if (!parsed.ok)
        throw new TandemError(
          'invalid_argument',
          `allow: "${entry}" ${parsed.reason}; write PROGRAM [SUBCOMMAND] [| options: ...] [| operands: paths|auto|any|none].`,
        );
    }
    const before = effectiveSandbox(current.settings, this.defaultSandbox);
    const after = { sandbox: sandbox ?? before.sandbox, network: network ?? before.network };
    checkSandboxChange(
      { mode: before.sandbox, network: before.network },
      { mode: after.sandbox, network: after.network },
      this.service.terminalCount(current.name),
    );
    const kept = sandbox === undefined && network === undefined ? { sandbox: current.settings.sandbox, network: current.settings.network } : after;
    // The read list applies to terminals opened after the change; open ones keep what they were given.
    const readable = homeReadable ?? current.settings.homeReadable;
    // Like the read list, the domain list applies to terminals opened after the change.
    const domains = networkDomains ?? current.settings.networkDomains;
    const fromPolicy = current.settings.policy;
    this.tokens.setSettings(current.name, {
      policy,
      allow: allow ?? current.settings.allow ?? defaultPolicy.allow,
      deny: deny ?? current.settings.deny ?? defaultPolicy.deny,
      ...kept,
      ...(readable ? { homeReadable: readable } : {}),
      ...(domains ? { networkDomains: domains } : {}),
      ...(folder ? { project: folder } : {}),
    });
    // The agent's open terminals' timelines say what changed (src/main/record). A sandbox change
    // has none to tell: it is refused while the agent has terminals (checkSandboxChange), and each
    // terminal's `open` record carries the sandbox it was given.
    for (const view of this.host.list().filter((view) => view.agent === current.name)) {
      this.host
        .port(view.id)
        .journal.policyChanged({ agent: current.name, from: fromPolicy, to: policy, allow: allow?.length ?? null, deny: deny?.length ?? null });
    }
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
    if (decision === 'edit' && this.service.approvals.get(requestId)?.info.kind === 'open')
      throw new TandemError('invalid_argument', 'decision: an open is approved or rejected as asked; it cannot be edited.');
    if (decision === 'edit' && !command) throw new TandemError('invalid_argument', 'command: the edited command line is required to edit then approve.');
    const control = decision === 'edit' && command ? findRefusedControl(command) : null;
    if (control)
      throw new TandemError(
        'invalid_argument',
        `command contains ${describeControl(control.char)} at position ${control.index}; remove it to approve the edited command.`,
      );
    this.service.approvals.answer(
      requestId,
      decision === 'approve'
        ? { state: 'approved' }
        : decision === 'edit'
          ? { state: 'edited', command: command! }
          : { state: 'rejected', reason: reason?.trim() || 'The person rejected this command.' },
    );
  }

  answerHandoff({ requestId, accept, note }: OpArgs<'answerHandoff'>): void {
    this.service.handoffs.answer(requestId, accept ? { accept: true } : { accept: false, note: note?.trim() || null });
  }

  async close(): Promise<void> {
    await this.mcp.close();
    this.service.dispose();
  }
}

/** The person's choice of a project: an absolute path of an existing folder, kept as its real path (any folder: the choice is theirs). */
function projectFolder(path: string): string {
  if (!isAbsolute(path)) throw new TandemError('invalid_argument', `project: "${path}" is not an absolute path.`);
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    throw new TandemError('invalid_argument', `project: there is no folder at ${path}.`);
  }
  if (!statSync(real).isDirectory()) throw new TandemError('invalid_argument', `project: ${path} is not a folder.`);
  return real;
}
