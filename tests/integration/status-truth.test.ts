import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { gate } from '../support/gate.js';
import { until, waitFor } from '../support/until.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';

let f: AgentFixture;
let token: string;
beforeAll(async () => {
  f = await startAgentFixture();
  token = f.layer.pairAgent({ name: 'truth' }).token;
  f.layer.setAgentPolicy({ name: 'truth', policy: 'always' });
});
afterAll(async () => {
  await f.close();
});
afterEach(async () => {
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

type Listed = {
  id: string;
  status: string;
  agentConnected: boolean;
  lastCommand: { command: string | null; exitCode: number | null; finishedAt: string } | null;
};

async function listed(client: Client, id: string): Promise<Listed | undefined> {
  return ((await f.call(client, 'terminal_list')).terminals as Listed[]).find((t) => t.id === id);
}

/** Polls terminal_list until the terminal's status is `status`. */
async function statusBecomes(client: Client, id: string, status: string): Promise<void> {
  await waitFor(
    () => listed(client, id),
    (last) => last?.status === status,
  );
}

/** A probe that turns true once a terminal_wait on `id` waits in the terminal's session (so closing it now is what the wait sees). */
function waitArrives(id: string): () => boolean {
  const waits = vi.spyOn(f.host.get(id).session, 'wait');
  return () => waits.mock.calls.length > 0;
}

describe('terminal_list tells what sends tell', () => {
  it('shows waiting_input for a program blocked in read, poll or with echo off, without any send in flight', async () => {
    const a = await f.client(token);
    // The person's terminal, shared: nothing but the host's own watcher looks at it.
    const mine = await f.host.create({ title: 'person', shell: 'bash' });
    f.host.share(mine.id, true);
    const session = f.host.get(mine.id).session;
    // Every status the session passes through, as it changes: a short `running` is not missed
    // between two polls of terminal_list on a loaded machine.
    const seen: string[] = [];
    session.onStateChange(() => {
      if (seen.at(-1) !== session.status) seen.push(session.status);
    });
    const cases: Array<{ line: string; evidence: string }> = [
      { line: 'read answer', evidence: 'read' },
      { line: `python3 -c "import select,sys; select.select([sys.stdin],[],[])"`, evidence: 'poll' },
      { line: `sh -c 'stty -echo; sleep 30'`, evidence: 'echo_off' },
    ];
    for (const { line, evidence } of cases) {
      seen.length = 0;
      await session.write(`${line}\r`);
      await until(() => seen.includes('running'), `${evidence}: running`);
      await statusBecomes(a, mine.id, 'waiting_input');
      expect(f.host.get(mine.id).view().status, evidence).toBe('waiting_input');
      // Ctrl+C ends it: the watcher stops with the command, the prompt is idle again.
      await session.write('\x03');
      await statusBecomes(a, mine.id, 'idle');
      if (line.includes('stty')) await session.write('stty echo\r');
    }
  });

  it('agrees with the last send: waiting_input while input() waits, running after the answer until it waits again', async () => {
    const a = await f.client(token);
    const opened = await f.call(a, 'terminal_open', { title: 'input' });
    expect(opened, JSON.stringify(opened)).toHaveProperty('id');
    const { id } = opened as { id: string };
    // Between the two questions it sleeps until the test opens the gate: running, however loaded the machine.
    const g = gate(f.project);
    const between = `[time.sleep(0.05) for _ in iter(lambda: os.path.exists('${g.path}'), True)]`;
    const asked = await f.call(a, 'terminal_send', { id, text: `python3 -c "import os, time; input('name? '); ${between}; input('again? ')"` });
    expect(asked).toMatchObject({ status: 'waiting_input' });
    expect((await listed(a, id))?.status).toBe('waiting_input');
    const answered = await f.call(a, 'terminal_send', { id, text: 'ada', waitMs: 300 });
    expect(answered).toMatchObject({ status: 'running' });
    expect((await listed(a, id))?.status).toBe('running');
    g.open();
    await statusBecomes(a, id, 'waiting_input');
    g.dispose();
    expect(await f.call(a, 'terminal_send', { id, text: 'again' })).toMatchObject({ status: 'done', exitCode: 0 });
    expect(await listed(a, id)).toMatchObject({ status: 'idle', lastCommand: { exitCode: 0 } });
    // bash names a finished command from its history a fork after the end marker (README).
    await expect.poll(async () => (await listed(a, id))?.lastCommand?.command ?? '').toContain('python3');
  });
});

describe('agentConnected', () => {
  it('follows each agent’s live sessions, for its own terminals and those handed to it, with agents in parallel', async () => {
    // Fresh agents: earlier tests' sessions of `truth` are still connected.
    const [tokenA, tokenB] = ['truth-a', 'truth-b'].map((name) => {
      const paired = f.layer.pairAgent({ name }).token;
      f.layer.setAgentPolicy({ name, policy: 'always' });
      return paired;
    });
    const [a, b] = await Promise.all([f.client(tokenA!), f.client(tokenB!)]);
    const [ta, tb] = (await Promise.all([f.call(a, 'terminal_open', { title: 'a' }), f.call(b, 'terminal_open', { title: 'b' })])) as Array<{
      id: string;
      agentConnected: boolean;
    }>;
    expect(ta!.agentConnected).toBe(true);
    expect(tb!.agentConnected).toBe(true);
    const mine = await f.host.create({ title: 'handed', shell: 'bash' });
    expect(f.host.handToAgent(mine.id, 'truth-a')).toMatchObject({ agentConnected: true, handedTo: 'truth-a' });
    const connected = (id: string) => f.host.get(id).view().agentConnected;
    // Both agents work at once; the flags stay right throughout.
    await Promise.all([
      f.call(a, 'terminal_send', { id: ta!.id, text: 'sleep 0.3; echo a' }),
      f.call(b, 'terminal_send', { id: tb!.id, text: 'sleep 0.3; echo b' }),
      f.call(a, 'terminal_send', { id: mine.id, text: 'echo handed' }),
    ]);
    expect([connected(ta!.id), connected(tb!.id), connected(mine.id)]).toEqual([true, true, true]);
    await b.close();
    await expect.poll(() => connected(tb!.id)).toBe(false);
    expect([connected(ta!.id), connected(mine.id)]).toEqual([true, true]);
    await a.close();
    await expect.poll(() => connected(mine.id)).toBe(false);
    expect(connected(ta!.id)).toBe(false);
    // Handed to a paired agent that is not connected: not connected.
    f.layer.pairAgent({ name: 'nobody' });
    expect(f.host.handToAgent(mine.id, 'nobody')).toMatchObject({ agentConnected: false });
  });
});

describe('results say what happened', () => {
  it('a wait after a late approval carries the approved command and the approval', async () => {
    const tokenD = f.layer.pairAgent({ name: 'truth-ask' }).token;
    f.layer.setAgentPolicy({ name: 'truth-ask', policy: 'ask' });
    const d = await f.client(tokenD);
    const { id } = (await f.call(d, 'terminal_open', { title: 'ask' })) as { id: string };
    const pending = await f.call(d, 'terminal_send', { id, text: 'printf later-run', waitMs: 200 });
    expect(pending).toMatchObject({ status: 'awaiting_approval', approval: { state: 'pending' } });
    f.layer.answerApproval({ requestId: f.layer.state().approvals[0]!.id, decision: 'approve' });
    const later = await f.call(d, 'terminal_wait', { id, since: pending.cursor, waitMs: 55_000 });
    expect(later).toMatchObject({ status: 'done', output: 'later-run', command: 'printf later-run', approval: { state: 'approved' }, closedBy: null });
    // Reported once: the next wait is about what comes next.
    const next = await f.call(d, 'terminal_wait', { id, waitMs: 200 });
    expect(next).toMatchObject({ approval: null });
  });

  it('exited results say who closed the terminal, and a closed shell claims no exit code', async () => {
    const a = await f.client(token);
    const open = async () => ((await f.call(a, 'terminal_open', { title: 'closing' })) as { id: string }).id;

    const byPerson = await open();
    expect(await f.call(a, 'terminal_send', { id: byPerson, text: 'sleep 40', waitMs: 200 })).toMatchObject({ status: 'running' });
    const personWaitArrived = waitArrives(byPerson);
    const waiting = f.call(a, 'terminal_wait', { id: byPerson, waitMs: 55_000 });
    await until(personWaitArrived, 'the wait to arrive');
    await f.host.close(byPerson);
    expect(await waiting).toMatchObject({ status: 'exited', closedBy: 'person', exitCode: null });

    const byAgent = await open();
    expect(await f.call(a, 'terminal_send', { id: byAgent, text: 'sleep 40', waitMs: 200 })).toMatchObject({ status: 'running' });
    const b = await f.client(token);
    const agentWaitArrived = waitArrives(byAgent);
    const waitingToo = f.call(b, 'terminal_wait', { id: byAgent, waitMs: 55_000 });
    await until(agentWaitArrived, 'the wait to arrive');
    expect(await f.call(a, 'terminal_close', { id: byAgent })).toMatchObject({ closed: true });
    expect(await waitingToo).toMatchObject({ status: 'exited', closedBy: 'agent', exitCode: null });

    const byItself = await open();
    expect(await f.call(a, 'terminal_send', { id: byItself, text: 'exit 3' })).toMatchObject({ status: 'exited', closedBy: null, exitCode: 3 });
  });
});
