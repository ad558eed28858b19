/**
 * Interrupting and signalling the foreground program: Ctrl+C as a key, which the terminal turns
 * into SIGINT for the group in front while ISIG is on and a raw-mode program (ssh, an editor)
 * reads as a byte; SIGINT sent directly where the key would reach too much (a shell sharing its
 * parent's group), would drop input typed ahead, or missed the job it meant; escalating only if
 * nothing happened.
 */
import { TandemError } from '../../../shared/errors.js';
import type { SignalName } from '../../../shared/types.js';
import type { PtyPlatform } from '../../pty/platform.js';
import { type Clock, waitFor } from '../../clock.js';
import type { ReadinessState } from './readiness.js';

const interruptEscalateMs = 1000;
/** How many more escalation periods a key that went to the shell's own group watches for it moving on to a job. */
const shellFollowChecks = 10;
/** How long an interrupt waits for a just-submitted command's start marker. */
const interruptStartWaitMs = 5000;

export interface InterruptTarget {
  readonly pid: number;
  readonly platform: PtyPlatform;
  readonly clock: Clock;
  readonly ttyPath: string | null;
  readiness(): ReadinessState;
  /** Tells the readiness machine that the interrupt goes out now (a line not begun is cancelled by it). */
  interrupting(): void;
  write(data: string): Promise<void>;
  /** Whether the foreground program waits for input now. */
  probeNow(): Promise<unknown>;
  /**
   * Nothing was written since the running command's line was submitted (one line end since the
   * last prompt, and nothing after it): a Ctrl+C key, which makes the terminal drop the input it
   * holds, would drop nothing.
   */
  quietInput(): boolean;
  /** Closing or exited: nothing more is escalated. */
  gone(): boolean;
  onStateChange(listener: () => void): () => void;
}

export async function interrupt(target: InterruptTarget): Promise<void> {
  const { platform, pid } = target;
  // A Ctrl+C written before the shell took the line reaches its line editor (which drops it
  // or cancels the line) or waits in the input queue behind the command: wait for the start.
  if (submittedNotStarted(target.readiness())) {
    await waitFor(target.clock, { ms: interruptStartWaitMs, until: (met) => target.onStateChange(() => !submittedNotStarted(target.readiness()) && met()) });
  }
  target.interrupting();
  const fg = platform.foregroundGroup(pid);
  const shellPgrp = platform.shellGroup(pid);
  // The command to escalate against: the running one, or the one whose start is still due.
  const state = target.readiness();
  const phase = state.phase;
  const running = phase.kind === 'running';
  const seq = phase.kind !== 'running' ? null : phase.started ? phase.seq : state.lastStartSeq + 1;
  // A shell that runs its command itself while sharing its parent's group (pwsh inside
  // bubblewrap): the key would signal the whole group, bubblewrap too, which ends the terminal
  // where bubblewrap could not be started ignoring it (sandbox/launch.ts). The shell and its
  // own processes in that group (the dotnet tool's pwsh is a child) get it, when the modes say
  // the key would have been a signal.
  if (fg && fg === shellPgrp && shellPgrp !== pid) {
    const modes = target.ttyPath ? await platform.ttyModes(target.ttyPath) : null;
    if (modes?.isig) {
      platform.signalJob(pid, 'SIGINT');
      if (running) escalate(target, fg, seq, () => platform.signalJob(pid, 'SIGINT'));
      return;
    }
  }
  if (!fg || fg === shellPgrp) {
    // Raw-mode programs (editors, ssh) take Ctrl+C as a key and decide themselves.
    await target.write('\x03');
    // A command the shell runs itself (a pwsh cmdlet, a bash loop) gets the key once more if
    // nothing happened: pwsh drops a Ctrl+C that lands between its start marker and the start
    // of the pipeline, and there is no other process to signal.
    // Windows has no foreground group to check: the same command still running is the test.
    if (running && ((fg && fg === shellPgrp) || !platform.processGroups)) escalate(target, fg, seq, () => void target.write('\x03').catch(() => {}));
    return;
  }
  // A job in front. With nothing typed since its line was submitted, Ctrl+C goes as a key at
  // once: the terminal turns it into SIGINT for the group in front while ISIG is on (and drops
  // the output it still holds, as any terminal does) and passes it to a raw-mode program (ssh,
  // an editor) as a byte, so nothing waits for the modes first (on a main thread busy with a
  // flood their answer took 15 ms and more). They are read after the key, to choose the
  // escalation. The terminal also drops the input it holds with that SIGINT: where something
  // was typed ahead (the person's next line, an agent's second line), the modes come first and
  // SIGINT is sent to the group, which leaves that input for the shell.
  const program = platform.foregroundProgram(pid);
  if (target.quietInput()) {
    await target.write('\x03');
    if (!running) return;
    const modes = target.ttyPath ? await platform.ttyModes(target.ttyPath).catch(() => null) : null;
    // The key went to the group in front when the terminal took it: a loop of short jobs may
    // have another one in front by now, which the escalation follows.
    if (!modes || modes.isig) watchJob(target, fg, seq, program);
    return;
  }
  const modes = target.ttyPath ? await platform.ttyModes(target.ttyPath) : null;
  // Raw-mode programs take Ctrl+C as a key and decide themselves.
  if (modes && !modes.isig) return target.write('\x03');
  // Reading the modes took a while: a loop of short jobs may have a new one in front by now.
  const now = platform.foregroundGroup(pid);
  interruptJob(target, now !== null && now !== platform.shellGroup(pid) ? now : fg, seq);
}

/**
 * After SIGINT reached a job (as the key, or sent): SIGTERM a second later if nothing
 * happened. A signal that landed between the job's fork and its exec went to a child still
 * running the shell's code (bash's child has not restored the default handlers yet), and the
 * program it became never had it: if the group's program changed since `program` (read before
 * the signal), it gets SIGINT once more before any SIGTERM.
 */
function watchJob(target: InterruptTarget, fg: number, seq: number | null, program: string | null, again = true, follows = shellFollowChecks): void {
  const { platform, pid } = target;
  escalate(
    target,
    fg,
    seq,
    () => {
      if (again && platform.foregroundProgram(pid) !== program) return interruptJob(target, fg, seq, false, follows);
      platform.signalGroup(fg, 'SIGTERM');
    },
    follows,
  );
}

/** SIGINT sent to a job in a group of its own (one the key missed), watched as above. */
function interruptJob(target: InterruptTarget, fg: number, seq: number | null, again = true, follows = shellFollowChecks): void {
  const { platform, pid } = target;
  // Read before the signal: the program it makes the job exec must count as a change.
  const program = platform.foregroundProgram(pid);
  platform.signalGroup(fg, 'SIGINT');
  watchJob(target, fg, seq, program, again, follows);
}

function submittedNotStarted(state: ReadinessState): boolean {
  return state.phase.kind === 'running' && !state.phase.started;
}

/**
 * Escalates only if nothing happened: the same job still runs and has not gone back to
 * waiting for input (a REPL that caught SIGINT and prompts again is left alone).
 *
 * A key that went to the shell's own group can miss the job it meant: the shell had forked
 * it but it had not yet taken the terminal in its own group (zsh's child does that itself,
 * after the fork), or the shell caught the signal and went on to the next program. If the
 * same command now runs in a new foreground group, that group gets the SIGINT it never had,
 * escalated in turn like any job.
 */
function escalate(target: InterruptTarget, pgid: number | null, seq: number | null, then: () => void, follows = shellFollowChecks): void {
  const { platform, pid } = target;
  const shellPgrp = platform.shellGroup(pid);
  target.clock.setTimeout(async () => {
    if (target.gone()) return;
    const phase = target.readiness().phase;
    if (phase.kind !== 'running' || phase.seq !== seq) return;
    const fg = platform.foregroundGroup(pid);
    // The same command runs on with another job in front: the key went to the shell's group
    // before the job took the terminal, or the signalled job had already ended (a loop of short
    // jobs: `until …; do sleep 0.05; done`) and the next one never had it.
    const movedOn = pgid !== null && fg !== null && fg !== shellPgrp && fg !== pgid;
    // The signalled job is gone and the shell is in front, but the same command runs on: a loop
    // between two short jobs (the next one forks in a moment) or a shell finishing the command
    // (its end marker comes in a moment). Neither gets a key (it could cut the shell's prompt
    // hook short); the next look follows a new job if one took the terminal.
    if (pgid !== null && pgid !== shellPgrp && fg !== null && fg === shellPgrp) {
      if (follows > 0) escalate(target, pgid, seq, then, follows - 1);
      return;
    }
    if (pgid !== null && fg !== pgid && !movedOn) return;
    if (await target.probeNow()) return;
    if (movedOn) return follows > 0 ? interruptJob(target, fg, seq, true, follows - 1) : undefined;
    then();
    // The shell may still be busy with the key (a trap that takes its time on a loaded machine)
    // and go on to its next program later: that program is followed for a while, no key repeated.
    if (pgid !== null && pgid === shellPgrp && follows > 0) escalate(target, pgid, seq, () => undefined, follows - 1);
  }, interruptEscalateMs);
}

/** The key the terminal turns into each signal for its foreground group (while ISIG is on). */
const signalKeys: Partial<Record<SignalName, string>> = { SIGQUIT: '\x1c', SIGTSTP: '\x1a' };

/**
 * terminal_signal beyond SIGINT: to the foreground group, never SIGKILL to the shell. Where the
 * foreground group is unknown (no /proc and no answer from the platform's lookup), the shell is
 * not assumed to be in front: SIGQUIT and SIGTSTP go as their keys, which the terminal delivers
 * to whatever group is in front, and the others are refused rather than sent to the shell.
 */
export async function deliverSignal(target: Pick<InterruptTarget, 'pid' | 'platform' | 'write'>, name: Exclude<SignalName, 'SIGINT'>): Promise<void> {
  const { platform, pid } = target;
  if (!platform.processGroups) throw new TandemError('invalid_argument', `${name} cannot be delivered on Windows; only SIGINT (as Ctrl+C) is supported.`);
  const fg = platform.foregroundGroup(pid);
  if (fg === null) {
    const key = signalKeys[name];
    if (key) return target.write(key);
    throw new TandemError(
      'invalid_argument',
      `${name} cannot be delivered: this machine does not tell which job is in front of the terminal; interrupt it (SIGINT), or close the terminal.`,
    );
  }
  const shellPgrp = platform.shellGroup(pid);
  if (fg === shellPgrp) {
    if (name === 'SIGKILL') throw new TandemError('forbidden', 'SIGKILL of the shell itself is refused; close the terminal instead.');
    process.kill(pid, name);
    return;
  }
  platform.signalGroup(fg, name);
}
