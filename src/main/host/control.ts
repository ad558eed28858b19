import type { Controller, HandoffInfo } from '../../shared/types.js';

/** The person's words on hand-back: a note for the agent, and whether their commands' output goes with it. */
export interface HandBackWords {
  note: string | null;
  shareOutput: boolean;
}

/** A handoff the agent asked for, until the agent has read how it ended. */
export interface HandoffState {
  requestId: string;
  state: Exclude<HandoffInfo['state'], 'returned'>;
  note: string | null;
}

/**
 * Who drives a terminal, as one value. `lease` is the person's input lease on a terminal an
 * agent drives (from takeover to hand-back): the output offset where it began, so the
 * hand-back summary starts there. `words` wait for the agent to read them once.
 */
export interface ControlState {
  controller: Controller;
  lease: { since: number } | null;
  handoff: HandoffState | null;
  words: HandBackWords | null;
}

export type ControlEvent =
  /** Input from the person's writing view; `typed` is keyboard, paste, IME or drop, never protocol replies. */
  | { type: 'input'; typed: boolean; offset: number }
  /** The person's takeover button. */
  | { type: 'take'; offset: number }
  | { type: 'hand_back'; words: HandBackWords }
  /** A person's terminal handed to an agent (`toAgent`) or taken back from it. */
  | { type: 'hand_to'; toAgent: boolean; offset: number }
  /** The agent asked the person to take over. */
  | { type: 'ask'; requestId: string }
  | { type: 'answer'; requestId: string; accept: boolean; note: string | null; offset: number }
  /** The asking call gave up (cancelled) before an answer. */
  | { type: 'withdraw'; requestId: string }
  /** The agent read how the handoff ended (a decline, or the hand-back): it is over. */
  | { type: 'settled' };

export type ControlEffect =
  /** Pass the person's input on to the shell. */
  | { type: 'write' }
  /** The controller changed: grant or release the person's lease in the op queue, tell listeners. */
  | { type: 'controller'; controller: Controller }
  /** Calls waiting on the handoff re-check it. */
  | { type: 'wake' }
  /** A request no longer asked: take it off the person's screen. */
  | { type: 'withdraw_request'; requestId: string };

export interface ControlStep {
  state: ControlState;
  effects: ControlEffect[];
}

export function initialControl(controller: Controller): ControlState {
  return { controller, lease: null, handoff: null, words: null };
}

function take(state: ControlState, offset: number, extra: ControlEffect[] = []): ControlStep {
  if (state.controller === 'user') return { state, effects: extra };
  const handoff = state.handoff?.state === 'pending' ? { ...state.handoff, state: 'accepted' as const } : state.handoff;
  return {
    state: { ...state, controller: 'user', lease: { since: offset }, handoff, words: null },
    effects: [{ type: 'controller', controller: 'user' }, { type: 'wake' }, ...extra],
  };
}

/** The one transition function of control, handoff and the person's lease: pure, no I/O, no time. */
export function stepControl(state: ControlState, event: ControlEvent): ControlStep {
  switch (event.type) {
    case 'input':
      if (state.controller === 'user') return { state, effects: [{ type: 'write' }] };
      // On an agent's terminal only typing takes over; the emulator's own replies are dropped.
      return event.typed ? take(state, event.offset, [{ type: 'write' }]) : { state, effects: [] };
    case 'take':
      return take(state, event.offset);
    case 'hand_back':
      if (state.controller === 'agent') return { state, effects: [] };
      return { state: { ...state, controller: 'agent', words: event.words }, effects: [{ type: 'controller', controller: 'agent' }, { type: 'wake' }] };
    case 'hand_to':
      if (event.toAgent) {
        if (state.controller === 'agent') return { state, effects: [] };
        return { state: { ...state, controller: 'agent', lease: null, words: null }, effects: [{ type: 'controller', controller: 'agent' }, { type: 'wake' }] };
      }
      return take(state, event.offset);
    case 'ask': {
      // One question per terminal: a new request replaces an unanswered one.
      const replaced: ControlEffect[] = state.handoff?.state === 'pending' ? [{ type: 'withdraw_request', requestId: state.handoff.requestId }] : [];
      return { state: { ...state, handoff: { requestId: event.requestId, state: 'pending', note: null } }, effects: replaced };
    }
    case 'answer':
      if (state.handoff?.requestId !== event.requestId || state.handoff.state !== 'pending') return { state, effects: [] };
      if (event.accept) return take(state, event.offset);
      return { state: { ...state, handoff: { ...state.handoff, state: 'declined', note: event.note } }, effects: [{ type: 'wake' }] };
    case 'withdraw':
      if (state.handoff?.requestId !== event.requestId) return { state, effects: [] };
      return { state: { ...state, handoff: null }, effects: [{ type: 'withdraw_request', requestId: event.requestId }] };
    case 'settled':
      return { state: { ...state, handoff: null, lease: state.controller === 'user' ? state.lease : null, words: null }, effects: [] };
  }
}
