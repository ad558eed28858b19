/**
 * What the agents panel shows and does with an agent's own files (issue 24): its home under
 * Tandem's state (`<state>/sandbox/<agent>/home`, with the caches and history beside it), and
 * the connections the proxy refused for it. Removing the directory is refused while a confined
 * terminal of the agent is open (its home is mounted there).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { TandemError } from '../../shared/errors.js';
import { agentDirName } from './launch.js';
import { removeLockedTree } from './locked-tree.js';
import { type ProxyRefusal, proxyRefusals } from './proxy.js';

/** Refusals the panel gets per agent, newest last. */
export const refusalsShown = 50;

export interface AgentFiles {
  /** `<state>/sandbox/<agent>`: removed as a whole. */
  dir: string;
  /** The agent's `$HOME` inside its confined terminals (Linux; elsewhere the person's home stays and only caches live here). */
  home: string;
  exists: boolean;
}

export function agentFiles(stateDir: string, agent: string, platform: NodeJS.Platform = process.platform): AgentFiles {
  const dir = join(stateDir, 'sandbox', agentDirName(agent));
  const home = platform === 'linux' ? join(dir, 'home') : dir;
  return { dir, home, exists: statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false };
}

/** The agent's recent refusals (newest last), without the agent field. */
export function agentRefusals(agent: string): Array<Omit<ProxyRefusal, 'agent'>> {
  return proxyRefusals()
    .filter((entry) => entry.agent === agent)
    .slice(-refusalsShown)
    .map(({ agent: _agent, ...rest }) => rest);
}

/** Removes the agent's directory; false when there was none. `openTerminals`: its confined terminals open now. */
export function removeAgentFiles(stateDir: string, agent: string, openTerminals: number): boolean {
  if (openTerminals > 0)
    throw new TandemError(
      'busy',
      `${agent} has ${openTerminals === 1 ? 'a confined terminal' : `${openTerminals} confined terminals`} open, which use its home; close them before removing it.`,
    );
  const files = agentFiles(stateDir, agent);
  if (!files.exists) return false;
  removeLockedTree(files.dir);
  return true;
}
