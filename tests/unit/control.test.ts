import { describe, expect, it } from 'vitest';
import { type ControlState, initialControl, stepControl } from '../../src/main/host/control.js';
import type { ManagedTerminal } from '../../src/main/host/managed-terminal.js';
import { TerminalControl } from '../../src/main/host/terminal-control.js';
import { TerminalOps } from '../../src/main/host/terminal-ops.js';
import type { AgentWrite } from '../../src/main/host/terminal-port.js';
import { ManualClock } from '../support/manual-clock.js';

const agentDriven = initialControl('agent');
const words = { note: 'done, go on', shareOutput: true };

function asked(requestId = 'r1'): ControlState {
  return stepControl(agentDriven, { type: 'ask', requestId }).state;
}

describe('stepControl: input', () => {
  it("writes the person's input on a terminal they control, changing nothing", () => {
    const state = initialControl('user');
    expect(stepControl(state, { type: 'input', typed: true, offset: 5 })).toEqual({ state, effects: [{ type: 'write' }] });
    expect(stepControl(state, { type: 'input', typed: false, offset: 5 })).toEqual({ state, effects: [{ type: 'write' }] });
  });

  it("drops the emulator's own replies on an agent's terminal: no takeover, no write", () => {
    expect(stepControl(agentDriven, { type: 'input', typed: false, offset: 5 })).toEqual({ state: agentDriven, effects: [] });
  });

  it('typing takes over at once: the lease starts at the offset, then the keystroke is written', () => {
    const { state, effects } = stepControl(agentDriven, { type: 'input', typed: true, offset: 42 });
    expect(state).toEqual({ controller: 'user', lease: { since: 42 }, handoff: null, words: null });
    expect(effects).toEqual([{ type: 'controller', controller: 'user' }, { type: 'wake' }, { type: 'write' }]);
  });
});

describe('stepControl: takeover and hand-back', () => {
  it('the takeover button grants the lease; a second one changes nothing', () => {
    const taken = stepControl(agentDriven, { type: 'take', offset: 7 });
    expect(taken.state).toMatchObject({ controller: 'user', lease: { since: 7 } });
    expect(taken.effects).toEqual([{ type: 'controller', controller: 'user' }, { type: 'wake' }]);
    expect(stepControl(taken.state, { type: 'take', offset: 99 })).toEqual({ state: taken.state, effects: [] });
  });

  it('hand-back returns control with the words; the lease stays for the summary until settled', () => {
    const taken = stepControl(agentDriven, { type: 'take', offset: 7 }).state;
    const back = stepControl(taken, { type: 'hand_back', words });
    expect(back.state).toEqual({ controller: 'agent', lease: { since: 7 }, handoff: null, words });
    expect(back.effects).toEqual([{ type: 'controller', controller: 'agent' }, { type: 'wake' }]);
    expect(stepControl(back.state, { type: 'settled' }).state).toEqual(agentDriven);
  });

  it('hand-back while the agent already drives is nothing', () => {
    expect(stepControl(agentDriven, { type: 'hand_back', words })).toEqual({ state: agentDriven, effects: [] });
  });

  it("a new takeover forgets the previous hand-back's unread words", () => {
    const back = stepControl(stepControl(agentDriven, { type: 'take', offset: 1 }).state, { type: 'hand_back', words }).state;
    expect(stepControl(back, { type: 'take', offset: 9 }).state).toEqual({ controller: 'user', lease: { since: 9 }, handoff: null, words: null });
  });

  it("a person's terminal handed to an agent and taken back", () => {
    const mine = initialControl('user');
    const handed = stepControl(mine, { type: 'hand_to', toAgent: true, offset: 3 });
    expect(handed.state).toEqual({ controller: 'agent', lease: null, handoff: null, words: null });
    expect(handed.effects).toEqual([{ type: 'controller', controller: 'agent' }, { type: 'wake' }]);
    expect(stepControl(handed.state, { type: 'hand_to', toAgent: true, offset: 4 }).effects).toEqual([]);
    const back = stepControl(handed.state, { type: 'hand_to', toAgent: false, offset: 8 });
    expect(back.state).toMatchObject({ controller: 'user', lease: { since: 8 } });
    expect(stepControl(back.state, { type: 'hand_to', toAgent: false, offset: 9 }).effects).toEqual([]);
  });
});

describe('stepControl: handoff requests', () => {
  it('asking opens a pending handoff; asking again withdraws the unanswered one', () => {
    const first = asked('r1');
    expect(first.handoff).toEqual({ requestId: 'r1', state: 'pending', note: null });
    const second = stepControl(first, { type: 'ask', requestId: 'r2' });
    expect(second.state.handoff).toEqual({ requestId: 'r2', state: 'pending', note: null });
    expect(second.effects).toEqual([{ type: 'withdraw_request', requestId: 'r1' }]);
  });

  it('accepted: the person holds the lease from the answer', () => {
    const { state, effects } = stepControl(asked(), { type: 'answer', requestId: 'r1', accept: true, note: null, offset: 11 });
    expect(state).toEqual({ controller: 'user', lease: { since: 11 }, handoff: { requestId: 'r1', state: 'accepted', note: null }, words: null });
    expect(effects).toEqual([{ type: 'controller', controller: 'user' }, { type: 'wake' }]);
  });

  it('declined: the agent keeps control and gets the note; settling clears it', () => {
    const { state, effects } = stepControl(asked(), { type: 'answer', requestId: 'r1', accept: false, note: 'not now', offset: 11 });
    expect(state).toEqual({ controller: 'agent', lease: null, handoff: { requestId: 'r1', state: 'declined', note: 'not now' }, words: null });
    expect(effects).toEqual([{ type: 'wake' }]);
    expect(stepControl(state, { type: 'settled' }).state).toEqual(agentDriven);
  });

  it('typing during a pending request accepts it', () => {
    expect(stepControl(asked(), { type: 'input', typed: true, offset: 2 }).state.handoff).toEqual({ requestId: 'r1', state: 'accepted', note: null });
  });

  it('an answer to a replaced or already settled request changes nothing', () => {
    const second = stepControl(asked('r1'), { type: 'ask', requestId: 'r2' }).state;
    expect(stepControl(second, { type: 'answer', requestId: 'r1', accept: true, note: null, offset: 0 })).toEqual({ state: second, effects: [] });
    const typed = stepControl(second, { type: 'input', typed: true, offset: 2 }).state;
    expect(stepControl(typed, { type: 'answer', requestId: 'r2', accept: false, note: 'late', offset: 3 })).toEqual({ state: typed, effects: [] });
  });

  it('a withdrawn request leaves no handoff behind; a stale withdraw is ignored', () => {
    const state = asked('r1');
    expect(stepControl(state, { type: 'withdraw', requestId: 'r1' })).toEqual({ state: agentDriven, effects: [{ type: 'withdraw_request', requestId: 'r1' }] });
    expect(stepControl(state, { type: 'withdraw', requestId: 'r0' })).toEqual({ state, effects: [] });
  });

  it('settling while the person still holds control keeps the lease', () => {
    const taken = stepControl(asked(), { type: 'answer', requestId: 'r1', accept: true, note: null, offset: 5 }).state;
    expect(stepControl(taken, { type: 'settled' }).state).toEqual({ controller: 'user', lease: { since: 5 }, handoff: null, words: null });
  });
});

describe('TerminalControl: the effects at the edge', () => {
  it("grants and releases the person's lease in the op queue with the controller", () => {
    const seen: string[] = [];
    const control = new TerminalControl('agent', 8, (controller) => seen.push(controller));
    expect(control.queue.leaseHeld).toBe(false);
    control.dispatch({ type: 'take', offset: 0 });
    expect(control.queue.leaseHeld).toBe(true);
    control.dispatch({ type: 'hand_back', words });
    expect(control.queue.leaseHeld).toBe(false);
    expect(seen).toEqual(['user', 'agent']);
    expect(new TerminalControl('user', 8, () => undefined).queue.leaseHeld).toBe(true);
  });

  it('wakes its waiters and fires the takeover signal', () => {
    const control = new TerminalControl('agent', 8, () => undefined);
    let wakes = 0;
    const off = control.onWake(() => wakes++);
    const takeover = control.takeoverSignal();
    control.dispatch({ type: 'ask', requestId: 'r1' });
    expect(wakes).toBe(0);
    control.dispatch({ type: 'answer', requestId: 'r1', accept: false, note: null, offset: 0 });
    expect(wakes).toBe(1);
    expect(takeover.signal.aborted).toBe(false);
    control.dispatch({ type: 'input', typed: true, offset: 0 });
    expect(takeover.signal.aborted).toBe(true);
    expect(wakes).toBe(2);
    off();
    takeover.dispose();
    control.dispatch({ type: 'hand_back', words });
    expect(wakes).toBe(2);
  });
});

describe('TerminalPort.write: the host holds the turn, with a bounded wait for the queue', () => {
  // A write that types nothing needs only the terminal's control; the fake stands in for the rest
  // of a ManagedTerminal, which such a write never touches (`prepare` returns null: no session call).
  function portWith(control: TerminalControl, clock: ManualClock): TerminalOps {
    return new TerminalOps({ control } as unknown as ManagedTerminal, clock);
  }

  /** A write that holds its turn until `release` is called, then types nothing. */
  function holding(port: TerminalOps, owner: string, ms: number, signal?: AbortSignal) {
    let release!: () => void;
    let began = false;
    const done = port.write(owner, { ms, signal }, () => {
      began = true;
      return new Promise<AgentWrite | null>((resolve) => (release = () => resolve(null)));
    });
    return { done, began: () => began, release: () => release() };
  }

  it('fails busy when the bound passes first, and the operation never runs', async () => {
    const clock = new ManualClock();
    const control = new TerminalControl('agent', 8, () => undefined);
    const port = portWith(control, clock);
    const running = holding(port, 'a', 1000);
    await Promise.resolve();
    expect(running.began()).toBe(true);
    const waiting = holding(port, 'b', 100);
    const failed = expect(waiting.done).rejects.toMatchObject({ code: 'busy' });
    await clock.advance(100);
    await failed;
    expect(waiting.began()).toBe(false);
    expect(control.queue.holds('b')).toBe(false);
    running.release();
    expect(await running.done).toBeNull();
    // The turn went back once the write ended: the next one gets it at once, and gives it back.
    let held = false;
    expect(await port.write('c', { ms: 100 }, async () => ((held = control.queue.holds('c')), null))).toBeNull();
    expect(held).toBe(true);
    expect(control.queue.holds('c')).toBe(false);
    expect(clock.pending).toBe(0);
  });

  it("rejects with the caller's reason when it gives up, and user_control when it reaches the head under the lease", async () => {
    const clock = new ManualClock();
    const control = new TerminalControl('agent', 8, () => undefined);
    const port = portWith(control, clock);
    const running = holding(port, 'a', 1000);
    await Promise.resolve();
    const caller = new AbortController();
    const cancelled = holding(port, 'b', 10_000, caller.signal);
    caller.abort(new Error('client cancelled'));
    await expect(cancelled.done).rejects.toThrow('client cancelled');
    const queued = holding(port, 'c', 10_000);
    control.dispatch({ type: 'take', offset: 0 });
    running.release();
    await running.done;
    await expect(queued.done).rejects.toMatchObject({ code: 'user_control' });
    expect(cancelled.began() || queued.began()).toBe(false);
    expect(control.queue.size).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('gives the turn back when what to type throws', async () => {
    const clock = new ManualClock();
    const control = new TerminalControl('agent', 8, () => undefined);
    const port = portWith(control, clock);
    await expect(
      port.write('a', { ms: 100 }, async () => {
        throw new Error('the line changed');
      }),
    ).rejects.toThrow('the line changed');
    expect(control.queue.holds('a')).toBe(false);
    expect(control.queue.size).toBe(0);
  });
});
