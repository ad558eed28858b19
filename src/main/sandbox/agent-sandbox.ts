/**
 * Which sandbox an agent's terminals open under, from its stored settings: the person's choice
 * where they made one, else the default for new pairings (`workspace-write` with the network
 * on where the platform can confine; Windows cannot, so `off`).
 */
import { TandemError } from '../../shared/errors.js';
import type { SandboxMode } from './types.js';
import type { SandboxRequest } from './launch.js';

export interface AgentSandboxSettings {
  sandbox?: SandboxMode;
  network?: boolean;
  /** What the person lets this agent read of their home beyond the defaults (src/main/sandbox/agent-home.ts). */
  homeReadable?: string[];
  /** The hosts its proxy lets through (`example.org`, `*.example.org`); unset or empty: any public host. */
  networkDomains?: string[];
}

export function platformDefaultMode(platform: NodeJS.Platform = process.platform): SandboxMode {
  return platform === 'win32' ? 'off' : 'workspace-write';
}

/**
 * What a new pairing is stored with: the person's default for new pairings (settings.json),
 * unless the layer was given a fixed one; Windows cannot confine, so `off` there.
 */
export function pairingSandbox(
  settings: { newAgentSandbox: SandboxMode; newAgentNetwork: boolean },
  fixed: SandboxMode | undefined,
  platform: NodeJS.Platform = process.platform,
): { sandbox: SandboxMode; network: boolean } {
  const sandbox = platform === 'win32' ? 'off' : (fixed ?? settings.newAgentSandbox);
  return { sandbox, network: settings.newAgentNetwork };
}

/** The mode and network an agent's settings resolve to. */
export function effectiveSandbox(settings: AgentSandboxSettings, fallback: SandboxMode): { sandbox: SandboxMode; network: boolean } {
  return { sandbox: settings.sandbox ?? fallback, network: settings.network ?? true };
}

/** The confinement a new terminal of this agent gets, or undefined when it runs unconfined. */
export function sandboxRequest(
  settings: AgentSandboxSettings,
  ctx: { fallback: SandboxMode; agent: string; stateDir: string; discoveryDir: string },
): SandboxRequest | undefined {
  const { sandbox, network } = effectiveSandbox(settings, ctx.fallback);
  if (sandbox === 'off') return undefined;
  return {
    mode: sandbox,
    network,
    agent: ctx.agent,
    stateDir: ctx.stateDir,
    discoveryDir: ctx.discoveryDir,
    ...(settings.homeReadable ? { readable: settings.homeReadable } : {}),
    ...(settings.networkDomains?.length ? { networkDomains: settings.networkDomains } : {}),
  };
}

/**
 * A change of mode or network waits until the agent has no terminal open and none opening:
 * a terminal opened with wider access must not survive a narrowing, nor a narrow one widen.
 */
export function checkSandboxChange(
  current: { mode: SandboxMode; network: boolean },
  next: { mode: SandboxMode; network: boolean },
  open: number,
  platform: NodeJS.Platform = process.platform,
): void {
  if (platform === 'win32' && next.mode !== 'off') {
    throw new TandemError('sandbox_unavailable', 'Confined terminals are not available on Windows; the sandbox stays off there.');
  }
  if (current.mode === next.mode && current.network === next.network) return;
  if (open > 0) {
    throw new TandemError('busy', `This agent has ${open} terminal(s) open or opening; close them before changing its sandbox.`);
  }
}
