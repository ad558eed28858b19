import { TandemError } from '../../../shared/errors.js';
import type { TerminalInfo } from '../../../shared/types.js';
import type { TerminalPort } from '../../host/terminal-port.js';
import { sandboxRequest } from '../../sandbox/agent-sandbox.js';
import type { SandboxMode } from '../../sandbox/types.js';
import { which } from '../../shells/resolve.js';
import { waitFor } from '../../clock.js';
import type { AgentContext } from './context.js';
import { envNeedingApproval } from '../judge/env-names.js';
import { acceptableProject, confirmedSandbox } from './open-workspace.js';
import type { AgentConnection, ApprovalRequestInfo } from '../types.js';
import type { ToolArgs } from '../mcp/tool-defs.js';

/** Which agent terminals exist and are being opened: the per-agent and per-host limits count both. */
export interface Seats {
  /** Terminal id to its owner's token hash (bounded by the host's terminal limit). */
  owners: Map<string, string>;
  /** Token hash to opens in progress (bounded by the running-terminal limits). */
  opening: Map<string, number>;
  sandbox?: { fallback: SandboxMode; stateDir: string; discoveryDir: string };
}

export function agentInfo(terminal: TerminalPort): TerminalInfo {
  const { handedTo: _handedTo, agentListening: _listening, keptPrivate: _private, ...view } = terminal.view();
  return view;
}

/** terminal_open: within the limits, with the person's yes for an env that could change what later commands run. */
export async function open(
  ctx: AgentContext,
  seats: Seats,
  connection: AgentConnection,
  args: ToolArgs<'terminal_open'>,
  signal?: AbortSignal,
): Promise<TerminalInfo & { banner: string }> {
  const owner = connection.identity.tokenHash;
  const settings = ctx.settingsOf(connection);
  if (settings.policy !== 'always') {
    checkLaunch(ctx, args);
    await approveLaunchEnv(ctx, connection, args, signal);
  }
  // The project the person confirmed (or the first acceptable one the agent's bridge claimed,
  // kept with its pairing); an agent allowed once has the folder its card showed.
  const project = settings.project ?? (connection.identity.persistent ? null : acceptableProject(connection.cwd, ctx.home, ctx.tandemDirs));
  const cwd = args.cwd ?? project ?? connection.cwd ?? ctx.home;
  const question = {
    ask: (info: ApprovalRequestInfo) => ctx.questions.ask(ctx.approvals, owner, info),
    withdraw: (id: string) => ctx.approvals.withdraw(id),
    clock: ctx.clock,
    waitMs: ctx.host.limits.maxWaitMs,
  };
  const current = () => seats.sandbox && sandboxRequest(ctx.settingsOf(connection), { ...seats.sandbox, agent: connection.identity.name });
  // Tandem runs a bash path for its version, outside any sandbox: a confined agent names a discovered shell under `always` too.
  if (settings.policy === 'always' && current()) checkLaunch(ctx, args);
  const { sandbox, workspace } = await confirmedSandbox(
    question,
    { agent: connection.identity.name, title: args.title, shell: args.shell, cwd, project, home: ctx.home, policy: settings.policy },
    current,
    signal,
  );
  const { owners, opening } = seats;
  const limits = ctx.host.limits;
  const running = (ids: string[]) => ids.filter((id) => ctx.host.has(id) && ctx.host.port(id).status !== 'exited').length;
  const mine = running([...owners.entries()].filter(([, tokenHash]) => tokenHash === owner).map(([id]) => id)) + (opening.get(owner) ?? 0);
  if (mine >= limits.maxRunningAgentTerminalsPerAgent) {
    throw new TandemError('capacity', `You already run ${limits.maxRunningAgentTerminalsPerAgent} terminals; close one with terminal_close first.`);
  }
  const openingTotal = [...opening.values()].reduce((sum, count) => sum + count, 0);
  if (running([...owners.keys()]) + openingTotal >= limits.maxRunningAgentTerminals) {
    throw new TandemError('capacity', `Agents already run ${limits.maxRunningAgentTerminals} terminals on this machine; close one first.`);
  }
  // Reserved while the shell starts, so concurrent opens cannot pass the limits together.
  opening.set(owner, (opening.get(owner) ?? 0) + 1);
  let terminal: TerminalPort;
  try {
    terminal = await ctx.host.openForAgent({
      origin: 'agent',
      agent: connection.identity.name,
      title: args.title,
      shell: args.shell ?? (which('bash') ? 'bash' : undefined),
      cwd,
      workspace,
      sandbox,
      env: args.env,
      cols: args.cols,
      rows: args.rows,
      signal,
    });
  } finally {
    const left = (opening.get(owner) ?? 1) - 1;
    if (left > 0) opening.set(owner, left);
    else opening.delete(owner);
  }
  owners.set(terminal.id, owner);
  ctx.host.setAgentConnected(terminal.id, ctx.isConnected(owner));
  return { ...agentInfo(terminal), banner: terminal.banner };
}

/**
 * Opening a terminal runs no command, so it is not approved: it must not be a way around
 * approvals. Unless the agent runs under `always` unconfined, the shell must be one Tandem discovered,
 * and variables that run code or change which programs run are refused.
 */
function checkLaunch(ctx: AgentContext, args: ToolArgs<'terminal_open'>): void {
  if (args.shell && /[\\/]/.test(args.shell)) {
    const known = ctx.host.environment().shells.map((shell) => shell.path);
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
async function approveLaunchEnv(ctx: AgentContext, connection: AgentConnection, args: ToolArgs<'terminal_open'>, signal?: AbortSignal): Promise<void> {
  const names = envNeedingApproval(args.env);
  if (names.length === 0) return;
  const request = ctx.questions.ask(ctx.approvals, connection.identity.tokenHash, {
    kind: 'open',
    agent: connection.identity.name,
    terminalId: '',
    title: args.title,
    command: `open "${args.title}"${args.shell ? ` in ${args.shell}` : ''}${args.cwd ? ` at ${args.cwd}` : ''}`,
    env: names.map((name) => `${name}=${args.env![name]}`),
    why: 'these variables can change what later commands run',
  });
  const decided = await waitFor(ctx.clock, { ms: ctx.host.limits.maxWaitMs, signal, until: request.decision });
  if (decided.kind !== 'met') {
    ctx.approvals.withdraw(request.id);
    if (decided.kind === 'aborted') throw decided.reason ?? new Error('aborted');
    throw new TandemError('rejected', `The person did not approve the env ${names.join(', ')} in time; open without them, or ask the person first.`);
  }
  if (decided.value.state === 'rejected') throw new TandemError('rejected', decided.value.reason || 'The person rejected opening a terminal with this env.');
}
