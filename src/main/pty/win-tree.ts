/**
 * Tearing a terminal's process tree down on Windows, where there are no process groups or
 * sessions to signal: the tree by parentage (creation times guard against reused parent pids),
 * `taskkill /T /F` on the shell, then each survivor by itself, then what is still there is
 * reported, as on Linux.
 */
import { execFile } from 'node:child_process';
import { type Clock, sleep, systemClock } from '../terminal/clock.js';

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
 * parent: Windows keeps a dead parent's pid in its children, and that pid may be reused.
 */
export function treeOf(rows: WinProcess[], rootPid: number, rootCreated?: number): WinProcess[] {
  const root = rows.find((row) => row.pid === rootPid);
  const found: WinProcess[] = root ? [root] : [];
  const queue: Array<{ pid: number; created: number }> = [{ pid: rootPid, created: root?.created ?? rootCreated ?? 0 }];
  const seen = new Set<number>([rootPid]);
  for (let next = queue.shift(); next; next = queue.shift()) {
    for (const row of rows) {
      if (row.ppid !== next.pid || seen.has(row.pid) || row.created < next.created) continue;
      seen.add(row.pid);
      found.push(row);
      queue.push(row);
    }
  }
  return found;
}

/** Processes of `before` that still run (same pid and creation time) in `now`. */
export function survivors(before: WinProcess[], now: WinProcess[]): WinProcess[] {
  const live = new Set(now.map((row) => `${row.pid}:${row.created}`));
  return before.filter((row) => live.has(`${row.pid}:${row.created}`));
}

const listScript =
  'Get-CimInstance Win32_Process | ForEach-Object { "$($_.ProcessId),$($_.ParentProcessId),$($_.CreationDate.ToFileTimeUtc()),$($_.Name)" }';

function run(file: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', timeout: timeoutMs, windowsHide: true }, (_error, stdout) => resolve(stdout ?? ''));
  });
}

/** Every process on the machine (one PowerShell call, about a second). */
export async function listProcesses(): Promise<WinProcess[]> {
  return parseProcessRows(await run('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', listScript], 15_000));
}

/** How long the tree may take to go after taskkill, checked this often. */
const goneWithinMs = 3000;
const pollMs = 250;

export async function teardownWindowsTree(rootPid: number, clock: Clock = systemClock): Promise<{ orphans: Array<{ pid: number; comm: string }> }> {
  const members = treeOf(await listProcesses(), rootPid);
  if (members.length === 0) return { orphans: [] };
  await run('taskkill.exe', ['/T', '/F', '/PID', String(rootPid)], 10_000);
  let left = survivors(members, await listProcesses());
  for (const proc of left) await run('taskkill.exe', ['/F', '/PID', String(proc.pid)], 10_000);
  for (const deadline = clock.now() + goneWithinMs; left.length > 0 && clock.now() < deadline; ) {
    await sleep(clock, pollMs);
    left = survivors(left, await listProcesses());
  }
  return { orphans: left.map((proc) => ({ pid: proc.pid, comm: proc.name })) };
}
