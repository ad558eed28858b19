/**
 * Tearing down everything a terminal started. node-pty's kill signals the shell only, so we
 * find the tree ourselves, SIGTERM, wait, SIGKILL survivors and late arrivals, then verify.
 */
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { type Clock, sleep, systemClock } from '../terminal/clock.js';
import type { CreatedWindow } from './child-pid.js';
import { readStat, scanProcesses, type ProcStat } from './proc';

export const TERMINAL_ID_ENV = 'TANDEM_TERMINAL_ID';

const hasProc = fs.existsSync('/proc/self/stat');

/** Without /proc (macOS) ps gives parentage only: no session ids, no environments. */
function processTable(): ProcStat[] {
  if (hasProc) return scanProcesses();
  try {
    const out = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,comm='], { encoding: 'utf8', timeout: 2000 });
    return out.split('\n').flatMap((line) => {
      const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
      if (!m) return [];
      return [{ pid: +m[1]!, ppid: +m[2]!, pgrp: +m[3]!, state: m[4]![0]!, comm: m[5]!, session: -1, tpgid: -1 }];
    });
  } catch {
    return [];
  }
}

/** The process's TANDEM_TERMINAL_ID: null when absent, undefined when unreadable. */
function terminalIdOf(pid: number): string | null | undefined {
  let env: string;
  try {
    env = fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return undefined;
  }
  const prefix = `${TERMINAL_ID_ENV}=`;
  for (const entry of env.split('\0')) if (entry.startsWith(prefix)) return entry.slice(prefix.length);
  return null;
}

function isAlive(pid: number): boolean {
  if (hasProc) {
    const state = readStat(pid)?.state;
    return state !== undefined && state !== 'Z' && state !== 'X';
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function findTerminalProcesses(rootPid: number, terminalId: string): number[] {
  const procs = processTable();
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const exclude = new Set<number>([0, 1]);
  for (let pid = process.pid; pid > 0 && !exclude.has(pid); pid = byPid.get(pid)?.ppid ?? 0) exclude.add(pid);

  const found = new Set<number>();
  const root = byPid.get(rootPid);
  // A live pid carrying another terminal's id is a reused pid: leave it and its tree alone.
  const rootId = hasProc && root ? terminalIdOf(rootPid) : undefined;
  const rootIsOurs = typeof rootId !== 'string' || rootId === terminalId;
  if (root && rootIsOurs) {
    const children = new Map<number, number[]>();
    for (const p of procs) {
      const list = children.get(p.ppid);
      if (list) list.push(p.pid);
      else children.set(p.ppid, [p.pid]);
    }
    const queue = [rootPid];
    for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
      if (found.has(pid)) continue;
      found.add(pid);
      queue.push(...(children.get(pid) ?? []));
    }
  }
  // The kernel keeps a pid allocated while it names a session, so once the shell is gone its
  // session id still identifies only its own leftovers (needed for idempotent retries).
  const sessionOk = rootIsOurs && (root ? root.session === rootPid : hasProc);
  // Parentage and session catch children that scrubbed their environment; the env marker
  // catches double-forked and setsid daemons that escaped both the parent chain and the session.
  for (const p of procs) {
    if ((sessionOk && p.session === rootPid) || (hasProc && terminalIdOf(p.pid) === terminalId)) found.add(p.pid);
  }
  return [...found].filter((pid) => !exclude.has(pid));
}

export interface TeardownOptions {
  /** 0 while the PTY's child is unknown (Windows, before ConPTY connects): nothing is torn down then. */
  rootPid: number;
  /** When the root was created; Windows kills no root outside it (a reused pid). */
  rootCreated?: CreatedWindow | null;
  terminalId: string;
  graceMs?: number;
  pollMs?: number;
  /** Time for the grace and kill waits; real time unless a test walks it. */
  clock?: Clock;
}

export interface TeardownResult {
  orphans: Array<{ pid: number; comm: string }>;
}

const KILL_ROUNDS = 5;
const KILL_WAIT_MS = 1000;

/** Resolves when none of pids is alive (zombies count as gone) or after timeoutMs. */
async function waitGone(pids: number[], timeoutMs: number, pollMs: number, clock: Clock): Promise<void> {
  const deadline = clock.now() + timeoutMs;
  while (pids.some(isAlive) && clock.now() < deadline) await sleep(clock, pollMs);
}

/** Idempotent: a later call retries whatever survived (or was started) since. POSIX; Windows: win-tree.ts (chosen in platform.ts). */
export async function teardownTree({
  rootPid,
  terminalId,
  graceMs = 1000,
  pollMs = 20,
  clock = systemClock,
}: TeardownOptions): Promise<TeardownResult> {
  const denied = new Set<number>();
  const send = (pid: number, signal: NodeJS.Signals) => {
    try {
      process.kill(pid, signal);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPERM') denied.add(pid); // ESRCH: already gone
    }
  };

  const members = findTerminalProcesses(rootPid, terminalId);
  for (const pid of members) {
    send(pid, 'SIGTERM');
    // Interactive shells ignore SIGTERM but exit on hangup (as when a terminal closes); stopped
    // processes only act on signals once continued.
    const state = readStat(pid)?.state;
    if (pid === rootPid || state === 'T' || state === 't') send(pid, 'SIGHUP');
    if (state === 'T' || state === 't') send(pid, 'SIGCONT');
  }
  await waitGone(members, graceMs, pollMs, clock);

  // Kill survivors plus anything forked meanwhile; repeat while new processes keep appearing.
  let survivors = members.filter(isAlive);
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const targets = [...new Set([...survivors, ...findTerminalProcesses(rootPid, terminalId)])].filter(isAlive);
    if (targets.length === 0 || targets.every((pid) => denied.has(pid))) break;
    for (const pid of targets) send(pid, 'SIGKILL');
    await waitGone(
      targets.filter((pid) => !denied.has(pid)),
      KILL_WAIT_MS,
      pollMs,
      clock,
    );
    survivors = targets.filter(isAlive);
  }

  const left = [...new Set([...survivors, ...findTerminalProcesses(rootPid, terminalId)])].filter(isAlive);
  return { orphans: left.map((pid) => ({ pid, comm: readStat(pid)?.comm ?? '?' })) };
}
