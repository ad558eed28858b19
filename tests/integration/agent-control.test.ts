import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { gate } from '../support/gate.js';
import { until } from '../support/until.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';

// The host's control machine and op queue through the public doors: MCP tools for the agent,
// the host's input, takeover and hand-back (what the UI transports call) for the person.
let f: AgentFixture;
let token: string;
beforeAll(async () => {
  f = await startAgentFixture();
  token = f.layer.pairAgent({ name: 'ctl' }).token;
});
afterAll(async () => {
  await f.close();
});
afterEach(async () => {
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

/** Resolves once the person's command `command` has finished in terminal `id`. */
async function personRan(id: string, command: string): Promise<void> {
  await until(() => f.host.get(id).view().lastCommand?.command === command, `the person's ${command}`);
}

async function attachAsPerson(id: string): Promise<string> {
  const { attachment } = await f.host.attach(id, 'person-ui', { frame: () => undefined, closed: () => undefined, writable: () => undefined });
  return attachment.id;
}

describe('the op queue under takeover', () => {
  it("the person's keystrokes reach the program while the agent's operation runs; that operation settles human_handoff", async () => {
    f.layer.setAgentPolicy({ name: 'ctl', policy: 'always' });
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'keys-first' })) as { id: string };
    // The gate holds the agent's turn (as long as the test needs, however loaded the machine):
    // the person's input must not queue behind it. go-42 says the shell runs the line, the tty echoing.
    const g = gate(f.project);
    const sending = f.call(client, 'terminal_send', {
      id,
      text: `printf 'go-%s\\n' $((6*7)); until [ -e ${g.path} ]; do sleep 0.05; done; head -n1`,
      waitMs: 55_000,
    });
    await until(() => f.host.get(id).session.screen.text.includes('go-42'), 'the agent command to start');
    const view = await attachAsPerson(id);
    await f.host.input(view, 'typed-by-person\r', true);
    expect(await sending).toMatchObject({ status: 'human_handoff', evidence: 'handoff', control: 'user' });
    // The person's screen (the agent's terminal_read keeps what they do from it: handoff-privacy.test.ts).
    const screen = () => f.host.get(id).session.screen.text.match(/typed-by-person/g)?.length ?? 0;
    // Echoed by the tty while the agent's command still runs (the echo reaches the screen a moment
    // after the input), then read by head once the gate opens.
    await expect.poll(screen).toBe(1);
    expect(f.host.get(id).ops.status).toBe('running');
    g.open();
    await expect.poll(screen).toBe(2);
    g.dispose();
    expect(JSON.stringify(await f.call(client, 'terminal_read', { id }))).not.toContain('typed-by-person');
    expect(await f.call(client, 'terminal_send', { id, text: 'echo no', input: true })).toMatchObject({ isError: true, error: { code: 'user_control' } });
    // Nor does the agent close it from under the person (black-box round 17): it stays, theirs.
    expect(await f.call(client, 'terminal_close', { id })).toMatchObject({ isError: true, error: { code: 'user_control' } });
    expect(f.host.get(id).meta.control).toBe('user');
    expect(f.host.get(id).ops.status).not.toBe('exited');
  });

  it('a command approved after the person took over never runs', async () => {
    f.layer.setAgentPolicy({ name: 'ctl', policy: 'ask' });
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'late-approval' })) as { id: string };
    const marker = join(f.home, 'late-approved');
    const pending = await f.call(client, 'terminal_send', { id, text: `touch ${marker}`, waitMs: 200 });
    expect(pending).toMatchObject({ status: 'awaiting_approval' });
    const view = await attachAsPerson(id);
    await f.host.input(view, 'true\r', true);
    expect(f.host.get(id).meta.control).toBe('user');
    f.layer.answerApproval({ requestId: f.layer.state().approvals[0]!.id, decision: 'approve' });
    // Not a guessed sleep: once the person's next command has run, the shell ran everything
    // typed before it, so a touch let through would have run by then.
    await f.host.input(view, 'echo sync-$((2*3))\r', true);
    await personRan(id, 'echo sync-$((2*3))');
    expect(existsSync(marker)).toBe(false);
    // Handed back, the agent drives again and the queue is free: nothing was left holding it.
    f.host.handBack(id);
    f.layer.setAgentPolicy({ name: 'ctl', policy: 'always' });
    expect(await f.call(client, 'terminal_send', { id, text: 'echo free' })).toMatchObject({ status: 'done', output: 'free' });
    expect(existsSync(marker)).toBe(false);
  });

  it("text the agent left unsubmitted at the prompt never runs with the person's first line (black-box round 9)", async () => {
    f.layer.setAgentPolicy({ name: 'ctl', policy: 'ask-unless-allowed' });
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'pretyped' })) as { id: string };
    const marker = join(f.home, 'pretyped-ran');
    // Typed without submit: no question (it is judged when the agent submits it).
    expect(await f.call(client, 'terminal_send', { id, text: `touch ${marker}; `, submit: false, waitMs: 300 })).not.toHaveProperty('isError');
    expect(f.layer.state().approvals).toEqual([]);
    await until(
      () => f.host.get(id).session.screen.text.includes('pretyped-ran;'),
      `the fragment on the line: ${JSON.stringify(f.host.get(id).session.screen.text)}`,
    );
    // The person takes over by typing their own command, as the agent's handoff asked.
    const view = await attachAsPerson(id);
    await f.host.input(view, 'echo mine-$((3*4))\r', true);
    await personRan(id, 'echo mine-$((3*4))');
    expect(f.host.get(id).session.screen.text).toMatch(/^mine-12$/m);
    expect(existsSync(marker)).toBe(false);
  });

  it('the hand-back summary covers what the person ran from the takeover on, even before the agent waited', async () => {
    f.layer.setAgentPolicy({ name: 'ctl', policy: 'always' });
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'early-lease' })) as { id: string };
    const view = await attachAsPerson(id);
    // The takeover keystrokes are the person's first command.
    await f.host.input(view, 'echo before-the-wait; false\r', true);
    await personRan(id, 'echo before-the-wait; false');
    // The wait waits for the hand-back once it registers a wake listener.
    const wakes = vi.spyOn(f.host.get(id).control, 'onWake');
    const waiting = f.call(client, 'terminal_wait', { id, waitMs: 55_000 });
    await until(() => wakes.mock.calls.length > 0, 'terminal_wait to wait for the hand-back');
    f.host.handBack(id, { note: 'all yours' });
    const back = await waiting;
    expect(back).toMatchObject({ status: 'done', evidence: 'handoff', control: 'agent', handoff: { state: 'returned', note: 'all yours' } });
    expect((back.handoff as { summary: string }).summary).toMatch(/echo before-the-wait; false → exit 1/);
  });

  it("names the person's command in the summary when the hand-back comes between bash's exit code and its line", async () => {
    f.layer.setAgentPolicy({ name: 'ctl', policy: 'always' });
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'late-line' })) as { id: string };
    const view = await attachAsPerson(id);
    // bash sends the exit code, then reads the line from history in a subshell and sends it. A
    // DEBUG trap holds that subshell until the gate opens, so the hand-back lands in between.
    const g = gate(f.project);
    await f.host.input(view, `trap '[[ $BASH_COMMAND == __tandem_h=* ]] && until [ -e ${g.path} ]; do sleep 0.05; done' DEBUG; set -T\r`, true);
    const session = f.host.get(id).session;
    await until(() => session.commandsSince(0).length === 1, 'the trap line to end');
    g.open();
    await until(() => session.commandsSince(0)[0]?.command?.startsWith('trap ') === true, 'its line');
    rmSync(g.path);
    await f.host.input(view, 'true held-line\r', true);
    // Ended, and its line held back: the window this test is about.
    await until(() => session.commandsSince(0).length === 2 && session.status === 'idle', 'the exit code of true held-line');
    expect(session.commandsSince(0)[1]).toMatchObject({ command: null, exitCode: 0 });
    const wakes = vi.spyOn(f.host.get(id).control, 'onWake');
    const waiting = f.call(client, 'terminal_wait', { id, waitMs: 55_000 });
    await until(() => wakes.mock.calls.length > 0, 'terminal_wait to wait for the hand-back');
    f.host.handBack(id);
    g.open();
    const back = await waiting;
    g.dispose();
    expect(back).toMatchObject({ status: 'done', command: 'true held-line', exitCode: 0, handoff: { state: 'returned' } });
    expect((back.handoff as { summary: string }).summary).toMatch(/^true held-line → exit 0$/m);
  });
});
