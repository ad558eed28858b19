/**
 * Whether this machine can confine a terminal, asked once per process and network choice:
 * bubblewrap must exist and be allowed to create its namespaces (Ubuntu 24.04's AppArmor
 * rule forbids unprivileged user namespaces to programs without a profile).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { TandemError } from '../../shared/errors.js';
import { bwrapPath, launcherShell } from './bwrap.js';
import { sandboxExecPath } from './seatbelt.js';

const probeTimeoutMs = 5000;
const verdicts = new Map<string, string | null>();

function linuxProblem(network: boolean): string | null {
  if (!existsSync(launcherShell)) return `confined terminals need ${launcherShell} to start bubblewrap; install bash or set this agent's sandbox to off.`;
  if (!existsSync(bwrapPath)) return `bubblewrap is not installed (${bwrapPath}); install it (Debian and Ubuntu: apt install bubblewrap) or set this agent's sandbox to off.`;
  const args = ['--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--unshare-pid', ...(network ? [] : ['--unshare-net']), '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', 'true'];
  const run = spawnSync(bwrapPath, args, { encoding: 'utf8', timeout: probeTimeoutMs });
  if (run.status === 0) return null;
  const said = (run.stderr || run.error?.message || `exit ${run.status}`).trim().split('\n')[0]!.slice(0, 200);
  let restricted = false;
  try {
    restricted = readFileSync('/proc/sys/kernel/apparmor_restrict_unprivileged_userns', 'utf8').trim() === '1';
  } catch {
    // Not an AppArmor-restricted kernel.
  }
  if (restricted) {
    return `AppArmor forbids bubblewrap to create user namespaces here (${said}); give ${bwrapPath} an AppArmor profile that allows "userns" (see Tandem's README, "Sandboxed agent terminals") or set this agent's sandbox to off.`;
  }
  return `bubblewrap cannot create the sandbox here (${said}); allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0) or set this agent's sandbox to off.`;
}

/** Throws `sandbox_unavailable`, naming the fix, when a confined terminal cannot be set up. */
export function assertSandboxAvailable(network: boolean, platform: NodeJS.Platform = process.platform): void {
  let problem: string | null;
  if (platform === 'linux') {
    const key = `linux:${network}`;
    if (!verdicts.has(key)) verdicts.set(key, linuxProblem(network));
    problem = verdicts.get(key)!;
  } else if (platform === 'darwin') {
    problem = existsSync(sandboxExecPath) ? null : `${sandboxExecPath} is missing; set this agent's sandbox to off.`;
  } else {
    problem = `Confined terminals are not available on ${platform === 'win32' ? 'Windows' : platform}; set this agent's sandbox to off to open unconfined terminals.`;
  }
  if (problem) throw new TandemError('sandbox_unavailable', problem.charAt(0).toUpperCase() + problem.slice(1));
}
