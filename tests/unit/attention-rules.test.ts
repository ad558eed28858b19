/** When the person is called: the renderer's attention rules over roster states and a test clock. */
import { describe, expect, it } from 'vitest';
import type { TerminalView } from '../../src/shared/contract.js';
import {
  type AttentionInput,
  AttentionRules,
  commandLineWaitMs,
  commandShownMax,
  longCommandMs,
  shownCommand,
  unansweredAfterMs,
} from '../../src/renderer/src/lib/attention-rules.js';

function terminal(id: string, change: Partial<TerminalView> = {}): TerminalView {
  return {
    id,
    title: `t-${id}`,
    origin: 'agent',
    agent: 'codex',
    agentConnected: true,
    control: 'agent',
    shared: false,
    shell: 'bash',
    integration: true,
    pid: 1,
    cwd: '/tmp',
    cols: 80,
    rows: 24,
    status: 'idle',
    exitCode: null,
    handedTo: null,
    lastCommand: null,
    program: null,
    agentListening: false,
    sandbox: null,
    ...change,
  };
}

const noQuestions = { approvals: [], handoffs: [] };

function setup() {
  let now = 1000;
  const rules = new AttentionRules(() => now);
  const input = (terminals: TerminalView[], extra: Partial<AttentionInput> = {}): AttentionInput => ({
    terminals,
    questions: noQuestions,
    activeId: 'other',
    watching: true,
    ...extra,
  });
  return { rules, input, advance: (ms: number) => (now += ms) };
}

describe('attention rules', () => {
  it('calls for a new approval unless the person is looking at that terminal, and only once', () => {
    const { rules, input } = setup();
    rules.update(input([terminal('a')]));
    const approval = { id: 'q1', kind: 'command' as const, agent: 'codex', terminalId: 'a', title: 't-a', command: 'make deploy', env: [], why: null };
    const first = rules.update(input([terminal('a')], { questions: { approvals: [approval], handoffs: [] } }));
    expect(first.calls).toMatchObject([{ kind: 'approval', terminalId: 'a', title: 'codex asks to run a command' }]);
    expect(first.calls[0]!.body).toContain('make deploy');
    expect(rules.update(input([terminal('a')], { questions: { approvals: [approval], handoffs: [] } })).calls).toEqual([]);
    expect(rules.count({ questions: { approvals: [approval], handoffs: [] } })).toBe(1);

    const seen = { ...approval, id: 'q2' };
    expect(rules.update(input([terminal('a')], { activeId: 'a', questions: { approvals: [seen], handoffs: [] } })).calls).toEqual([]);
    // Another window or tab has the focus: the person does not see it.
    const hidden = { ...approval, id: 'q3' };
    expect(rules.update(input([terminal('a')], { activeId: 'a', watching: false, questions: { approvals: [hidden], handoffs: [] } })).calls).toHaveLength(1);
  });

  it('does not call for questions that were there before the first update (a reload)', () => {
    const { rules, input } = setup();
    const handoff = { id: 'h1', agent: 'codex', terminalId: 'a', title: 't-a', message: 'type the password' };
    expect(rules.update(input([terminal('a')], { questions: { approvals: [], handoffs: [handoff] } })).calls).toEqual([]);
    expect(rules.count({ questions: { approvals: [], handoffs: [handoff] } })).toBe(1);
  });

  it(`calls when an agent's program waits ${unansweredAfterMs} ms with no agent call waiting on it`, () => {
    const { rules, input, advance } = setup();
    rules.update(input([terminal('a')]));
    const waiting = terminal('a', { status: 'waiting_input', program: 'python3' });
    const start = rules.update(input([waiting]));
    expect(start.calls).toEqual([]);
    expect(start.wakeAt).toBe(1000 + unansweredAfterMs);
    advance(unansweredAfterMs - 1);
    expect(rules.update(input([waiting])).calls).toEqual([]);
    expect(rules.unanswered('a')).toBe(false);
    advance(1);
    expect(rules.update(input([waiting])).calls).toMatchObject([{ kind: 'input', terminalId: 'a' }]);
    expect(rules.unanswered('a')).toBe(true);
    expect(rules.count({ questions: noQuestions })).toBe(1);
    // The agent waits on it again: no longer the person's.
    rules.update(input([{ ...waiting, agentListening: true }]));
    expect(rules.unanswered('a')).toBe(false);
  });

  it('never calls while an agent call waits on the prompt, and at once when the agent is gone', () => {
    const { rules, input, advance } = setup();
    rules.update(input([terminal('a')]));
    const listened = terminal('a', { status: 'waiting_input', agentListening: true });
    rules.update(input([listened]));
    advance(unansweredAfterMs * 3);
    expect(rules.update(input([listened])).calls).toEqual([]);
    const gone = rules.update(input([{ ...listened, agentConnected: false }]));
    expect(gone.calls).toMatchObject([{ kind: 'input', body: expect.stringContaining('disconnected') }]);
  });

  it("does not call for the person's own terminals or one they control", () => {
    const { rules, input, advance } = setup();
    rules.update(input([]));
    const own = terminal('a', { origin: 'user', agent: null, status: 'waiting_input' });
    const held = terminal('b', { control: 'user', status: 'waiting_input' });
    rules.update(input([own, held]));
    advance(unansweredAfterMs);
    expect(rules.update(input([own, held])).calls).toEqual([]);
  });

  it(`calls when a command of ${longCommandMs / 1000} s or more finishes in a background tab, whichever order the end and status come in`, () => {
    const { rules, input, advance } = setup();
    rules.update(input([terminal('a', { origin: 'user' })]));
    rules.update(input([terminal('a', { origin: 'user', status: 'running' })]));
    advance(longCommandMs);
    rules.update(input([terminal('a', { origin: 'user', status: 'idle' })]));
    advance(3000);
    const done = rules.update(input([terminal('a', { origin: 'user', lastCommand: { command: 'make', exitCode: 2, finishedAt: 'x1' } })]));
    // The notification names the command and whether it failed, with its exit code.
    expect(done.calls).toMatchObject([{ kind: 'finished', terminalId: 'a', title: '✗ make failed (exit 2)', body: 'in t-a, after 10 s' }]);

    // A short one does not call; nor one the person watches.
    rules.update(input([terminal('a', { origin: 'user', status: 'running', lastCommand: { command: 'make', exitCode: 2, finishedAt: 'x1' } })]));
    advance(longCommandMs - 1);
    expect(rules.update(input([terminal('a', { origin: 'user', lastCommand: { command: 'ls', exitCode: 0, finishedAt: 'x2' } })])).calls).toEqual([]);
    rules.update(input([terminal('a', { origin: 'user', status: 'running' })], { activeId: 'a' }));
    advance(longCommandMs);
    expect(
      rules.update(input([terminal('a', { origin: 'user', lastCommand: { command: 'sleep 20', exitCode: 0, finishedAt: 'x3' } })], { activeId: 'a' })).calls,
    ).toEqual([]);
  });

  it('waits for the line of a command that ended unnamed (bash names it after its end), and calls unnamed when none comes', () => {
    const { rules, input, advance } = setup();
    const user = (change: Partial<TerminalView>) => terminal('a', { origin: 'user', ...change });
    rules.update(input([user({})]));
    rules.update(input([user({ status: 'running' })]));
    advance(longCommandMs);
    // The roster that carries the end before the line calls nobody yet, and says when to look again.
    const ended = rules.update(input([user({ lastCommand: { command: null, exitCode: 3, finishedAt: 'z1' } })]));
    expect(ended.calls).toEqual([]);
    expect(ended.wakeAt).toBe(1000 + longCommandMs + commandLineWaitMs);
    advance(50);
    const named = rules.update(input([user({ lastCommand: { command: 'sleep 12; (exit 3)', exitCode: 3, finishedAt: 'z1' } })]));
    expect(named.calls).toEqual([{ kind: 'finished', terminalId: 'a', title: '✗ sleep 12; (exit 3) failed (exit 3)', body: 'in t-a, after 10 s' }]);
    expect(rules.update(input([user({ lastCommand: { command: 'sleep 12; (exit 3)', exitCode: 3, finishedAt: 'z1' } })])).calls).toEqual([]);

    // No line comes (a command bash kept no history line for): the call goes out unnamed when the wait runs out.
    rules.update(input([user({ status: 'running', lastCommand: { command: 'sleep 12; (exit 3)', exitCode: 3, finishedAt: 'z1' } })]));
    advance(longCommandMs);
    expect(rules.update(input([user({ lastCommand: { command: null, exitCode: 0, finishedAt: 'z2' } })])).calls).toEqual([]);
    advance(commandLineWaitMs - 1);
    expect(rules.update(input([user({ lastCommand: { command: null, exitCode: 0, finishedAt: 'z2' } })])).calls).toEqual([]);
    advance(1);
    expect(rules.update(input([user({ lastCommand: { command: null, exitCode: 0, finishedAt: 'z2' } })])).calls).toMatchObject([
      { title: '✓ The command finished', body: 'in t-a, after 10 s' },
    ]);

    // A later command ends while one is held: the held one goes out as it is, the later one is judged on its own.
    rules.update(input([user({ status: 'running', lastCommand: { command: null, exitCode: 0, finishedAt: 'z2' } })]));
    advance(longCommandMs);
    expect(rules.update(input([user({ lastCommand: { command: null, exitCode: 1, finishedAt: 'z3' } })])).calls).toEqual([]);
    expect(rules.update(input([user({ lastCommand: { command: 'ls', exitCode: 0, finishedAt: 'z4' } })])).calls).toMatchObject([
      { title: '✗ The command failed (exit 1)' },
    ]);
  });

  it('names a long command that succeeded, and shortens a long command line to its first line', () => {
    const { rules, input, advance } = setup();
    rules.update(input([terminal('a', { origin: 'user' })]));
    rules.update(input([terminal('a', { origin: 'user', status: 'running' })]));
    advance(longCommandMs);
    const ok = rules.update(input([terminal('a', { origin: 'user', lastCommand: { command: 'npm test', exitCode: 0, finishedAt: 'y1' } })]));
    expect(ok.calls).toMatchObject([{ kind: 'finished', title: '✓ npm test finished' }]);
    rules.update(input([terminal('a', { origin: 'user', status: 'running', lastCommand: { command: 'npm test', exitCode: 0, finishedAt: 'y1' } })]));
    advance(longCommandMs);
    const long = `for x in ${'a '.repeat(100)}; do\n echo $x\ndone`;
    const called = rules.update(input([terminal('a', { origin: 'user', lastCommand: { command: long, exitCode: null, finishedAt: 'y2' } })])).calls;
    expect(called[0]!.title.length).toBeLessThanOrEqual(commandShownMax + ' finished'.length);
    expect(called[0]!.title).toMatch(/^for x in a a .*… finished$/);
    expect(shownCommand(null)).toBe('The command');
  });

  it('calls for a pairing request once, even while the person watches, and counts it', () => {
    const { rules, input } = setup();
    const pairing = { id: 'p1', name: 'gemini', pid: 4242, exe: '/usr/bin/gemini', cwd: '/tmp/project', at: 'x', nameInUse: false };
    rules.update(input([terminal('a')]));
    const questions = { approvals: [], handoffs: [], pairings: [pairing] };
    expect(rules.update(input([terminal('a')], { activeId: 'a', questions })).calls).toEqual([
      { kind: 'pairing', terminalId: null, title: 'gemini asks to pair with Tandem', body: '/usr/bin/gemini (pid 4242)\nin /tmp/project' },
    ]);
    expect(rules.update(input([terminal('a')], { questions })).calls).toEqual([]);
    expect(rules.count({ questions })).toBe(1);
    // One there before the first update (a reload) is counted, not called.
    const fresh = setup();
    expect(fresh.rules.update(fresh.input([], { questions })).calls).toEqual([]);
    expect(fresh.rules.count({ questions })).toBe(1);
  });
});
