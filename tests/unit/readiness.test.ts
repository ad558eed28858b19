import { describe, expect, it } from 'vitest';
import {
  type Candidate,
  commandBegun,
  hasExited,
  initialReadiness,
  type Integration,
  type ReadinessEffect,
  type ReadinessEvent,
  type ReadinessState,
  step,
} from '../../src/main/terminal/readiness/readiness.js';

/** Walks events from a state, returning the last state and every effect in order. */
function walk(state: ReadinessState, ...events: ReadinessEvent[]): { state: ReadinessState; effects: ReadinessEffect[] } {
  const effects: ReadinessEffect[] = [];
  for (const event of events) {
    const next = step(state, event);
    state = next.state;
    effects.push(...next.effects);
  }
  return { state, effects };
}

/** A shell at its prompt after startup (prompt number 0). */
function atPrompt(integration: Integration = 'full'): ReadinessState {
  return walk(initialReadiness(integration), { type: 'end', seq: 0, exitCode: 0, closing: false }).state;
}

const end = (seq: number, exitCode: number | null = 0, closing = false): ReadinessEvent => ({ type: 'end', seq, exitCode, closing });
const settles = (effects: ReadinessEffect[]) => effects.filter((effect) => effect.kind === 'settle');

describe('readiness: startup', () => {
  it('starts at `starting` and becomes idle on the first prompt, taking its number', () => {
    const start = initialReadiness('full');
    expect(start.phase).toEqual({ kind: 'starting' });
    const { state, effects } = step(start, end(7));
    expect(state).toMatchObject({ phase: { kind: 'idle' }, lastStartSeq: 7, lastEndSeq: 7 });
    expect(effects).toEqual([{ kind: 'startup-done' }, { kind: 'emit' }]);
  });

  it('numbers the first prompt 0 for shells without start markers (cmd)', () => {
    const { state } = step(initialReadiness('end-only'), end(41));
    expect(state).toMatchObject({ lastStartSeq: 0, lastEndSeq: 0 });
  });

  it('is idle at once without integration, and a person terminal whose integration never reports becomes plain', () => {
    expect(initialReadiness('none').phase).toEqual({ kind: 'idle' });
    const { state, effects } = step(initialReadiness('full'), { type: 'integration-timeout' });
    expect(state.phase).toEqual({ kind: 'idle' });
    expect(effects).toEqual([{ kind: 'integration-off' }, { kind: 'emit' }]);
    // Once ready, the deadline changes nothing.
    expect(step(atPrompt(), { type: 'integration-timeout' }).effects).toEqual([]);
  });

  it('reports a shell that exits during startup to the startup waiters', () => {
    const { state, effects } = walk(initialReadiness('full'), { type: 'pty-exit', exitCode: 2, signal: 0 }, { type: 'drained', closed: false });
    expect(state.phase).toEqual({ kind: 'exited', exitCode: 2, signal: 0 });
    expect(effects.map((effect) => effect.kind)).toEqual(['drain', 'stop-probe', 'settle', 'startup-failed', 'emit']);
  });
});

describe('readiness: a command', () => {
  it('write, start, end: submitted, begun, done with its exit code for observers up to it', () => {
    const written = step(atPrompt(), { type: 'write', command: true });
    expect(written.state.phase).toEqual({ kind: 'running', seq: null, started: false });
    expect(commandBegun(written.state)).toBe(false);
    const started = step(written.state, { type: 'start', seq: 1 });
    expect(started.state.phase).toEqual({ kind: 'running', seq: 1, started: true });
    expect(started.effects).toEqual([{ kind: 'record-start', seq: 1 }, { kind: 'collect', seq: 1 }, { kind: 'kick-probe' }, { kind: 'emit' }]);
    const ended = step(started.state, end(1, 3));
    expect(ended.state).toMatchObject({ phase: { kind: 'idle' }, lastStartSeq: 1, lastEndSeq: 1 });
    expect(ended.effects).toEqual([
      { kind: 'record-end', seq: 1 },
      { kind: 'settle', scope: { kind: 'through', seq: 1 }, status: 'done', evidence: 'marker', exitCode: 3, fromMarker: true },
      { kind: 'emit' },
    ]);
  });

  it('ignores a start marker of an earlier sequence (a replayed or stale marker)', () => {
    const running = walk(atPrompt(), { type: 'start', seq: 1 }, end(1), { type: 'start', seq: 2 }).state;
    expect(step(running, { type: 'start', seq: 2 })).toEqual({ state: running, effects: [] });
    expect(step(running, { type: 'start', seq: 1 })).toEqual({ state: running, effects: [] });
  });

  it('an end marker of an earlier sequence while a command runs ends nothing', () => {
    const running = walk(atPrompt(), { type: 'start', seq: 1 }, end(1), { type: 'start', seq: 2 }).state;
    const { state, effects } = step(running, end(1));
    expect(state.phase).toEqual({ kind: 'running', seq: 2, started: true });
    expect(settles(effects)).toEqual([]);
  });

  it('a real end during close is recorded but settles nobody: the exit does, with who closed', () => {
    const running = walk(atPrompt(), { type: 'start', seq: 1 }).state;
    const { effects } = step(running, end(1, 129, true));
    expect(effects).toEqual([{ kind: 'record-end', seq: 1 }, { kind: 'emit' }]);
  });
});

describe('readiness: prompts that run nothing', () => {
  it('an empty Enter reprints the prompt: idle, and it settles writes but not follows', () => {
    const { state, effects } = step(atPrompt(), end(0, 0));
    expect(state.phase).toEqual({ kind: 'idle' });
    expect(settles(effects)).toEqual([
      { kind: 'settle', scope: { kind: 'prompt', follows: false }, status: 'done', evidence: 'marker', exitCode: 0, fromMarker: false },
    ]);
  });

  it('a submitted line that ran nothing (a comment, Ctrl+C in the editor) settles follows too', () => {
    const { state, effects } = walk(atPrompt(), { type: 'write', command: true }, end(0, 130));
    expect(state.phase).toEqual({ kind: 'idle' });
    expect(settles(effects)).toEqual([
      { kind: 'settle', scope: { kind: 'prompt', follows: true }, status: 'done', evidence: 'marker', exitCode: 130, fromMarker: false },
    ]);
  });

  // pwsh (and zsh with the person's own INT trap) reprints the previous status when Ctrl+C
  // cancels the line in its editor: the line never ran, and the interrupt cancelled it.
  it('a submitted line the interrupt cancelled before its start says 130, whatever the prompt reprints', () => {
    const { state, effects } = walk(atPrompt(), { type: 'write', command: true }, { type: 'interrupt' }, end(0, 0));
    expect(state.phase).toEqual({ kind: 'idle' });
    expect(settles(effects)).toEqual([
      { kind: 'settle', scope: { kind: 'prompt', follows: true }, status: 'done', evidence: 'marker', exitCode: 130, fromMarker: false },
    ]);
  });

  it('an interrupt marks only a line not begun: a started command ends with its own status', () => {
    const begun = walk(atPrompt(), { type: 'write', command: true }, { type: 'start', seq: 1 }).state;
    expect(step(begun, { type: 'interrupt' })).toEqual({ state: begun, effects: [] });
    expect(step(atPrompt(), { type: 'interrupt' })).toEqual({ state: atPrompt(), effects: [] });
    // Interrupted before its start, then begun (the Ctrl+C waited in the input queue): the marker's status counts.
    const late = walk(atPrompt(), { type: 'write', command: true }, { type: 'interrupt' }, { type: 'start', seq: 1 }, end(1, 0));
    expect(settles(late.effects)).toEqual([
      { kind: 'settle', scope: { kind: 'through', seq: 1 }, status: 'done', evidence: 'marker', exitCode: 0, fromMarker: true },
    ]);
    // The next line, not interrupted, reprinting the status says what the prompt says.
    const next = walk(late.state, { type: 'write', command: true }, end(1, 0));
    expect(settles(next.effects)[0]).toMatchObject({ exitCode: 0 });
  });

  it('input to a running program (not a command) changes nothing', () => {
    const running = walk(atPrompt(), { type: 'start', seq: 1 }).state;
    expect(step(running, { type: 'write', command: false })).toEqual({ state: running, effects: [] });
  });
});

describe('readiness: continuation prompts', () => {
  it('a continuation settles every observer as waiting, and completing the line submits it', () => {
    const running = walk(atPrompt(), { type: 'write', command: true }, { type: 'start', seq: 1 }).state;
    const continued = step(running, { type: 'continuation' });
    expect(continued.state.phase).toEqual({ kind: 'continuation' });
    expect(continued.effects).toEqual([
      { kind: 'record-continuation' },
      { kind: 'settle', scope: { kind: 'all' }, status: 'waiting_input', evidence: 'continuation' },
      { kind: 'emit' },
    ]);
    const completed = step(continued.state, { type: 'write', command: false });
    expect(completed.state.phase).toEqual({ kind: 'running', seq: null, started: false });
  });

  it('Ctrl+C at a continuation prompt: the fresh prompt (same number) returns to idle', () => {
    const continued = walk(atPrompt(), { type: 'start', seq: 1 }, end(1), { type: 'continuation' }).state;
    const { state, effects } = step(continued, end(1, 130));
    expect(state.phase).toEqual({ kind: 'idle' });
    expect(settles(effects)).toHaveLength(1);
  });

  it('is ignored while starting or after exit', () => {
    const starting = initialReadiness('full');
    expect(step(starting, { type: 'continuation' })).toEqual({ state: starting, effects: [{ kind: 'emit' }] });
    const exited = walk(atPrompt(), { type: 'pty-exit', exitCode: 0, signal: 0 }, { type: 'drained', closed: false }).state;
    expect(step(exited, { type: 'continuation' }).state).toBe(exited);
  });
});

describe('readiness: shells with end markers only (cmd)', () => {
  it('a submitted command has begun at once, and every prompt ends it under the next number', () => {
    const submitted = step(atPrompt('end-only'), { type: 'write', command: true }).state;
    expect(submitted.phase).toEqual({ kind: 'running', seq: null, started: true });
    const { state, effects } = step(submitted, end(0, 1));
    expect(state).toMatchObject({ phase: { kind: 'idle' }, lastStartSeq: 1, lastEndSeq: 1 });
    expect(effects[0]).toEqual({ kind: 'record-end', seq: 1 });
    expect(settles(effects)[0]).toMatchObject({ scope: { kind: 'through', seq: 1 }, exitCode: 1 });
  });

  it('a prompt with nothing submitted counts the prompt and records no command', () => {
    const { state, effects } = step(atPrompt('end-only'), end(0));
    expect(state).toMatchObject({ phase: { kind: 'idle' }, lastEndSeq: 1 });
    expect(effects).toEqual([{ kind: 'emit' }]);
  });

  it('completing a continued line is no command: nothing to submit', () => {
    const state = walk(atPrompt('end-only'), { type: 'continuation' }).state;
    expect(step(state, { type: 'write', command: false }).state.phase).toEqual({ kind: 'continuation' });
  });
});

describe('readiness: probe evidence', () => {
  const running = () => walk(atPrompt(), { type: 'write', command: true }, { type: 'start', seq: 1 }).state;
  const look = (evidence: 'read' | 'poll' | null, sampledAt: number, offset: number, candidate: Candidate | null, awaitingReply = false): ReadinessEvent => ({
    type: 'evidence',
    evidence,
    sampledAt,
    offset,
    candidate,
    awaitingReply,
  });

  it('evidence before the write boundary (submitted, no start marker yet) is not taken', () => {
    const submitted = step(atPrompt(), { type: 'write', command: true }).state;
    expect(step(submitted, look('read', 10, 10, { evidence: 'read', offset: 10 })).effects).toEqual([]);
    expect(step(atPrompt(), look('read', 10, 10, null)).effects).toEqual([]);
  });

  it('takes waiting only on a second identical look with no output between', () => {
    const first = step(running(), look('read', 10, 10, null));
    expect(first.effects).toEqual([{ kind: 'candidate', value: { evidence: 'read', offset: 10 } }, { kind: 'probe-sooner' }]);
    const second = step(first.state, look('read', 10, 10, { evidence: 'read', offset: 10 }));
    expect(second.effects).toEqual([
      { kind: 'settle', scope: { kind: 'this' }, status: 'waiting_input', evidence: 'read' },
      { kind: 'adopt', evidence: 'read' },
    ]);
  });

  it('a program waiting for the terminal to answer its request (a cursor position) is not waiting for input', () => {
    const first = step(running(), look('read', 10, 10, null, true));
    expect(first.effects).toEqual([{ kind: 'candidate', value: null }]);
    const second = step(running(), look('read', 10, 10, { evidence: 'read', offset: 10 }, true));
    expect(second.effects).toEqual([{ kind: 'candidate', value: null }]);
  });

  it('output between the looks, output during the look, other evidence or none: start over', () => {
    const state = running();
    expect(step(state, look('read', 12, 12, { evidence: 'read', offset: 10 })).effects[0]).toEqual({
      kind: 'candidate',
      value: { evidence: 'read', offset: 12 },
    });
    expect(step(state, look('read', 10, 11, { evidence: 'read', offset: 10 })).effects).toEqual([{ kind: 'candidate', value: null }]);
    expect(step(state, look('poll', 10, 10, { evidence: 'read', offset: 10 })).effects[0]).toEqual({
      kind: 'candidate',
      value: { evidence: 'poll', offset: 10 },
    });
    expect(step(state, look(null, 10, 10, { evidence: 'read', offset: 10 })).effects).toEqual([{ kind: 'candidate', value: null }]);
  });

  it('exit while a probe is pending: the drain stops probing, settles all as exited, and later evidence is ignored', () => {
    const exiting = step(running(), { type: 'pty-exit', exitCode: 0, signal: 9 });
    expect(exiting.effects).toEqual([{ kind: 'drain' }]);
    expect(hasExited(exiting.state)).toBe(true);
    // Output still drains: markers in it still count until the drain ends.
    expect(exiting.state.phase.kind).toBe('running');
    const drained = step(exiting.state, { type: 'drained', closed: false });
    expect(drained.state.phase).toEqual({ kind: 'exited', exitCode: 137, signal: 9 });
    expect(drained.effects).toEqual([
      { kind: 'stop-probe' },
      { kind: 'settle', scope: { kind: 'all' }, status: 'exited', evidence: 'exit', exitCode: 137 },
      { kind: 'startup-failed' },
      { kind: 'emit' },
    ]);
    expect(step(drained.state, look('read', 10, 10, { evidence: 'read', offset: 10 })).effects).toEqual([]);
  });

  it('a closed shell claims no exit code', () => {
    const { state } = walk(running(), { type: 'pty-exit', exitCode: 0, signal: 1 }, { type: 'drained', closed: true });
    expect(state.phase).toEqual({ kind: 'exited', exitCode: null, signal: 1 });
  });
});

describe('readiness: handoff and bound', () => {
  it('a handoff settles its observer as human_handoff, the bound as still running; neither changes the phase', () => {
    const running = walk(atPrompt(), { type: 'start', seq: 1 }).state;
    const handoff = step(running, { type: 'handoff' });
    expect(handoff).toEqual({ state: running, effects: [{ kind: 'settle', scope: { kind: 'this' }, status: 'human_handoff', evidence: 'handoff' }] });
    const bound = step(running, { type: 'bound' });
    expect(bound).toEqual({ state: running, effects: [{ kind: 'settle', scope: { kind: 'this' }, status: 'running', evidence: 'bound' }] });
  });
});

describe('readiness: bash line reports', () => {
  it('a history line is recorded and changes no state', () => {
    const state = walk(atPrompt(), { type: 'start', seq: 1 }).state;
    expect(step(state, { type: 'line', seq: 1 })).toEqual({ state, effects: [{ kind: 'record-line', seq: 1 }, { kind: 'emit' }] });
  });
});
