/** /proc helpers for baselines and the leftover check (Linux; elsewhere they report nothing). */
import { readdirSync, readFileSync } from 'node:fs';

interface Stat {
  pid: number;
  comm: string;
  ppid: number;
  tpgid: number;
}

function readStat(pid: number | string): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const fields = text.slice(close + 2).split(' ');
  return { pid: Number(pid), comm: text.slice(open + 1, close), ppid: Number(fields[1]), tpgid: Number(fields[5]) };
}

/** The foreground process group of a shell's terminal (tpgid), or null. */
export function foregroundGroup(shellPid: number): number | null {
  const tpgid = readStat(shellPid)?.tpgid;
  return tpgid !== undefined && tpgid > 0 ? tpgid : null;
}

/** Live descendants of a process (by parentage), with their names. */
export function descendantsOf(root: number): Array<{ pid: number; comm: string }> {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const byParent = new Map<number, Stat[]>();
  for (const entry of entries) {
    const stat = readStat(entry);
    if (!stat) continue;
    const list = byParent.get(stat.ppid) ?? [];
    list.push(stat);
    byParent.set(stat.ppid, list);
  }
  const out: Array<{ pid: number; comm: string }> = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const child of byParent.get(pid) ?? []) {
      out.push({ pid: child.pid, comm: child.comm });
      queue.push(child.pid);
    }
  }
  return out;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Live processes whose command line contains `needle` (e.g. the bench's private tmux socket). */
export function processesMatching(needle: string): Array<{ pid: number; comm: string }> {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const out: Array<{ pid: number; comm: string }> = [];
  for (const entry of entries) {
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) continue;
    } catch {
      continue;
    }
    if (Number(entry) === process.pid) continue;
    out.push({ pid: Number(entry), comm: readStat(entry)?.comm ?? '?' });
  }
  return out;
}
