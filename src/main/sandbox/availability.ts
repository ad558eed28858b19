/**
 * Whether this machine can confine a terminal, found out once per process and network choice:
 * bubblewrap must exist and be allowed to create its namespaces. Ubuntu 24.04's AppArmor rule
 * (kernel.apparmor_restrict_unprivileged_userns=1) forbids unprivileged user namespaces to
 * programs without a profile that allows `userns`, so bubblewrap fails there (an AppImage brings
 * no profile; the deb installs one). The verdict names the cause and the fix; it is what a
 * confined open fails with (`sandbox_unavailable`: never an unconfined shell instead) and what
 * the agents panel shows.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { TandemError } from '../../shared/errors.js';
import { bwrapPath, launcherShell } from './bwrap.js';
import { sandboxExecPath } from './seatbelt.js';

const probeTimeoutMs = 5000;

/** Why confinement is unavailable: `apparmor` (Ubuntu's user-namespace rule), `userns` (namespaces off otherwise), `missing` (a program), `platform` (Windows). */
export type SandboxCause = 'apparmor' | 'userns' | 'missing' | 'platform';

export interface SandboxProblem {
  cause: SandboxCause;
  /** One paragraph for the person: what it means and the fix. */
  message: string;
}

export interface SandboxDetection {
  bwrap: string;
  launcher: string;
  /** Ubuntu's sysctl as a file; injectable so tests can give the reading of a restricted kernel. */
  restrictFile: string;
}

const defaults: SandboxDetection = { bwrap: bwrapPath, launcher: launcherShell, restrictFile: '/proc/sys/kernel/apparmor_restrict_unprivileged_userns' };
let detection: SandboxDetection = defaults;
const verdicts = new Map<string, SandboxProblem | null>();
const pending = new Map<string, Promise<SandboxProblem | null>>();

/** Replaces where detection looks (tests) and forgets earlier verdicts. */
export function configureSandboxDetection(overrides: Partial<SandboxDetection> = {}): void {
  detection = { ...defaults, ...overrides };
  verdicts.clear();
  pending.clear();
}

function probeArgs(network: boolean): string[] {
  return [
    '--unshare-user',
    '--disable-userns',
    '--cap-drop',
    'ALL',
    '--unshare-pid',
    ...(network ? [] : ['--unshare-net']),
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--',
    'true',
  ];
}

/** The sysctl's reading: true when AppArmor restricts unprivileged user namespaces; null when the kernel has no such setting. */
export function userNamespacesRestricted(file: string = detection.restrictFile): boolean | null {
  try {
    return readFileSync(file, 'utf8').trim() === '1';
  } catch {
    return null;
  }
}

/** What bubblewrap prints when AppArmor's rule stopped it (Ubuntu 24.04: the namespace is created, its uid map refused). */
const appArmorText = /setting up uid map: Permission denied|No permissions to create new namespace/;

/**
 * The verdict on a probe that ran: null when bubblewrap started, else the cause and the fix.
 * AppArmor is named when the sysctl says it restricts namespaces, or when bubblewrap's words are
 * AppArmor's and the sysctl cannot be read.
 */
export function classifyProbe(probe: { status: number | null; said: string }, restricted: boolean | null, bwrap = detection.bwrap): SandboxProblem | null {
  if (probe.status === 0) return null;
  const said = probe.said.trim().split('\n')[0]!.slice(0, 200) || `exit ${probe.status}`;
  if (restricted === true || (restricted === null && appArmorText.test(said))) {
    return {
      cause: 'apparmor',
      message:
        `Ubuntu's AppArmor keeps bubblewrap from creating the user namespace that confines agents' terminals (kernel.apparmor_restrict_unprivileged_userns=1; bubblewrap said: ${said}), ` +
        `so confined terminals are refused. Fix: install Tandem's .deb, which adds an AppArmor profile allowing ${bwrap} "userns"; or add that profile yourself (README, "Sandboxed agent terminals"); ` +
        `or lift the rule for every program with \`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0\`. Or set this agent's sandbox to off.`,
    };
  }
  return {
    cause: 'userns',
    message: `bubblewrap cannot create the sandbox here (${said}); allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0) or set this agent's sandbox to off.`,
  };
}

function missingProgram(): SandboxProblem | null {
  if (!existsSync(detection.launcher))
    return { cause: 'missing', message: `Confined terminals need ${detection.launcher} to start bubblewrap; install bash or set this agent's sandbox to off.` };
  if (!existsSync(detection.bwrap))
    return {
      cause: 'missing',
      message: `bubblewrap is not installed (${detection.bwrap}); install it (Debian and Ubuntu: apt install bubblewrap) or set this agent's sandbox to off.`,
    };
  return null;
}

function linuxVerdictSync(network: boolean): SandboxProblem | null {
  const missing = missingProgram();
  if (missing) return missing;
  const run = spawnSync(detection.bwrap, probeArgs(network), { encoding: 'utf8', timeout: probeTimeoutMs });
  return classifyProbe({ status: run.status, said: run.stderr || run.error?.message || '' }, userNamespacesRestricted());
}

function linuxVerdictAsync(network: boolean): Promise<SandboxProblem | null> {
  const missing = missingProgram();
  if (missing) return Promise.resolve(missing);
  return new Promise((resolve) => {
    const child = spawn(detection.bwrap, probeArgs(network), { stdio: ['ignore', 'ignore', 'pipe'], timeout: probeTimeoutMs });
    let said = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (said = (said + chunk).slice(0, 4096)));
    child.once('error', (error) => resolve(classifyProbe({ status: null, said: error.message }, userNamespacesRestricted())));
    child.once('close', (status) => resolve(classifyProbe({ status, said }, userNamespacesRestricted())));
  });
}

function otherPlatform(platform: NodeJS.Platform): SandboxProblem | null {
  if (platform === 'darwin')
    return existsSync(sandboxExecPath) ? null : { cause: 'missing', message: `${sandboxExecPath} is missing; set this agent's sandbox to off.` };
  return {
    cause: 'platform',
    message: `Confined terminals are not available on ${platform === 'win32' ? 'Windows' : platform}; set this agent's sandbox to off to open unconfined terminals.`,
  };
}

/** The verdict, probing bubblewrap (without blocking) the first time; for the agents panel. */
export async function sandboxProblem(network = true, platform: NodeJS.Platform = process.platform): Promise<SandboxProblem | null> {
  if (platform !== 'linux') return otherPlatform(platform);
  const key = String(network);
  if (verdicts.has(key)) return verdicts.get(key)!;
  let probing = pending.get(key);
  if (!probing) {
    probing = linuxVerdictAsync(network).then((verdict) => {
      if (pending.get(key) === probing) verdicts.set(key, verdict);
      return verdict;
    });
    pending.set(key, probing);
  }
  return probing;
}

/** The verdict already found, if any (the panel's state never waits for a probe). */
export function knownSandboxProblem(network = true, platform: NodeJS.Platform = process.platform): SandboxProblem | null | undefined {
  if (platform !== 'linux') return otherPlatform(platform);
  return verdicts.get(String(network));
}

/** Throws `sandbox_unavailable`, naming the cause and the fix, when a confined terminal cannot be set up. */
export function assertSandboxAvailable(network: boolean, platform: NodeJS.Platform = process.platform): void {
  let problem: SandboxProblem | null;
  if (platform === 'linux') {
    const key = String(network);
    if (!verdicts.has(key)) verdicts.set(key, linuxVerdictSync(network));
    problem = verdicts.get(key)!;
  } else {
    problem = otherPlatform(platform);
  }
  if (problem) throw new TandemError('sandbox_unavailable', problem.message.charAt(0).toUpperCase() + problem.message.slice(1));
}
