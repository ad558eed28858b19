import { readStat, sampleForeground, type ForegroundSample } from '../pty/proc.js';
import { readTtyModes, type TtyModes } from '../pty/termios.js';

/** Quiet periods (since the last output or input) before each kind of evidence counts. */
export const readQuietMs = 15;
export const pollQuietMs = 300;
export const echoOffQuietMs = 300;

export type WaitEvidence = 'read' | 'poll' | 'echo_off';

export interface ProbeTarget {
  shellPid: number;
  ttyPath: string | null;
  /** The /proc syscall tier; off without /proc, where ptrace-level access is denied, and in tests of the fallback. */
  procTier: boolean;
}

/** What a thread looked like before the write: the evidence must show the input was consumed. */
export interface ProbeBaseline {
  tpgid: number | null;
  syscr: Map<number, number | null>;
}

export function takeBaseline(target: ProbeTarget): ProbeBaseline {
  const sample = sampleFor(target);
  const syscr = new Map<number, number | null>();
  for (const thread of sample?.threads ?? []) syscr.set(thread.tid, thread.syscr);
  return { tpgid: sample?.tpgid ?? null, syscr };
}

function sampleFor(target: ProbeTarget): ForegroundSample | null {
  if (!target.procTier || !target.ttyPath) return null;
  return sampleForeground(target.shellPid, target.ttyPath);
}

function progressed(sample: ForegroundSample, tid: number, syscr: number | null, baseline: ProbeBaseline | null): boolean {
  if (!baseline) return true;
  if (sample.tpgid !== baseline.tpgid) return true;
  if (!baseline.syscr.has(tid)) return true;
  const before = baseline.syscr.get(tid);
  return syscr !== null && before !== null && before !== undefined && syscr > before;
}

/**
 * One look at the foreground job: does it wait for the terminal, and with what proof?
 * Unknown is never "waiting". `shellAtPrompt` excludes the shell's own line editor.
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
  const sample = sampleFor(target);
  let quietDueMs: number | null = null;
  if (sample) {
    for (const thread of sample.threads) {
      if (!thread.watchesTty || !progressed(sample, thread.tid, thread.syscr, baseline)) continue;
      if (thread.kind === 'read' && quietMs >= readQuietMs) return { evidence: 'read', quietDueMs: null };
      if (thread.kind === 'poll' && quietMs >= pollQuietMs) return { evidence: 'poll', quietDueMs: null };
      const due = (thread.kind === 'read' ? readQuietMs : thread.kind === 'poll' ? pollQuietMs : Infinity) - quietMs;
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
