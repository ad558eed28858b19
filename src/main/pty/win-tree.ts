/**
 * Tearing a terminal's process tree down on Windows, where there are no process groups or
 * sessions to signal: the tree by parentage (creation times guard against reused pids, the
 * shell's own against a pid reused after it exited), each member killed by itself, then what is
 * still there is reported, as on Linux.
 */
import { execFile } from 'node:child_process';
import { type Clock, sleep, systemClock } from '../clock.js';
import type { CreatedWindow } from './child-pid.js';

export interface WinProcess {
  pid: number;
  ppid: number;
  /** Creation time (FILETIME ticks, UTC); with the pid it names one process. */
  created: number;
  name: string;
}

/** Rows of `pid,ppid,created,name` as printed by {@link listScript}; malformed lines are skipped. */
export function parseProcessRows(text: string): WinProcess[] {
  return text.split(/\r?\n/).flatMap((line) => {
    const m = /^(\d+),(\d+),(\d+),(.*)$/.exec(line.trim());
    return m ? [{ pid: +m[1]!, ppid: +m[2]!, created: +m[3]!, name: m[4]! }] : [];
  });
}

/**
 * The root and every process descended from it. A child counts only if it was created after its
 * parent: Windows keeps a dead parent's pid in its children, and that pid may be reused. Given
 * `rootCreated` (FILETIME ticks) and a process holding the pid that was created otherwise, that
 * process took the pid of a root that is gone: it and its tree are left out, and the root's own
 * children are those created before it.
 */
export function treeOf(rows: WinProcess[], rootPid: number, rootCreated?: number): WinProcess[] {
  const holder = rows.find((row) => row.pid === rootPid);
  const reusedAt = holder && rootCreated !== undefined && holder.created !== rootCreated ? holder.created : Infinity;
  const root = reusedAt === Infinity ? holder : undefined;
  const found: WinProcess[] = root ? [root] : [];
  const queue: Array<{ pid: number; created: number; before: number }> = [{ pid: rootPid, created: root?.created ?? rootCreated ?? 0, before: reusedAt }];
  const seen = new Set<number>([rootPid]);
  for (let next = queue.shift(); next; next = queue.shift()) {
    for (const row of rows) {
      if (row.ppid !== next.pid || seen.has(row.pid) || row.created < next.created || row.created >= next.before) continue;
      seen.add(row.pid);
      found.push(row);
      queue.push({ pid: row.pid, created: row.created, before: Infinity });
    }
  }
  return found;
}

/** Processes of `before` that still run (same pid and creation time) in `now`. */
export function survivors(before: WinProcess[], now: WinProcess[]): WinProcess[] {
  const live = new Set(now.map((row) => `${row.pid}:${row.created}`));
  return before.filter((row) => live.has(`${row.pid}:${row.created}`));
}

const listScript = 'Get-CimInstance Win32_Process | ForEach-Object { "$($_.ProcessId),$($_.ParentProcessId),$($_.CreationDate.ToFileTimeUtc()),$($_.Name)" }';

function run(file: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', timeout: timeoutMs, windowsHide: true }, (_error, stdout) => resolve(stdout ?? ''));
  });
}

/** Every process on the machine (one PowerShell call, about a second). */
export async function listProcesses(): Promise<WinProcess[]> {
  return parseProcessRows(await run('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', listScript], 15_000));
}

/** The machine's processes as the teardown sees them; a fake one stands in for Windows in tests. */
export interface WinProcessTable {
  list(): Promise<WinProcess[]>;
  /** Ends one process, not its tree; one already gone or denied is no error (it is then reported). */
  kill(pid: number): void;
}

export const systemProcessTable: WinProcessTable = {
  list: listProcesses,
  kill: (pid) => {
    try {
      // TerminateProcess on Windows: no helper process, and only this pid (taskkill /T follows
      // parent pids that a reused pid can fake).
      process.kill(pid);
    } catch {
      // Gone, or denied: what is left is reported.
    }
  },
};

/** Pid 0 is the System Idle Process and 4 is System: never a shell, whatever a PTY reports. */
export const maxSystemPid = 4;
/** Leeway between this host's clock and the kernel's creation times (timer resolution, small adjustments). */
export const creationSlackMs = 2000;

const fileTimeEpochOffsetMs = 11_644_473_600_000;

/** FILETIME ticks (100 ns since 1601, UTC) as ms since the Unix epoch. */
export function fileTimeToMs(ticks: number): number {
  return ticks / 10_000 - fileTimeEpochOffsetMs;
}

export function msToFileTime(ms: number): number {
  return (ms + fileTimeEpochOffsetMs) * 10_000;
}

/** Whether a creation time (FILETIME ticks) falls in the window recorded when the shell was spawned. */
export function createdWithin(ticks: number, window: CreatedWindow): boolean {
  const ms = fileTimeToMs(ticks);
  return ms >= window.notBeforeMs - creationSlackMs && ms <= window.notAfterMs + creationSlackMs;
}

export interface WindowsTeardownOptions {
  rootPid: number;
  /** When the shell was created (child-pid.ts); without it no root is trusted. */
  rootCreated?: CreatedWindow | null;
  clock?: Clock;
}

/** How long the tree may take to go after the kills, checked this often. */
const goneWithinMs = 3000;
const pollMs = 250;

/**
 * Kills the shell and what it started, each process by itself, then reports what is left. Pids
 * up to 4 are refused (a PTY that reports 0 has no known child). The process now holding the
 * shell's pid is the shell only if it was created between the spawn call and the pid's first
 * read: otherwise the shell is gone and its pid reused, and only the shell's own leftovers go.
 */
export async function teardownWindowsTree(
  { rootPid, rootCreated, clock = systemClock }: WindowsTeardownOptions,
  table: WinProcessTable = systemProcessTable,
): Promise<{ orphans: Array<{ pid: number; comm: string }> }> {
  if (rootPid <= maxSystemPid || !rootCreated) return { orphans: [] };
  const rows = await table.list();
  const holder = rows.find((row) => row.pid === rootPid);
  const rootTicks = holder && createdWithin(holder.created, rootCreated) ? holder.created : msToFileTime(rootCreated.notBeforeMs - creationSlackMs);
  const members = treeOf(rows, rootPid, rootTicks);
  if (members.length === 0) return { orphans: [] };
  for (const proc of members) table.kill(proc.pid);
  let left = survivors(members, await table.list());
  for (const deadline = clock.now() + goneWithinMs; left.length > 0 && clock.now() < deadline;) {
    for (const proc of left) table.kill(proc.pid);
    await sleep(clock, pollMs);
    left = survivors(left, await table.list());
  }
  return { orphans: left.map((proc) => ({ pid: proc.pid, comm: proc.name })) };
}
