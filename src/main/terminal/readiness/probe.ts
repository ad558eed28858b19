import { foregroundReads, isShellName, isShellProcess, readStat, sampleForeground, type ForegroundSample } from '../../pty/proc.js';
import { classifyWchan, isSleeping, lookTty, type PsTtyEntry } from '../../pty/ps-source.js';
import { readTtyModes, type TtyModes } from '../../pty/termios.js';
import { dialectOfProcess } from '../../shells/resolve.js';

/** Quiet periods (since the last output or input) before each kind of evidence counts. */
export const readQuietMs = 15;
export const pollQuietMs = 300;
/**
 * A read by a shell (bash, zsh, pwsh, ... by its process name: its prompt, or a builtin read)
 * counts only after the longer quiet of a poll. Its end marker, written just before it went back
 * to reading, may still be in the kernel's pty buffers when the look is taken (Tandem's own
 * delivery is synced, the kernel's is not): pwsh, whose prompt cannot be told from Read-Host by
 * the terminal's modes, came back `waiting_input` after `/bin/echo` in a run under two CPU
 * burners, and after `Write-Output ok` confined, where the shell is not the terminal's first
 * process (bubblewrap is) (issue 22). Builtin reads (`read`, Read-Host) are seen 300 ms after
 * their prompt instead of 15 ms.
 */
export const shellReadQuietMs = pollQuietMs;
export const echoOffQuietMs = 300;

export type WaitEvidence = 'read' | 'poll' | 'echo_off';

export interface ProbeTarget {
  shellPid: number;
  ttyPath: string | null;
  /** The process tier (syscalls from /proc, or ps); off where neither works, and in tests of the fallback. */
  procTier: boolean;
  /** Where that tier reads: /proc (the default) or ps (ps-tier.ts). */
  source?: 'proc' | 'ps';
}

/** What a thread looked like before the write: the evidence must show the input was consumed. */
export interface ProbeBaseline {
  tpgid: number | null;
  syscr: Map<number, number | null>;
  /** A second write the evidence must also be past (`andPast`). */
  also?: ProbeBaseline;
}

/**
 * Evidence past both writes: a reader counts only once it has consumed each (its read count
 * grew since both looks, or the foreground job changed since them).
 */
export function andPast(first: ProbeBaseline | null, second: ProbeBaseline | null): ProbeBaseline | null {
  if (!first || !second) return first ?? second;
  return { ...first, also: first.also ? andPast(first.also, second)! : second };
}

export function takeBaseline(target: ProbeTarget): ProbeBaseline {
  const sample = countsReads(target) ? foregroundReads(target.shellPid) : null;
  const syscr = new Map<number, number | null>();
  for (const thread of sample?.threads ?? []) syscr.set(thread.tid, thread.syscr);
  return { tpgid: sample?.tpgid ?? null, syscr };
}

/** ps counts no reads: its baseline is empty and its look trusts the quiet period (psLook). */
function countsReads(target: ProbeTarget): target is ProbeTarget & { ttyPath: string } {
  return Boolean(target.procTier && target.ttyPath && target.source !== 'ps');
}

function sampleFor(target: ProbeTarget): ForegroundSample | null {
  return countsReads(target) ? sampleForeground(target.shellPid, target.ttyPath) : null;
}

function progressed(sample: ForegroundSample, tid: number, syscr: number | null, baseline: ProbeBaseline | null): boolean {
  if (!baseline) return true;
  if (baseline.also && !progressed(sample, tid, syscr, baseline.also)) return false;
  if (sample.tpgid !== baseline.tpgid) return true;
  if (!baseline.syscr.has(tid)) return true;
  const before = baseline.syscr.get(tid);
  return syscr !== null && before !== null && before !== undefined && syscr > before;
}

/**
 * The shell itself reads the terminal in its line editor's mode (no line mode, no echo): it is
 * at its prompt, whatever the markers said so far. Its end marker may still be on its way (the
 * kernel hands a pty's output to the reading side later, on a worker of its own), and after a
 * silent stretch (`sleep`) zsh's read passed the read quiet period at once: a multi-line send
 * came back `waiting_input` (issue 22). So the shell's own reads in that mode are never
 * evidence. What a command runs in the shell itself with the same modes (zsh's `vared`,
 * bash's `read -e` and `read -s -n 1`) is not seen as waiting either: it reports `running`.
 * Builtin reads in line mode (`read`, `read -s`) or with echo on (`read -k`, `read -n 1`) still count.
 * Which shells edit that way is their dialect's `rawLineEditor` (readline, ZLE; not PSReadLine).
 */
async function shellEditing(target: ProbeTarget, sample: ForegroundSample, readModes: (tty: string) => Promise<TtyModes | null>): Promise<boolean> {
  const own = sample.threads.some((thread) => thread.pid === target.shellPid && thread.watchesTty && (thread.kind === 'read' || thread.kind === 'poll'));
  if (!own || !target.ttyPath || !dialectOfProcess(readStat(target.shellPid)?.comm ?? '')?.rawLineEditor) return false;
  const modes = await readModes(target.ttyPath);
  return modes !== null && !modes.icanon && !modes.echo;
}

/**
 * One look at the foreground job: does it wait for the terminal, and with what proof?
 * Unknown is never "waiting"; the shell's own line editor never is (`shellEditing`).
 */
export async function probeWaiting(
  target: ProbeTarget,
  baseline: ProbeBaseline | null,
  quietMs: number,
  readModes: (tty: string) => Promise<TtyModes | null> = readTtyModes,
): Promise<WaitEvidence | null> {
  return (await probeLook(target, baseline, quietMs, readModes)).evidence;
}

export interface ProbeLook {
  evidence: WaitEvidence | null;
  /** A thread already reads the terminal and only the quiet period is short: it counts after this many ms more. */
  quietDueMs: number | null;
}

/** `probeWaiting`, also saying when a reader seen too soon after output would count. */
export async function probeLook(
  target: ProbeTarget,
  baseline: ProbeBaseline | null,
  quietMs: number,
  readModes: (tty: string) => Promise<TtyModes | null> = readTtyModes,
): Promise<ProbeLook> {
  if (target.procTier && target.source === 'ps' && target.ttyPath) return psLook(target.shellPid, target.ttyPath, quietMs, readModes);
  const sample = sampleFor(target);
  let quietDueMs: number | null = null;
  if (sample) {
    // Read fresh, not from a cache keyed by the foreground group: the shell's group is the same at its prompt and in a builtin `read`.
    const editing = await shellEditing(target, sample, readTtyModes);
    for (const thread of sample.threads) {
      if (!thread.watchesTty || !progressed(sample, thread.tid, thread.syscr, baseline)) continue;
      if (editing && thread.pid === target.shellPid) continue;
      const readQuiet = thread.pid === target.shellPid || isShellProcess(thread.pid) ? shellReadQuietMs : readQuietMs;
      if (thread.kind === 'read' && quietMs >= readQuiet) return { evidence: 'read', quietDueMs: null };
      if (thread.kind === 'poll' && quietMs >= pollQuietMs) return { evidence: 'poll', quietDueMs: null };
      const due = (thread.kind === 'read' ? readQuiet : thread.kind === 'poll' ? pollQuietMs : Infinity) - quietMs;
      if (due !== Infinity) quietDueMs = Math.min(quietDueMs ?? due, due);
    }
    if (sample.inspectable && sample.threads.some((thread) => thread.kind === 'read' || thread.kind === 'poll')) return { evidence: null, quietDueMs };
  }
  if (quietMs < echoOffQuietMs || !target.ttyPath) return { evidence: null, quietDueMs };
  // setuid prompts (sudo, ssh, gpg) deny /proc inspection; the terminal's own modes still show.
  const modes = await readModes(target.ttyPath);
  if (!modes || modes.echo || !modes.icanon) return { evidence: null, quietDueMs };
  return { evidence: foregroundSleeping(target.shellPid) ? 'echo_off' : null, quietDueMs };
}

/** Every process of the foreground group is asleep (stat is readable without ptrace access). */
function foregroundSleeping(shellPid: number): boolean {
  const shell = readStat(shellPid);
  if (!shell || shell.tpgid <= 0) return false;
  if (shell.tpgid === shell.pgrp) return shell.state === 'S';
  const leader = readStat(shell.tpgid);
  return leader !== null && leader.state === 'S';
}

/**
 * The same look from one `ps -t <tty>` (ps-source.ts), for hosts without /proc. A thread asleep
 * in a terminal read counts after the read quiet period; one asleep in select/poll/epoll only
 * with the terminal out of line mode (a program reading keys: REPLs, editors, wizards), since
 * ps cannot say which descriptors it watches and a silent download polls too. Where ps shows
 * no wait channel (macOS prints "-" for all), a foreground job asleep in full with the
 * terminal out of line mode counts as `poll`, and a line-mode read has no evidence at all.
 * ps counts no reads, so "it consumed the input" is the quiet period since the write: the
 * echo of a line comes from the same kernel step that wakes the reader, and a program's own
 * echo after it read. echo_off as on Linux.
 */
async function psLook(shellPid: number, tty: string, quietMs: number, readModes: (tty: string) => Promise<TtyModes | null>): Promise<ProbeLook> {
  const entries = await lookTty(tty);
  if (!entries) return { evidence: null, quietDueMs: null };
  let modes: Promise<TtyModes | null> | null = null;
  const fresh = () => (modes ??= readTtyModes(tty));
  // The echo_off rule's modes, cached per foreground group as the watcher's are (status-watcher.ts
  // cachedModes): keyed by the group this look saw, so no second ps asks for it.
  const tpgid = entries.find((e) => e.pid === shellPid)?.tpgid ?? -1;
  const echoModes = readModes === readTtyModes ? fresh : () => cachedEchoModes(tty, tpgid, fresh);
  return psEvidence(entries, shellPid, quietMs, fresh, echoModes);
}

const psModesMaxAgeMs = 5000;
const psModes = new Map<string, { key: number; at: number; modes: Promise<TtyModes | null> }>();
function cachedEchoModes(tty: string, tpgid: number, read: () => Promise<TtyModes | null>): Promise<TtyModes | null> {
  const now = performance.now();
  const hit = psModes.get(tty);
  if (hit && hit.key === tpgid && now - hit.at < psModesMaxAgeMs) return hit.modes;
  const modes = read();
  if (psModes.size > 256) psModes.clear();
  psModes.set(tty, { key: tpgid, at: now, modes });
  return modes;
}

/**
 * The ps look's verdict from its listing (`psLook`; unit-tested on fixtures). `modes` reads the
 * terminal's modes now; `echoModes` may be a cached read (the echo_off rule's, as on Linux).
 */
export async function psEvidence(
  entries: PsTtyEntry[],
  shellPid: number,
  quietMs: number,
  modes: () => Promise<TtyModes | null>,
  echoModes: () => Promise<TtyModes | null> = modes,
): Promise<ProbeLook> {
  const none: ProbeLook = { evidence: null, quietDueMs: null };
  const shell = entries.find((e) => e.pid === shellPid);
  if (!shell || shell.tpgid <= 0) return none;
  const members = entries.filter((e) => e.pgid === shell.tpgid);
  if (members.length === 0) return none;
  const classes = members.map((e) => (isSleeping(e.stat) ? classifyWchan(e.wchan) : 'awake'));
  let quietDueMs: number | null = null;
  const due = (ms: number) => (quietDueMs = Math.min(quietDueMs ?? ms, ms));

  if (classes.includes('read')) {
    const readers = members.filter((_, i) => classes[i] === 'read');
    const readQuiet = readers.every((e) => isShellName(e.comm)) ? shellReadQuietMs : readQuietMs;
    if (quietMs >= readQuiet) return { evidence: 'read', quietDueMs: null };
    due(readQuiet - quietMs);
  }
  // A poll on something, or (no wait channels at all: macOS) a job asleep in full.
  if (classes.includes('poll') || classes.every((c) => c === 'unknown')) {
    if (quietMs < pollQuietMs) due(pollQuietMs - quietMs);
    else {
      const now = await modes();
      if (now && !now.icanon) return { evidence: 'poll', quietDueMs: null };
    }
  }
  if (quietMs < echoOffQuietMs) return { evidence: null, quietDueMs };
  const current = await echoModes();
  if (!current || current.echo || !current.icanon) return { evidence: null, quietDueMs };
  return { evidence: leaderAsleep(entries, shell) ? 'echo_off' : null, quietDueMs };
}

/** The foreground group's leader (the shell when it is in front) sleeps. */
function leaderAsleep(entries: PsTtyEntry[], shell: PsTtyEntry): boolean {
  const leader = entries.find((e) => e.pid === shell.tpgid && e.tid === e.pid) ?? entries.find((e) => e.pid === shell.tpgid);
  return leader !== undefined && isSleeping(leader.stat);
}
