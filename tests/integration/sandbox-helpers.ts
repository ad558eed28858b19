import { execFileSync } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe } from 'vitest';
import { bubblewrap } from '../support/capabilities.js';
import { type AgentFixture, startAgentFixture } from './agent-helpers.js';

/** bubblewrap is installed and may create its namespaces here (the capability, not the OS name). */
export const sandboxAvailable = bubblewrap.present;

/** CI sets TANDEM_REQUIRE_SANDBOX=1 so that a missing bubblewrap fails the run instead of skipping it. */
export const sandboxRequired = bubblewrap.required;

if (!sandboxAvailable && !sandboxRequired) {
  console.warn('sandbox tests: skipped, bubblewrap is missing or cannot create namespaces here (set TANDEM_REQUIRE_SANDBOX=1 to fail instead).');
}

/**
 * A suite that needs bubblewrap: under TANDEM_REQUIRE_SANDBOX=1 it runs wherever it is, so a
 * missing or forbidden bubblewrap fails its tests (sandbox_unavailable) instead of skipping them.
 */
export const describeSandbox = sandboxRequired ? describe : describe.runIf(sandboxAvailable);

/** A tool a confined test needs is present, or the run requires it (so its absence fails the test). */
export const needed = (present: boolean): boolean => present || sandboxRequired;

/** The person's own git, unconfined, in `cwd`, with no global config of theirs in the way. */
export function personGitIn(cwd: string, home: string): (...args: string[]) => string {
  return (...args) =>
    execFileSync('git', ['-c', 'user.name=Person', '-c', 'user.email=p@example.com', ...args], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: home },
    });
}

/** A real host and an agent `name` whose every line runs confined (`always`, workspace-write, network off), with its MCP client. */
export async function confinedAgent(name: string): Promise<{ f: AgentFixture; client: Client }> {
  const f = await startAgentFixture({ defaultSandbox: 'workspace-write' });
  const token = f.layer.pairAgent({ name }).token;
  f.layer.setAgentPolicy({ name, policy: 'always', sandbox: 'workspace-write', network: false });
  return { f, client: await f.client(token) };
}
