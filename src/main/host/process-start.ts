import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostPlatform } from '../pty/platform.js';

/**
 * When a process started, as an opaque string that differs between two processes that had the
 * same pid; null when it cannot be read. A lock records it beside its pid, so a pid reused
 * after a crash is not taken for the instance that held the lock.
 */
export function processStartTime(pid: number, platform: NodeJS.Platform = hostPlatform.os): string | null {
  try {
    if (platform === 'linux') return linuxStartTicks(readFileSync(`/proc/${pid}/stat`, 'latin1'));
    const [command, args] =
      platform === 'win32'
        ? ['powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', `(Get-Process -Id ${pid}).StartTime.ToUniversalTime().Ticks`]]
        : ['ps', ['-o', 'lstart=', '-p', String(pid)]];
    const out = execFileSync(command, args as string[], { encoding: 'utf8', timeout: 5000, windowsHide: true, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return out || null;
  } catch {
    return null;
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
 * known, it is the same process. An unreadable start time counts as the same process.
 */
export function ownerIsLive(owner: LockOwner, alive: (pid: number) => boolean, startOf: (pid: number) => string | null): boolean {
  if (!alive(owner.pid)) return false;
  if (owner.started === null) return true;
  const now = startOf(owner.pid);
  return now === null || now === owner.started;
}
