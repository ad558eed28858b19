import { describe, expect, it } from 'vitest';
import { decideSend, decideWait, planSend } from '../../src/main/terminal/readiness/decide.js';
import { initialReadiness, type Integration, type ReadinessEvent, type ReadinessState, step } from '../../src/main/terminal/readiness/readiness.js';

/** The state after `events`, walked through the machine itself (no hand-built states). */
function after(integration: Integration, ...events: ReadinessEvent[]): ReadinessState {
  let state = initialReadiness(integration);
  for (const event of events) state = step(state, event).state;
  return state;
}

const end = (seq: number, exitCode: number | null = 0): ReadinessEvent => ({ type: 'end', seq, exitCode, closing: false });
const prompt = (integration: Integration = 'full') => after(integration, end(4));
const submitted = () => after('full', end(4), { type: 'write', command: true, submits: true });
const running = () => after('full', end(4), { type: 'write', command: true, submits: true }, { type: 'start', seq: 5 });

describe('decideSend', () => {
  it('refuses while the shell starts, whatever is sent', () => {
    expect(decideSend(initialReadiness('full'), { text: true, input: true })).toEqual({ kind: 'starting' });
  });

  it('text at the prompt is a command; keys alone are input to the line editor', () => {
    expect(decideSend(prompt(), { text: true, input: false })).toEqual({ kind: 'go', mode: 'command' });
    expect(decideSend(prompt(), { text: false, input: false })).toEqual({ kind: 'go', mode: 'input' });
  });

  it('while a command runs: input when the agent says so, else only if a probe shows the program waiting', () => {
    expect(decideSend(running(), { text: true, input: true })).toEqual({ kind: 'go', mode: 'input' });
    expect(decideSend(running(), { text: true, input: false })).toEqual({ kind: 'probe' });
    // A submitted line that has not begun is running too: a second command must not join it.
    expect(decideSend(submitted(), { text: true, input: false })).toEqual({ kind: 'probe' });
  });

  it('at a continuation prompt the send is the rest of the line', () => {
    const continued = after('full', end(4), { type: 'write', command: true, submits: true }, { type: 'continuation' });
    expect(continued.phase.kind).toBe('continuation');
    expect(decideSend(continued, { text: true, input: false })).toEqual({ kind: 'go', mode: 'input' });
  });
});

describe('planSend', () => {
  it("a command at the prompt: the next command's end settles it, its start marker begins its output", () => {
    expect(planSend(prompt(), 'command', false)).toEqual({ atLine: true, minEndSeq: 5, collectFromWrite: false, needsBaseline: false });
    // pwsh reads its line on another thread: even a command needs proof its line was read.
    expect(planSend(prompt(), 'command', true).needsBaseline).toBe(true);
  });

  it("input to a running command settles on that command's end and collects from the write", () => {
    expect(planSend(running(), 'input', false)).toEqual({ atLine: false, minEndSeq: 5, collectFromWrite: true, needsBaseline: true });
  });

  it('completing a continued line is observed as a command: output from its start marker', () => {
    const continued = after('full', end(4), { type: 'write', command: true, submits: true }, { type: 'continuation' });
    expect(planSend(continued, 'input', false)).toMatchObject({ atLine: true, collectFromWrite: false });
  });

  it('a shell with end markers only collects from the write and proves consumption', () => {
    const endOnly = prompt('end-only');
    expect(planSend(endOnly, 'command', false)).toMatchObject({ collectFromWrite: true, needsBaseline: true });
  });
});

describe('decideWait', () => {
  it('at the prompt it follows the next command and collects nothing yet', () => {
    expect(decideWait(prompt())).toEqual({ kind: 'follow', minEndSeq: 5, begun: false, collecting: false, continuation: false });
  });

  it("during a begun command it follows that command's end and collects", () => {
    expect(decideWait(running())).toEqual({ kind: 'follow', minEndSeq: 5, begun: true, collecting: true, continuation: false });
    // Submitted but not begun: not yet collecting (the line's echo is not output).
    expect(decideWait(submitted())).toMatchObject({ begun: false, collecting: false });
  });

  it('shells without start markers collect from the cursor', () => {
    expect(decideWait(prompt('end-only'))).toMatchObject({ collecting: true });
  });

  it('reports a continuation prompt and an exited shell', () => {
    const continued = after('full', end(4), { type: 'write', command: true, submits: true }, { type: 'continuation' });
    expect(decideWait(continued)).toMatchObject({ kind: 'follow', continuation: true });
    const exited = after('full', end(4), { type: 'pty-exit', exitCode: 3, signal: 0 }, { type: 'drained', closed: false });
    expect(decideWait(exited)).toEqual({ kind: 'exited', exitCode: 3 });
  });
});
