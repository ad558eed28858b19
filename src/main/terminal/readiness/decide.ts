/**
 * The readiness machine's answers to a send and a wait (issue 25): whether the call may go
 * ahead, as what, and which end marker settles it. Pure, like `step()`: the session asks, then
 * writes, observes and probes as told.
 */
import type { ReadinessState } from './readiness.js';
import { commandBegun } from './readiness.js';

/** What a send is, or why it may not go ahead yet. */
export type SendDecision =
  /** The shell is still starting: refused `busy`. */
  | { kind: 'starting' }
  /** A command runs: the send is input only if the program waits for input now (a probe decides), else `busy`. */
  | { kind: 'probe' }
  | { kind: 'go'; mode: 'command' | 'input' };

/** `text`: the send types text (not only keys); `input`: the agent said it types into a running program. */
export function decideSend(state: ReadinessState, req: { text: boolean; input: boolean }): SendDecision {
  switch (state.phase.kind) {
    case 'starting':
      return { kind: 'starting' };
    case 'idle':
      return { kind: 'go', mode: req.text ? 'command' : 'input' };
    case 'running':
      return req.input ? { kind: 'go', mode: 'input' } : { kind: 'probe' };
    default:
      return { kind: 'go', mode: 'input' };
  }
}

export interface SendPlan {
  /** The shell's line editor holds the line (a prompt or a continuation prompt): clearing it first is safe. */
  atLine: boolean;
  /** The first end marker that can settle the send. */
  minEndSeq: number;
  /** Output is taken from the write on, not from a start marker (input, and shells without start markers). */
  collectFromWrite: boolean;
  /** Its reads need a proof that the program consumed the write: a probe baseline taken before it. */
  needsBaseline: boolean;
}

/** How a send of `mode` is observed in `state`; `backgroundReader`: the shell reads its line on another thread (pwsh). */
export function planSend(state: ReadinessState, mode: 'command' | 'input', backgroundReader: boolean): SendPlan {
  const { phase } = state;
  const endOnly = state.integration === 'end-only';
  const running = phase.kind === 'running' ? phase.seq : null;
  // Finishing a continued line is a command: its output starts at its start marker, after the
  // shell's redraw of the line.
  const completesLine = phase.kind === 'continuation' && !endOnly;
  return {
    atLine: phase.kind === 'idle' || phase.kind === 'continuation',
    minEndSeq: mode === 'input' && running !== null ? running : state.lastStartSeq + 1,
    collectFromWrite: (mode === 'input' && !completesLine) || endOnly,
    // After its own start marker a new command's reads are post-write by construction.
    needsBaseline: mode !== 'command' || endOnly || backgroundReader,
  };
}

/** What a wait with no end after its cursor follows. */
export type WaitDecision =
  | { kind: 'exited'; exitCode: number | null }
  | {
      kind: 'follow';
      /** The first end marker that settles it: the running command's, else the next command's. */
      minEndSeq: number;
      /** A command has begun: its output is collected (from its start marker if that came after the cursor). */
      begun: boolean;
      /** Output is collected now (a begun command, or a shell whose commands have no start marker). */
      collecting: boolean;
      /** At a continuation prompt: the shell waits for the rest of a line. */
      continuation: boolean;
    };

export function decideWait(state: ReadinessState): WaitDecision {
  const { phase } = state;
  if (phase.kind === 'exited') return { kind: 'exited', exitCode: phase.exitCode };
  const begun = commandBegun(state);
  return {
    kind: 'follow',
    minEndSeq: begun && phase.kind === 'running' && phase.seq !== null ? phase.seq : state.lastStartSeq + 1,
    begun,
    collecting: begun || state.integration !== 'full',
    continuation: phase.kind === 'continuation',
  };
}
