/**
 * What differs between POSIX terminals and Windows pseudoconsoles, behind one interface chosen
 * once per process. Windows has no process groups, no tty device and no termios: Ctrl+C is a
 * key, input goes to ConPTY in spaced chunks, and the tree is torn down by parentage.
 */
import { descendants, foregroundPgid, foregroundProgram, readStat, ttyOf } from './proc.js';
import { lookPid, processTable } from './ps-source.js';
import { type EvidenceTier, hostEvidence } from './ps-tier.js';
import { readTtyModes, type TtyModes } from './termios.js';
import { type TeardownOptions, type TeardownResult, teardownTree } from './tree.js';
import { type SpacingClock, writeSpaced } from './win-input.js';
import { teardownWindowsTree } from './win-tree.js';

export interface PtyPlatform {
  readonly os: NodeJS.Platform;
  /** Process groups and a foreground group exist: signals reach a job, not just the shell. */
  readonly processGroups: boolean;
  /** /proc can be read for the syscall tier of waiting detection (Linux). */
  readonly procfs: boolean;
  /** Where process evidence comes from (ps-tier.ts): /proc, ps, or nowhere (absent: nowhere). */
  readonly evidence?: EvidenceTier;
  /** The shell's terminal device, for termios and /proc; null where there is none. */
  ttyPath(shellPid: number, ptsName: string | undefined): string | null;
  /** The terminal's foreground process group; null without groups or when unknown. */
  foregroundGroup(shellPid: number): number | null;
  /** The shell's own process group (its pid when unknown). */
  shellGroup(shellPid: number): number;
  /** The foreground program's name, or null while the shell itself is in front (or unknown). */
  foregroundProgram(shellPid: number): string | null;
  ttyModes(ttyPath: string): Promise<TtyModes | null>;
  /** Signals a process group; a group already gone is no error. */
  signalGroup(pgid: number, signal: NodeJS.Signals): void;
  /** Signals a process and those of its descendants still in its group (not its ancestors); gone ones are no error. */
  signalJob(pid: number, signal: NodeJS.Signals): void;
  /** Writes input; a chunked write stops once `open()` turns false (the shell exited). */
  writeInput(data: string, write: (chunk: string) => void, open: () => boolean, clock: SpacingClock): Promise<void>;
  teardown(opts: TeardownOptions): Promise<TeardownResult>;
}

function signalJob(pid: number, signal: NodeJS.Signals): void {
  const pgrp = readStat(pid)?.pgrp;
  for (const member of [pid, ...descendants(pid).filter((child) => readStat(child)?.pgrp === pgrp)]) {
    try {
      process.kill(member, signal);
    } catch {
      // Already gone.
    }
  }
}

/** The same through ps (no /proc): the job's group and its descendants from one process table. */
function signalJobPs(pid: number, signal: NodeJS.Signals): void {
  const table = processTable() ?? [];
  const pgid = table.find((p) => p.pid === pid)?.pgid;
  const members = [pid];
  for (let i = 0; i < members.length; i++) {
    for (const p of table) if (p.ppid === members[i] && p.pgid === pgid && !members.includes(p.pid)) members.push(p.pid);
  }
  for (const member of members) {
    try {
      process.kill(member, signal);
    } catch {
      // Already gone.
    }
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is already gone.
  }
}

/**
 * One ps per process per few ms: an interrupt asks for the foreground group, the shell's group
 * and the program back to back (a stty between), and each ps costs several ms (a SIGINT must land while the job
 * that should get it still runs). Later questions (the escalation a second on) read afresh.
 */
const lookPidFreshMs = 250;
const recentLooks = new Map<number, { at: number; look: ReturnType<typeof lookPid> }>();
function lookPidRecent(pid: number): ReturnType<typeof lookPid> {
  const now = performance.now();
  const hit = recentLooks.get(pid);
  if (hit && now - hit.at < lookPidFreshMs) return hit.look;
  const look = lookPid(pid);
  if (recentLooks.size > 64) recentLooks.clear();
  recentLooks.set(pid, { at: now, look });
  return look;
}

/** The terminal's foreground group as ps shows it from the shell; null when none or unknown. */
function foregroundGroupPs(shellPid: number): number | null {
  const tpgid = lookPidRecent(shellPid)?.tpgid;
  return tpgid !== undefined && tpgid > 0 ? tpgid : null;
}

function foregroundProgramPs(shellPid: number): string | null {
  const shell = lookPidRecent(shellPid);
  if (!shell || shell.tpgid <= 0 || shell.tpgid === shell.pgid) return null;
  return lookPidRecent(shell.tpgid)?.comm || null;
}

/** `evidence` is chosen once per host (ps-tier.ts); tests pass one to build the other kind. */
export function posixPlatform(os: NodeJS.Platform, evidence: EvidenceTier = hostEvidence()): PtyPlatform {
  const procfs = evidence === 'proc';
  const ps = evidence === 'ps';
  return {
    os,
    processGroups: true,
    procfs,
    evidence,
    ttyPath: (shellPid, ptsName) => ptsName ?? (procfs ? ttyOf(shellPid) : null),
    foregroundGroup: (shellPid) => (ps ? foregroundGroupPs(shellPid) : foregroundPgid(shellPid)),
    shellGroup: (shellPid) => (ps ? lookPidRecent(shellPid)?.pgid : readStat(shellPid)?.pgrp) ?? shellPid,
    foregroundProgram: (shellPid) => (procfs ? foregroundProgram(shellPid) : ps ? foregroundProgramPs(shellPid) : null),
    ttyModes: (ttyPath) => readTtyModes(ttyPath),
    signalGroup,
    signalJob: ps ? signalJobPs : signalJob,
    writeInput: async (data, write) => write(data),
    teardown: (opts) => teardownTree(opts),
  };
}

export const windowsPlatform: PtyPlatform = {
  os: 'win32',
  processGroups: false,
  procfs: false,
  ttyPath: () => null,
  foregroundGroup: () => null,
  shellGroup: (shellPid) => shellPid,
  foregroundProgram: () => null,
  ttyModes: async () => null,
  signalGroup: () => {},
  signalJob: () => {},
  writeInput: (data, write, open, clock) => writeSpaced(data, (chunk) => open() && write(chunk), clock),
  teardown: (opts) => teardownWindowsTree(opts),
};

export function platformFor(os: NodeJS.Platform): PtyPlatform {
  return os === 'win32' ? windowsPlatform : posixPlatform(os);
}

/** This process's platform, chosen once. */
export const hostPlatform: PtyPlatform = platformFor(process.platform);
