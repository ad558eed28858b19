/**
 * The readiness engine: what the shell is doing (starting, at its prompt, running a command,
 * at a continuation prompt, exited) as one state and one pure transition function. The
 * session feeds it what it sees (markers, writes, probe evidence, the PTY's exit) and carries
 * out the effects; nothing here touches a PTY, a timer or an observer.
 */
import type { Evidence, SendResult, TerminalStatus } from '../../../shared/types.js';
import type { WaitEvidence } from './probe.js';

export type Phase =
  | { kind: 'starting' }
  | { kind: 'idle' }
  /**
   * `started` is false between writing a command line and its start marker (submitted, not
   * begun); `interrupted` when an interrupt went to it in that time.
   */
  | { kind: 'running'; seq: number | null; started: boolean; interrupted?: true }
  | { kind: 'continuation' }
  | { kind: 'exited'; exitCode: number | null; signal: number | null };

export type Integration = 'full' | 'end-only' | 'none';

export interface ReadinessState {
  readonly integration: Integration;
  readonly phase: Phase;
  readonly lastStartSeq: number;
  readonly lastEndSeq: number;
  /** The PTY reported the shell's exit; its output drains before the phase becomes `exited`. */
  readonly ptyExit: { exitCode: number; signal: number } | null;
}

/** A look at the foreground job that showed it waiting, kept until a second look confirms it. */
export interface Candidate {
  evidence: WaitEvidence;
  offset: number;
}

export type ReadinessEvent =
  | { type: 'start'; seq: number }
  | { type: 'end'; seq: number; exitCode: number | null; closing: boolean }
  | { type: 'line'; seq: number }
  | { type: 'continuation' }
  /** A write: `command` when it submits a command line at the prompt. */
  /** `submits`: it carries an Enter (a write at a continuation prompt without one leaves the line unfinished). */
  | { type: 'write'; command: boolean; submits?: boolean }
  /**
   * One probe of one observer: what it saw, at which output offset, and the offset now.
   * `awaitingReply`: the program printed a request the terminal answers (a cursor position,
   * device attributes) and the emulator has not answered yet: it reads that answer, not a person's.
   */
  | { type: 'evidence'; evidence: WaitEvidence | null; sampledAt: number; offset: number; candidate: Candidate | null; awaitingReply?: boolean }
  | { type: 'pty-exit'; exitCode: number; signal: number }
  /** The exit's output is drained; `closed` when the terminal was closed rather than exiting by itself. */
  | { type: 'drained'; closed: boolean }
  /** A person's terminal whose integration never reported: it stays a plain terminal. */
  | { type: 'integration-timeout' }
  | { type: 'handoff' }
  | { type: 'bound' }
  /** An interrupt (Ctrl+C or SIGINT) is about to go to the terminal. */
  | { type: 'interrupt' };

/** Which observers a settle applies to. */
export type SettleScope =
  | { kind: 'all' }
  /** Observers whose command is this one or earlier: `minEndSeq <= seq`. */
  | { kind: 'through'; seq: number }
  /** A prompt with nothing running: every observer but follows, and follows too after a submitted line. */
  | { kind: 'prompt'; follows: boolean }
  /** The observer the event was about (a probe, its handoff, its bound). */
  | { kind: 'this' };

export type ReadinessEffect =
  | { kind: 'settle'; scope: SettleScope; status: SendResult['status']; evidence: Evidence; exitCode?: number | null; fromMarker?: boolean }
  /** Observers waiting for a command from `seq` on start collecting its output. */
  | { kind: 'collect'; seq: number }
  /** Record the marker in history and the last-command tracker (end markers with their numbering). */
  | { kind: 'record-start'; seq: number }
  | { kind: 'record-end'; seq: number }
  | { kind: 'record-line'; seq: number }
  | { kind: 'record-continuation' }
  | { kind: 'startup-done' }
  | { kind: 'startup-failed' }
  | { kind: 'integration-off' }
  | { kind: 'kick-probe' }
  /** Sample again soon: a first look saw waiting. */
  | { kind: 'probe-sooner' }
  | { kind: 'stop-probe' }
  | { kind: 'candidate'; value: Candidate | null }
  | { kind: 'adopt'; evidence: WaitEvidence }
  | { kind: 'drain' }
  | { kind: 'emit' };

export interface Step {
  state: ReadinessState;
  effects: ReadinessEffect[];
}

export function initialReadiness(integration: Integration): ReadinessState {
  return { integration, phase: integration === 'none' ? { kind: 'idle' } : { kind: 'starting' }, lastStartSeq: 0, lastEndSeq: -1, ptyExit: null };
}

/** A command is running and has begun (its start marker, or its write on a shell without one). */
export function commandBegun(state: ReadinessState): boolean {
  return state.phase.kind === 'running' && state.phase.started;
}

/** The shell is gone or going: nothing more may be written. */
export function hasExited(state: ReadinessState): boolean {
  return state.phase.kind === 'exited' || state.ptyExit !== null;
}

/** The status a terminal reports in this state; `waiting` is the status watcher's verdict on a running command. */
export function terminalStatus(state: ReadinessState, waiting: boolean): TerminalStatus {
  switch (state.phase.kind) {
    case 'starting':
      return 'starting';
    case 'idle':
      return 'idle';
    case 'exited':
      return 'exited';
    case 'continuation':
      return 'waiting_input';
    case 'running':
      return waiting ? 'waiting_input' : 'running';
  }
}

export function step(state: ReadinessState, event: ReadinessEvent): Step {
  switch (event.type) {
    case 'start':
      if (event.seq <= state.lastStartSeq) return { state, effects: [] };
      return {
        state: { ...state, lastStartSeq: event.seq, phase: { kind: 'running', seq: event.seq, started: true } },
        effects: [{ kind: 'record-start', seq: event.seq }, { kind: 'collect', seq: event.seq }, { kind: 'kick-probe' }, { kind: 'emit' }],
      };
    case 'end':
      return onEnd(state, event);
    case 'line':
      return { state, effects: [{ kind: 'record-line', seq: event.seq }, { kind: 'emit' }] };
    case 'continuation': {
      const kind = state.phase.kind;
      if (kind !== 'idle' && kind !== 'continuation' && kind !== 'running') return { state, effects: [{ kind: 'emit' }] };
      return {
        state: { ...state, phase: { kind: 'continuation' } },
        effects: [
          { kind: 'record-continuation' },
          { kind: 'settle', scope: { kind: 'all' }, status: 'waiting_input', evidence: 'continuation' },
          { kind: 'emit' },
        ],
      };
    }
    case 'write': {
      const endOnly = state.integration === 'end-only';
      // Finishing a continued line submits it like a command: a second command now gets `busy`.
      const completesLine = state.phase.kind === 'continuation' && !endOnly && event.submits !== false;
      if (!event.command && !completesLine) return { state, effects: [] };
      return { state: { ...state, phase: { kind: 'running', seq: null, started: endOnly } }, effects: [] };
    }
    case 'evidence':
      return onEvidence(state, event);
    case 'pty-exit':
      return { state: { ...state, ptyExit: { exitCode: event.exitCode, signal: event.signal } }, effects: [{ kind: 'drain' }] };
    case 'drained': {
      const info = state.ptyExit ?? { exitCode: null, signal: null };
      // A closed shell did not finish by itself: its status says nothing about what it ran.
      const exitCode = event.closed ? null : info.signal ? 128 + info.signal : info.exitCode;
      return {
        state: { ...state, phase: { kind: 'exited', exitCode, signal: info.signal } },
        effects: [
          { kind: 'stop-probe' },
          { kind: 'settle', scope: { kind: 'all' }, status: 'exited', evidence: 'exit', exitCode },
          { kind: 'startup-failed' },
          { kind: 'emit' },
        ],
      };
    }
    case 'integration-timeout':
      if (state.phase.kind !== 'starting') return { state, effects: [] };
      return { state: { ...state, phase: { kind: 'idle' } }, effects: [{ kind: 'integration-off' }, { kind: 'emit' }] };
    case 'handoff':
      return { state, effects: [{ kind: 'settle', scope: { kind: 'this' }, status: 'human_handoff', evidence: 'handoff' }] };
    case 'bound':
      // The wait bound ends the call, not the command: it keeps running.
      return { state, effects: [{ kind: 'settle', scope: { kind: 'this' }, status: 'running', evidence: 'bound' }] };
    case 'interrupt':
      // Only a line not begun yet is marked: its start marker (a new phase) clears the mark.
      if (state.phase.kind !== 'running' || state.phase.started) return { state, effects: [] };
      return { state: { ...state, phase: { ...state.phase, interrupted: true } }, effects: [] };
  }
}

function onEnd(state: ReadinessState, event: Extract<ReadinessEvent, { type: 'end' }>): Step {
  const endOnly = state.integration === 'end-only';
  const emit: ReadinessEffect = { kind: 'emit' };
  if (state.phase.kind === 'starting') {
    const seq = endOnly ? 0 : event.seq;
    return { state: { ...state, lastStartSeq: seq, lastEndSeq: seq, phase: { kind: 'idle' } }, effects: [{ kind: 'startup-done' }, emit] };
  }
  // Shells without start markers cannot all number their prompts (cmd): every prompt is new.
  const seq = endOnly ? state.lastEndSeq + 1 : event.seq;
  // An empty Enter reprints the prompt with the previous status: it ends nothing.
  const real = endOnly || (seq === state.lastStartSeq && seq > state.lastEndSeq);
  if (!real) {
    const nothingRuns = state.phase.kind !== 'running' || !state.phase.started;
    // A submitted line that never started (cancelled by Ctrl+C in the line editor) ends here too.
    const submitted = state.phase.kind === 'running' && !state.phase.started;
    const next = state.phase.kind === 'continuation' || nothingRuns ? { ...state, phase: { kind: 'idle' } as const } : state;
    // A fresh prompt with nothing running settles writes: a line that ran nothing (blank, a
    // comment), Ctrl+C at a continuation prompt, keys typed at the prompt; and waits for it.
    // A submitted line the interrupt cancelled in the line editor never ran: 130, as bash says
    // (pwsh, and zsh with the person's own INT trap, reprint the previous command's status).
    const cancelled = submitted && state.phase.kind === 'running' && state.phase.interrupted === true;
    const exitCode = cancelled ? 130 : event.exitCode;
    const effects: ReadinessEffect[] = nothingRuns
      ? [{ kind: 'settle', scope: { kind: 'prompt', follows: submitted }, status: 'done', evidence: 'marker', exitCode, fromMarker: false }, emit]
      : [emit];
    return { state: next, effects };
  }
  const ranCommand = endOnly ? state.phase.kind === 'running' : true;
  const next: ReadinessState = { ...state, lastEndSeq: seq, lastStartSeq: endOnly ? seq : state.lastStartSeq, phase: { kind: 'idle' } };
  if (!ranCommand) return { state: next, effects: [emit] };
  const effects: ReadinessEffect[] = [{ kind: 'record-end', seq }];
  // A command the closing teardown killed (SIGHUP: 129) did not finish: waits settle on the exit, with who closed it.
  if (!event.closing)
    effects.push({ kind: 'settle', scope: { kind: 'through', seq }, status: 'done', evidence: 'marker', exitCode: event.exitCode, fromMarker: true });
  effects.push(emit);
  return { state: next, effects };
}

function onEvidence(state: ReadinessState, event: Extract<ReadinessEvent, { type: 'evidence' }>): Step {
  // Before the start marker the shell's line editor may still be reading: nothing counts yet.
  if (!commandBegun(state)) return { state, effects: [] };
  if (!event.evidence || event.sampledAt !== event.offset || event.awaitingReply) return { state, effects: [{ kind: 'candidate', value: null }] };
  const candidate = event.candidate;
  // Confirm on a second look with no output in between: activity may race the sample.
  if (candidate && candidate.evidence === event.evidence && candidate.offset === event.offset) {
    return {
      state,
      effects: [
        { kind: 'settle', scope: { kind: 'this' }, status: 'waiting_input', evidence: event.evidence },
        { kind: 'adopt', evidence: event.evidence },
      ],
    };
  }
  return { state, effects: [{ kind: 'candidate', value: { evidence: event.evidence, offset: event.offset } }, { kind: 'probe-sooner' }] };
}
