/**
 * Tearing down everything a terminal started. node-pty's kill signals the shell only, so we
 * find the tree ourselves, SIGTERM, wait, SIGKILL survivors and late arrivals, then verify.
 */
import fs from 'node:fs';
import { type Clock, sleep, systemClock } from '../clock.js';
import type { CreatedWindow } from './child-pid.js';
import { readStat, scanProcesses, type ProcStat } from './proc';
import { environArgs, hostPsFlavour, processTable as psTable, runPsSync, terminalIds } from './ps-source.js';
import { hostEvidence } from './ps-tier.js';

export const TERMINAL_ID_ENV = 'TANDEM_TERMINAL_ID';

/**
 * Where the tree is read: /proc, or ps where there is none (macOS) or the ps tier is asked for
 * (TANDEM_EVIDENCE=ps, ps-tier.ts), so Linux runs the macOS path.
 */
const hasProc = fs.existsSync('/proc/self/stat') && hostEvidence() !== 'ps';

/** A process as the tree walk sees it; `start` (ps's lstart) says who a pid is, or null under /proc. */
interface TreeProc extends ProcStat {
  start: string | null;
  /** The controlling terminal as ps names it; null under /proc. */
  tty: string | null;
}

/** /proc, or one ps table: parentage, groups, sessions (Linux ps only) and start times. */
function processTable(): TreeProc[] {
  if (hasProc) return scanProcesses().map((p) => ({ ...p, start: null, tty: null }));
  return (psTable() ?? []).map((p) => ({
    pid: p.pid,
    ppid: p.ppid,
    pgrp: p.pgid,
    session: p.sess > 0 ? p.sess : -1,
    state: p.stat[0]!,
    comm: p.comm,
    tpgid: -1,
    start: p.lstart,
    tty: p.tty,
  }));
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

/** Without /proc: every own process's TANDEM_TERMINAL_ID from one ps listing of environments. */
function terminalIdsPs(): Map<number, string> {
  const text = runPsSync(environArgs(hostPsFlavour));
  return text === null ? new Map() : terminalIds(text, TERMINAL_ID_ENV);
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

/** A process found for teardown; `start` pins it so a reused pid is never signalled (ps only). */
interface Member {
  pid: number;
  start: string | null;
}

function findMembers(rootPid: number, terminalId: string): Member[] {
  const procs = processTable();
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const exclude = new Set<number>([0, 1]);
  for (let pid = process.pid; pid > 0 && !exclude.has(pid); pid = byPid.get(pid)?.ppid ?? 0) exclude.add(pid);
  const ids = hasProc ? null : terminalIdsPs();
  const idOf = (pid: number): string | null | undefined => (ids ? (ids.get(pid) ?? null) : terminalIdOf(pid));

  const found = new Set<number>();
  const root = byPid.get(rootPid);
  // A live pid carrying another terminal's id is a reused pid: leave it and its tree alone.
  const rootId = root ? idOf(rootPid) : undefined;
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
  // session id still identifies only its own leftovers (needed for idempotent retries). macOS's
  // ps has no session ids: there the shell's controlling terminal stands in while it lives.
  const sessionOk = rootIsOurs && (root ? root.session === rootPid : hasProc || procs.some((p) => p.session > 0));
  const rootTty = !hasProc && root && rootIsOurs && root.session < 0 && root.tty && !/^\?+$/.test(root.tty) ? root.tty : null;
  // Parentage and session catch children that scrubbed their environment; the env marker
  // catches double-forked and setsid daemons that escaped both the parent chain and the session.
  for (const p of procs) {
    if ((sessionOk && p.session === rootPid) || (rootTty !== null && p.tty === rootTty) || idOf(p.pid) === terminalId) found.add(p.pid);
  }
  return [...found].filter((pid) => !exclude.has(pid)).map((pid) => ({ pid, start: byPid.get(pid)?.start ?? null }));
}

/**
 * A terminal's live processes with their process groups (Linux /proc: parentage, session and
 * the terminal-id marker, so setsid daemons too); null without /proc. A /proc-wide scan with an
 * environment read per process: at a takeover and per agent write after a private hand-back only.
 */
export function terminalProcessGroups(rootPid: number, terminalId: string): Map<number, number> | null {
  if (!hasProc) return null;
  const groups = new Map<number, number>();
  for (const { pid } of findMembers(rootPid, terminalId)) {
    const stat = readStat(pid);
    if (stat && stat.state !== 'Z' && stat.state !== 'X') groups.set(pid, stat.pgrp);
  }
  return groups;
}

export function findTerminalProcesses(rootPid: number, terminalId: string): number[] {
  return findMembers(rootPid, terminalId).map((m) => m.pid);
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
async function waitGone(members: Member[], timeoutMs: number, pollMs: number, clock: Clock): Promise<void> {
  const deadline = clock.now() + timeoutMs;
  while (liveMembers(members).length > 0 && clock.now() < deadline) await sleep(clock, pollMs);
}

/** Idempotent: a later call retries whatever survived (or was started) since. POSIX; Windows: win-tree.ts (chosen in platform.ts). */
export async function teardownTree({ rootPid, terminalId, graceMs = 1000, pollMs = 20, clock = systemClock }: TeardownOptions): Promise<TeardownResult> {
  const denied = new Set<number>();
  const send = (pid: number, signal: NodeJS.Signals) => {
    try {
      process.kill(pid, signal);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPERM') denied.add(pid); // ESRCH: already gone
    }
  };
  // Under ps each poll is a process: poll less often than /proc reads.
  const poll = hasProc ? pollMs : Math.max(pollMs, psPollMs);
  const live = (members: Member[]) => liveMembers(members);
  const stateOf = hasProc ? (pid: number) => readStat(pid)?.state : (pid: number) => psStates.get(pid);
  let psStates = new Map<number, string>();

  const members = findMembers(rootPid, terminalId);
  if (!hasProc) psStates = new Map(processTable().map((p) => [p.pid, p.state]));
  for (const { pid } of members) {
    send(pid, 'SIGTERM');
    // Interactive shells ignore SIGTERM but exit on hangup (as when a terminal closes); stopped
    // processes only act on signals once continued.
    const state = stateOf(pid);
    if (pid === rootPid || state === 'T' || state === 't') send(pid, 'SIGHUP');
    if (state === 'T' || state === 't') send(pid, 'SIGCONT');
  }
  await waitGone(members, graceMs, poll, clock);

  // Kill survivors plus anything forked meanwhile; repeat while new processes keep appearing.
  let survivors = live(members);
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const targets = live(union(survivors, findMembers(rootPid, terminalId)));
    if (targets.length === 0 || targets.every((m) => denied.has(m.pid))) break;
    for (const { pid } of targets) send(pid, 'SIGKILL');
    await waitGone(
      targets.filter((m) => !denied.has(m.pid)),
      KILL_WAIT_MS,
      poll,
      clock,
    );
    survivors = live(targets);
  }

  const left = live(union(survivors, findMembers(rootPid, terminalId)));
  const comms = hasProc ? null : new Map(processTable().map((p) => [p.pid, p.comm]));
  return { orphans: left.map(({ pid }) => ({ pid, comm: (comms ? comms.get(pid) : readStat(pid)?.comm) ?? '?' })) };
}

const psPollMs = 50;

function union(a: Member[], b: Member[]): Member[] {
  const byPid = new Map<number, Member>();
  for (const m of [...a, ...b]) if (!byPid.has(m.pid)) byPid.set(m.pid, m);
  return [...byPid.values()];
}

/**
 * The members still alive as the same process: zombies count as gone, and under ps a pid whose
 * start time changed is another process now (one ps for the lot). Only these are signalled.
 */
function liveMembers(members: Member[]): Member[] {
  if (hasProc || members.length === 0) return members.filter((m) => isAlive(m.pid));
  const text = runPsSync(['-p', members.map((m) => m.pid).join(','), '-o', 'pid=,stat=,lstart=']);
  if (text === null) return members.filter((m) => isAlive(m.pid) && m.start === null);
  const now = new Map<number, { stat: string; start: string }>();
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\S+)\s+(.*\S)\s*$/.exec(line);
    if (m) now.set(Number(m[1]), { stat: m[2]!, start: m[3]!.replace(/\s+/g, ' ') });
  }
  return members.filter((m) => {
    const seen = now.get(m.pid);
    return seen !== undefined && !/^[ZX]/.test(seen.stat) && (m.start === null || seen.start === m.start);
  });
}
