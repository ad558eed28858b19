import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { hostPlatform } from '../pty/platform.js';

/**
 * When a process started, as an opaque string that differs between two processes that had the
 * same pid; null when it cannot be read. A lock records it beside its pid, so a pid reused
 * after a crash is not taken for the instance that held the lock. On Windows this starts
 * PowerShell (0.5 to 2 s, synchronously): only for a lock that is found, never at start
 * ({@link ownStartTime}).
 */
export function processStartTime(pid: number, platform: NodeJS.Platform = hostPlatform.os): string | null {
  try {
    if (platform === 'linux') return linuxStartTicks(readFileSync(`/proc/${pid}/stat`, 'latin1'));
    const [command, args] =
      platform === 'win32' ? powershell(`(Get-Process -Id ${pid}).StartTime.ToUniversalTime().Ticks`) : ['ps', ['-o', 'lstart=', '-p', String(pid)]];
    // lstart is local time in the locale's words: fixed here, so the host's record and a bridge
    // started with another TZ or LANG read the same string for the same process.
    const env = platform === 'win32' ? process.env : { ...process.env, LC_ALL: 'C', TZ: 'UTC' };
    const out = execFileSync(command, args, { encoding: 'utf8', timeout: 5000, windowsHide: true, stdio: ['ignore', 'pipe', 'ignore'], env }).trim();
    return out || null;
  } catch {
    return null;
  }
}

function powershell(command: string): [string, string[]] {
  return ['powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', command]];
}

/**
 * The start time this process records in its lock, read without starting a process where that
 * is the only way (Windows): there the lock records none, and the lock file's write time stands
 * witness instead ({@link lockWitness}). Linux reads /proc; macOS asks `ps` (a few ms).
 */
export function ownStartTime(platform: NodeJS.Platform = hostPlatform.os): string | null {
  return platform === 'win32' ? null : processStartTime(process.pid, platform);
}

/** A process's start in ms since the epoch (Windows, through PowerShell); null when unknown. */
export function windowsStartMs(pid: number): number | null {
  try {
    const [command, args] = powershell(`[long]((Get-Process -Id ${pid}).StartTime.ToUniversalTime() - [datetime]::new(1970, 1, 1)).TotalMilliseconds`);
    const out = execFileSync(command, args, { encoding: 'utf8', timeout: 5000, windowsHide: true, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return /^\d+$/.test(out) ? Number(out) : null;
  } catch {
    return null;
  }
}

/** Leeway between a process's recorded start and a file's write time (clock resolution). */
export const lockClockSlackMs = 2000;

/** What tells a lock's owner from a process that reused its pid when the lock records no start time. */
export interface LockWitness {
  /** When the owner wrote the lock: it had started by then. */
  writtenMs: number;
  /** When the process now holding a pid started (ms since the epoch); null when unknown. */
  startedMs(pid: number): number | null;
}

/**
 * Windows: the lock file's write time (not its creation time, which NTFS tunnelling can carry
 * over from a deleted file of the same name). Elsewhere the recorded start time serves.
 */
export function lockWitness(
  lockPath: string,
  platform: NodeJS.Platform = hostPlatform.os,
  startedMs: (pid: number) => number | null = windowsStartMs,
): LockWitness | undefined {
  if (platform !== 'win32') return undefined;
  try {
    return { writtenMs: statSync(lockPath).mtimeMs, startedMs };
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/PID/stat (start time in clock ticks after boot); the name in field 2 may hold spaces. */
export function linuxStartTicks(stat: string): string | null {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

export interface LockOwner {
  pid: number;
  started: string | null;
}

/** The lock file's content: `{"pid":…,"started":…}`, or a bare pid from older versions. */
export function parseLockOwner(text: string): LockOwner | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return { pid: Number(trimmed), started: null };
  try {
    const value = JSON.parse(trimmed) as Partial<LockOwner>;
    if (!Number.isInteger(value.pid) || (value.pid as number) <= 0) return null;
    return { pid: value.pid as number, started: typeof value.started === 'string' ? value.started : null };
  } catch {
    return null;
  }
}

/**
 * Whether the recorded owner still runs: its pid is alive and, where both start times are
 * known, it is the same process. A lock without a start time (Windows) is checked against its
 * witness: a process that took the owner's pid started after the owner wrote the lock. An
 * unreadable start time counts as the same process.
 */
export function ownerIsLive(owner: LockOwner, alive: (pid: number) => boolean, startOf: (pid: number) => string | null, witness?: LockWitness): boolean {
  if (!alive(owner.pid)) return false;
  if (owner.started !== null) {
    const now = startOf(owner.pid);
    return now === null || now === owner.started;
  }
  if (!witness) return true;
  const started = witness.startedMs(owner.pid);
  return started === null || started <= witness.writtenMs + lockClockSlackMs;
}
