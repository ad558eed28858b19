/**
 * What differs between POSIX terminals and Windows pseudoconsoles, behind one interface chosen
 * once per process. Windows has no process groups, no tty device and no termios: Ctrl+C is a
 * key, input goes to ConPTY in spaced chunks, and the tree is torn down by parentage.
 */
import { descendants, foregroundPgid, foregroundProgram, readStat, ttyOf } from './proc.js';
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

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is already gone.
  }
}

export function posixPlatform(os: NodeJS.Platform): PtyPlatform {
  const procfs = os === 'linux';
  return {
    os,
    processGroups: true,
    procfs,
    ttyPath: (shellPid, ptsName) => ptsName ?? (procfs ? ttyOf(shellPid) : null),
    foregroundGroup: (shellPid) => foregroundPgid(shellPid),
    shellGroup: (shellPid) => readStat(shellPid)?.pgrp ?? shellPid,
    foregroundProgram: (shellPid) => (procfs ? foregroundProgram(shellPid) : null),
    ttyModes: (ttyPath) => readTtyModes(ttyPath),
    signalGroup,
    signalJob,
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
