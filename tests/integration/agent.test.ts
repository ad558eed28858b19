import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { gate } from '../support/gate.js';
import { until } from '../support/until.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { ERROR_CODES } from '../../src/shared/errors.js';

let f: AgentFixture;
let token: string;
beforeAll(async () => {
  f = await startAgentFixture();
  token = f.layer.pairAgent({ name: 'alpha' }).token;
  f.layer.setAgentPolicy({ name: 'alpha', policy: 'always' });
});
afterAll(async () => {
  await f.close();
});
// Agents may run 8 terminals on a host: each test starts from none.
afterEach(async () => {
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

describe('MCP over HTTP', () => {
  it('lists the contract tools', async () => {
    const client = await f.client(token);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'terminal_close',
      'terminal_handoff',
      'terminal_list',
      'terminal_open',
      'terminal_read',
      'terminal_send',
      'terminal_signal',
      'terminal_wait',
    ]);
  });

  it('opens a terminal, runs commands, and closes it', async () => {
    const client = await f.client(token);
    const opened = await f.call(client, 'terminal_open', { title: 'build' });
    expect(opened).toMatchObject({ origin: 'agent', agent: 'alpha', control: 'agent', integration: true, status: 'idle', cwd: f.project });
    const id = opened.id as string;
    expect(await f.call(client, 'terminal_send', { id, text: 'echo hi' })).toMatchObject({
      status: 'done',
      evidence: 'marker',
      exitCode: 0,
      output: 'hi',
      control: 'agent',
    });
    expect(await f.call(client, 'terminal_send', { id, text: 'false' })).toMatchObject({ status: 'done', exitCode: 1 });
    const list = await f.call(client, 'terminal_list');
    expect((list.terminals as Array<{ id: string }>).map((t) => t.id)).toContain(id);
    expect(await f.call(client, 'terminal_close', { id })).toEqual({ closed: true, orphans: [] });
  });

  it('answers malformed calls with invalid_argument naming the field', async () => {
    const client = await f.client(token);
    const r = await f.call(client, 'terminal_send', { id: 42 });
    expect(r).toMatchObject({ isError: true, error: { code: 'invalid_argument' } });
    expect((r.error as { message: string }).message).toMatch(/^id:/);
    expect(await f.call(client, 'terminal_list')).toHaveProperty('terminals');
  });

  it('refuses a terminal title that reorders or hides how it reads, and opens nothing', async () => {
    const client = await f.client(token);
    const before = f.host.list().length;
    for (const title of ['build \u202edliub', 'ok\u200b(approved)', 'a\x1b[31mred', 'two\nlines']) {
      const r = await f.call(client, 'terminal_open', { title });
      expect(r, JSON.stringify(title)).toMatchObject({ isError: true, error: { code: 'invalid_argument' } });
      expect((r.error as { message: string }).message).toMatch(/^title:/);
    }
    expect(f.host.list()).toHaveLength(before);
  });

  // Found black-box (round 4): the handoff card drew a message's right-to-left override and escapes as sent.
  it('refuses a handoff message that reorders how it reads or carries escapes, and asks the person nothing', async () => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'handoff-text' })) as { id: string };
    for (const message of ['Tandem: session expired \u202e drowssap retne', 'press \x1b]0;x\x07 enter', 'ok\u2066hidden\u2069']) {
      const r = await f.call(client, 'terminal_handoff', { id, message, waitMs: 0 });
      expect(r, JSON.stringify(message)).toMatchObject({ isError: true, error: { code: 'invalid_argument' } });
      expect((r.error as { message: string }).message).toMatch(/^message: .* at position \d+/);
    }
    expect(f.layer.state().handoffs).toEqual([]);
    // A message on several lines, as an agent writes one, still asks.
    const asked = f.call(client, 'terminal_handoff', { id, message: 'Please log in:\n\tthen hand back', waitMs: 0 });
    expect(await asked).not.toHaveProperty('isError');
  });

  it('refuses a wrong token', async () => {
    await expect(f.client('tdm_wrong')).rejects.toThrow(/401|not valid/);
  });
});

describe('send semantics', () => {
  it('answers a multi-round input() twice and quits less with keys', async () => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'py' })) as { id: string };
    const q = await f.call(client, 'terminal_send', { id, text: `python3 -c 'for i in range(2): print("got", input(f"q{i}? "))'` });
    expect(q).toMatchObject({ status: 'waiting_input', evidence: 'read', output: 'q0?' });
    expect(await f.call(client, 'terminal_send', { id, text: 'one' })).toMatchObject({ status: 'waiting_input', output: 'got one\nq1?' });
    expect(await f.call(client, 'terminal_send', { id, text: 'two' })).toMatchObject({ status: 'done', exitCode: 0, output: 'got two' });
    const less = await f.call(client, 'terminal_send', { id, text: 'seq 1 500 | less' });
    expect(less).toMatchObject({ status: 'waiting_input' });
    expect(await f.call(client, 'terminal_send', { id, keys: ['q'] })).toMatchObject({ status: 'done', exitCode: 0 });
  });

  it('reports busy for a second command while one runs, then input: true types into it', async () => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'busy' })) as { id: string };
    const g = gate(f.project);
    // `go` is output after the send's cursor, so the wait needs no proof that the read began after
    // it (which a loaded machine could reverse): see Known limitations.
    const r = await f.call(client, 'terminal_send', {
      id,
      text: `until [ -e ${g.path} ]; do sleep 0.05; done; echo go; read -t 60 x; echo "x=$x"`,
      waitMs: 200,
    });
    expect(r.status).toBe('running');
    expect(await f.call(client, 'terminal_send', { id, text: 'echo no' })).toMatchObject({ isError: true, error: { code: 'busy' } });
    g.open();
    const done = await f.call(client, 'terminal_wait', { id, since: r.cursor, waitMs: 55_000 });
    // `read -t` waits in select with a timeout: poll evidence.
    expect(done).toMatchObject({ status: 'waiting_input', evidence: 'poll' });
    expect(await f.call(client, 'terminal_send', { id, text: 'typed' })).toMatchObject({ status: 'done', output: 'x=typed' });
    g.dispose();
  });

  it('refuses oversize input and unknown ids with contract codes', async () => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'limits' })) as { id: string };
    expect(await f.call(client, 'terminal_send', { id, text: `echo ${'x'.repeat(70_000)}` })).toMatchObject({
      isError: true,
      error: { code: 'input_too_large' },
    });
    expect(await f.call(client, 'terminal_send', { id: 'nope', text: 'ls' })).toMatchObject({ isError: true, error: { code: 'not_found' } });
    expect(await f.call(client, 'terminal_open', { title: 'x', shell: 'no-such-shell' })).toMatchObject({ isError: true, error: { code: 'shell_not_found' } });
    expect(await f.call(client, 'terminal_open', { title: 'x', shell: 'cat' })).toMatchObject({ isError: true, error: { code: 'shell_unsupported' } });
    expect(await f.call(client, 'terminal_signal', { id, signal: 'SIGKILL' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    await f.call(client, 'terminal_send', { id, text: 'exit 4' });
    expect(await f.call(client, 'terminal_send', { id, text: 'ls' })).toMatchObject({ isError: true, error: { code: 'exited' } });
  });

  it('interrupts a long command with terminal_signal', async () => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'sig' })) as { id: string };
    expect((await f.call(client, 'terminal_send', { id, text: 'sleep 100', waitMs: 200 })).status).toBe('running');
    expect(await f.call(client, 'terminal_signal', { id, signal: 'SIGINT' })).toMatchObject({ status: 'done', exitCode: 130 });
  });

  it('reads the screen', async () => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'read' })) as { id: string };
    await f.call(client, 'terminal_send', { id, text: 'printf "alpha\\nbeta\\n"' });
    const read = await f.call(client, 'terminal_read', { id });
    expect(read.text).toContain('alpha\nbeta');
    expect(read).toMatchObject({ status: 'idle', screen: { altScreen: false } });
  });
});

describe('isolation, sharing and capacity', () => {
  it('keeps two agents apart', async () => {
    const tokenB = f.layer.pairAgent({ name: 'beta' }).token;
    f.layer.setAgentPolicy({ name: 'beta', policy: 'always' });
    const a = await f.client(token);
    const b = await f.client(tokenB);
    const ta = (await f.call(a, 'terminal_open', { title: 'a1' })) as { id: string };
    const tb = (await f.call(b, 'terminal_open', { title: 'b1' })) as { id: string };
    const listB = (await f.call(b, 'terminal_list')).terminals as Array<{ id: string }>;
    expect(listB.map((t) => t.id)).toContain(tb.id);
    expect(listB.map((t) => t.id)).not.toContain(ta.id);
    expect(await f.call(b, 'terminal_send', { id: ta.id, text: 'echo x' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    expect(await f.call(b, 'terminal_read', { id: ta.id })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
  });

  it('honours share (read only) and hand-to-agent (control), and their revocation', async () => {
    const a = await f.client(token);
    const mine = await f.host.create({ title: 'person', shell: 'bash' });
    expect(await f.call(a, 'terminal_read', { id: mine.id })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    f.host.share(mine.id, true);
    expect(await f.call(a, 'terminal_read', { id: mine.id })).toHaveProperty('text');
    expect(await f.call(a, 'terminal_send', { id: mine.id, text: 'echo x' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    f.host.share(mine.id, false);
    f.host.handToAgent(mine.id, 'alpha');
    expect(await f.call(a, 'terminal_send', { id: mine.id, text: 'echo handed' })).toMatchObject({ status: 'done', output: 'handed' });
    expect(await f.call(a, 'terminal_close', { id: mine.id })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    f.host.handToAgent(mine.id, null);
    expect(await f.call(a, 'terminal_send', { id: mine.id, text: 'echo x' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    await f.host.close(mine.id);
  });

  it('asks before an unconfined terminal opens outside its project: there allow-listed reads would need no question', async () => {
    // Black-box round s40: `terminal_open { cwd: "~" }` opened with no card, and an allow-listed
    // `cat ~/.pgpass` then ran without asking (the workspace was the whole home).
    writeFileSync(join(f.home, '.pgpass'), 'localhost:5432:*:me:SECRET-PGPASS\n');
    const free = f.layer.pairAgent({ name: 'unboxed' }).token;
    f.layer.setAgentPolicy({ name: 'unboxed', policy: 'ask-unless-allowed', sandbox: 'off' });
    const client = await f.client(free);
    const before = f.host.list().length;
    for (const cwd of [f.home, '/']) {
      const opening = f.call(client, 'terminal_open', { title: 'wide', cwd });
      await until(() => f.layer.state().approvals.some((q) => q.kind === 'open'), 'the open question');
      const question = f.layer.state().approvals.find((q) => q.kind === 'open')!;
      expect(question.why).toMatch(/where allowed commands read without asking/);
      expect(question.command).toContain('no sandbox');
      f.layer.answerApproval({ requestId: question.id, decision: 'reject' });
      expect(await opening).toMatchObject({ isError: true, error: { code: 'rejected' } });
    }
    expect(f.host.list().length).toBe(before);
    // In its project it opens at once, and a read of the home's file there asks.
    const { id } = (await f.call(client, 'terminal_open', { title: 'here' })) as { id: string };
    expect(await f.call(client, 'terminal_send', { id, text: `cat ${join(f.home, '.pgpass')}`, waitMs: 2000 })).toMatchObject({ status: 'awaiting_approval' });
    expect(JSON.stringify(f.host.get(id).session.outputSince(0))).not.toContain('SECRET-PGPASS');
    await f.call(client, 'terminal_close', { id });
  });

  it('caps running terminals per agent', async () => {
    const tokenC = f.layer.pairAgent({ name: 'gamma' }).token;
    const c = await f.client(tokenC);
    for (let i = 0; i < 4; i++) expect(await f.call(c, 'terminal_open', { title: `c${i}` })).toHaveProperty('id');
    expect(await f.call(c, 'terminal_open', { title: 'c5' })).toMatchObject({ isError: true, error: { code: 'capacity' } });
    for (const t of (await f.call(c, 'terminal_list')).terminals as Array<{ id: string }>) await f.call(c, 'terminal_close', { id: t.id });
  });
});

describe('control and handoff', () => {
  async function attachAsPerson(id: string) {
    const { attachment } = await f.host.attach(id, 'person-ui', { frame: () => undefined, closed: () => undefined, writable: () => undefined });
    return attachment.id;
  }

  it('takeover during a long command settles with human_handoff; hand back reports a summary', async () => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'takeover' })) as { id: string };
    // The command runs until the test is done with it (a gate, not a sleep the machine could outlast).
    const g = gate(f.project);
    const sending = f.call(client, 'terminal_send', { id, text: `until [ -e ${g.path} ]; do sleep 0.05; done`, waitMs: 55_000 });
    const terminal = f.host.get(id);
    await until(() => terminal.session.status === 'running', 'the agent command to run');
    const view = await attachAsPerson(id);
    await f.host.input(view, '\x03', true);
    const settled = await sending;
    expect(settled).toMatchObject({ status: 'human_handoff', evidence: 'handoff', control: 'user' });
    // The loop ends by the key or, where bash took the key for the program's own (a key that
    // lands as `sleep` is forked: bash's wait-and-cooperative-exit then goes on with the loop,
    // as it would in any terminal), by the gate; the person types at the next prompt.
    g.open();
    await until(
      () => terminal.session.status === 'idle',
      () => `the prompt after the takeover; the terminal printed ${JSON.stringify(terminal.session.outputSince(0).slice(-2000))}`,
    );
    g.dispose();
    expect(await f.call(client, 'terminal_send', { id, text: 'echo no' })).toMatchObject({ isError: true, error: { code: 'user_control' } });
    // The wait must be waiting for the hand-back before it comes: it registers a wake listener.
    const wakes = vi.spyOn(terminal.control, 'onWake');
    const waiting = f.call(client, 'terminal_wait', { id, waitMs: 55_000 });
    await until(() => wakes.mock.calls.length > 0, 'terminal_wait to wait for the hand-back');
    await f.host.input(view, 'echo by-person; false\r', true);
    await until(
      () => terminal.view().lastCommand?.command === 'echo by-person; false',
      () =>
        `the person's command to finish; last command ${JSON.stringify(terminal.view().lastCommand)}, the terminal printed ${JSON.stringify(terminal.session.outputSince(0).slice(-2000))}`,
    );
    f.host.handBack(id);
    const back = await waiting;
    expect(back).toMatchObject({ status: 'done', evidence: 'handoff', control: 'agent', exitCode: 1, handoff: { state: 'returned' } });
    expect((back.handoff as { summary: string }).summary).toMatch(/echo by-person; false → exit 1/);
    expect(await f.call(client, 'terminal_send', { id, text: 'echo mine-again' })).toMatchObject({ status: 'done', output: 'mine-again' });
  });

  it('terminal_handoff: declined, then accepted and returned', async () => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'handoff' })) as { id: string };
    const declined = f.call(client, 'terminal_handoff', { id, message: 'please log in', waitMs: 55_000 });
    await until(() => f.layer.state().handoffs.length === 1, 'the handoff request');
    const [request] = f.layer.state().handoffs;
    expect(request).toMatchObject({ agent: 'alpha', terminalId: id, message: 'please log in' });
    f.layer.answerHandoff({ requestId: request!.id, accept: false });
    expect(await declined).toMatchObject({ handoff: { state: 'declined' }, control: 'agent' });

    const accepted = f.call(client, 'terminal_handoff', { id, message: 'type the password', waitMs: 55_000 });
    await until(() => f.layer.state().handoffs.length === 1, 'the second handoff request');
    f.layer.answerHandoff({ requestId: f.layer.state().handoffs[0]!.id, accept: true });
    // The answer reaches the terminal's control through the decision's promise.
    await expect.poll(() => f.host.get(id).meta.control).toBe('user');
    const view = await attachAsPerson(id);
    await f.host.input(view, 'true\r', true);
    await until(() => f.host.get(id).view().lastCommand?.command === 'true', "the person's command to finish");
    f.host.handBack(id);
    expect(await accepted).toMatchObject({ status: 'done', evidence: 'handoff', handoff: { state: 'returned' } });
  });
});

describe('approvals', () => {
  it('pending → awaiting_approval, then approved, edited, rejected, and denied outright', async () => {
    const tokenD = f.layer.pairAgent({ name: 'delta' }).token;
    const d = await f.client(tokenD);
    const { id } = (await f.call(d, 'terminal_open', { title: 'approvals' })) as { id: string };
    // Allow-listed: runs without asking.
    expect(await f.call(d, 'terminal_send', { id, text: 'pwd' })).toMatchObject({ status: 'done', approval: null });
    // Denied: refused without asking.
    expect(await f.call(d, 'terminal_send', { id, text: 'sudo ls' })).toMatchObject({ isError: true, error: { code: 'rejected' } });
    expect(f.layer.state().approvals).toEqual([]);

    const approve = f.call(d, 'terminal_send', { id, text: 'printf approved-run' });
    await until(() => f.layer.state().approvals.length === 1, 'the approval request');
    f.layer.answerApproval({ requestId: f.layer.state().approvals[0]!.id, decision: 'approve' });
    expect(await approve).toMatchObject({ status: 'done', output: 'approved-run', approval: { state: 'approved' } });

    const edit = f.call(d, 'terminal_send', { id, text: 'printf original' });
    await until(() => f.layer.state().approvals.length === 1, 'the approval request');
    f.layer.answerApproval({ requestId: f.layer.state().approvals[0]!.id, decision: 'edit', command: 'echo edited' });
    expect(await edit).toMatchObject({ status: 'done', output: 'edited', command: 'echo edited', approval: { state: 'edited' } });

    const reject = f.call(d, 'terminal_send', { id, text: 'touch x' });
    await until(() => f.layer.state().approvals.length === 1, 'the approval request');
    f.layer.answerApproval({ requestId: f.layer.state().approvals[0]!.id, decision: 'reject', reason: 'not now' });
    expect(await reject).toMatchObject({ isError: true, error: { code: 'rejected', message: 'not now' } });

    const pending = await f.call(d, 'terminal_send', { id, text: 'printf later', waitMs: 200 });
    expect(pending).toMatchObject({ status: 'awaiting_approval', approval: { state: 'pending' } });
    expect(await f.call(d, 'terminal_send', { id, text: 'pwd' })).toMatchObject({ isError: true, error: { code: 'busy' } });
    f.layer.answerApproval({ requestId: f.layer.state().approvals[0]!.id, decision: 'approve' });
    const later = await f.call(d, 'terminal_wait', { id, since: pending.cursor, waitMs: 55_000 });
    expect(later).toMatchObject({ status: 'done', output: 'later' });
  });
});

describe('connections', () => {
  it('re-adopts terminals after a disconnect mid-send, and revoking ends connections', async () => {
    const tokenE = f.layer.pairAgent({ name: 'epsilon' }).token;
    f.layer.setAgentPolicy({ name: 'epsilon', policy: 'always' });
    const first = await f.client(tokenE);
    const { id } = (await f.call(first, 'terminal_open', { title: 'adopt' })) as { id: string };
    // Mid-send for sure: the command runs until the test opens the gate.
    const g = gate(f.project);
    const sending = first
      .callTool({ name: 'terminal_send', arguments: { id, text: `until [ -e ${g.path} ]; do sleep 0.05; done; echo finished`, waitMs: 55_000 } })
      .catch(() => 'gone');
    await until(() => f.host.get(id).session.status === 'running', 'the command to run');
    await first.close();
    await sending;
    await until(() => !f.host.get(id).meta.agentConnected, 'the host to see the agent gone');
    expect(f.host.get(id).session.status).toBe('running');
    const second = await f.client(tokenE);
    expect(((await f.call(second, 'terminal_list')).terminals as Array<{ id: string }>).map((t) => t.id)).toContain(id);
    expect(f.host.get(id).meta.agentConnected).toBe(true);
    g.open();
    const w = await f.call(second, 'terminal_wait', { id, since: `${id.slice(0, 6)}.0`, waitMs: 55_000 });
    g.dispose();
    expect(w).toMatchObject({ status: 'done' });
    expect(w.output).toContain('finished');

    f.layer.revokeAgent({ name: 'epsilon' });
    await expect(second.callTool({ name: 'terminal_list', arguments: {} })).rejects.toThrow();
  });
});

describe('the /mcp endpoint refuses', () => {
  // node:http, not fetch: fetch will not send a Host header of our choosing.
  function post(headers: Record<string, string>): Promise<number> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    return new Promise((resolve, reject) => {
      const req = request(
        `${f.url}/mcp`,
        { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  it('a missing token, a foreign Origin and a non-loopback Host', async () => {
    expect(await post({})).toBe(401);
    expect(await post({ authorization: `Bearer ${token}`, origin: 'http://evil.example' })).toBe(403);
    expect(await post({ authorization: `Bearer ${token}`, host: 'evil.example' })).toBe(403);
    expect(await post({ authorization: `Bearer ${token}`, origin: new URL(f.url).origin })).toBe(200);
  });

  it('a missing or unknown token with a contract code (forbidden), not a code of its own', async () => {
    const tries: Record<string, string>[] = [{}, { authorization: 'Bearer tdm_not_a_token' }];
    for (const headers of tries) {
      const res = await fetch(`${f.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        }),
      });
      expect(res.status).toBe(401);
      const body = (await res.json()) as { error: { data: { code: string } } };
      expect(body.error.data.code).toBe('forbidden');
      expect(ERROR_CODES).toContain(body.error.data.code);
    }
  });
});

describe('engine scenarios through MCP', () => {
  it('cat, the continuation prompt, the node REPL and a progress bar', async () => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'scenarios' })) as { id: string };
    expect(await f.call(client, 'terminal_send', { id, text: 'cat' })).toMatchObject({ status: 'waiting_input', evidence: 'read' });
    expect(await f.call(client, 'terminal_send', { id, text: 'meow' })).toMatchObject({ status: 'waiting_input', output: 'meow' });
    expect(await f.call(client, 'terminal_send', { id, keys: ['C-d'] })).toMatchObject({ status: 'done', exitCode: 0 });
    expect(await f.call(client, 'terminal_send', { id, text: 'echo "open' })).toMatchObject({ status: 'waiting_input', evidence: 'continuation' });
    expect(await f.call(client, 'terminal_send', { id, text: 'closed"' })).toMatchObject({ status: 'done', output: 'open\nclosed' });
    expect(await f.call(client, 'terminal_send', { id, text: 'node', waitMs: 15000 })).toMatchObject({ status: 'waiting_input', evidence: 'poll' });
    expect(await f.call(client, 'terminal_send', { id, text: '.exit' })).toMatchObject({ status: 'done' });
    const bar = await f.call(client, 'terminal_send', { id, text: `printf '10%%\\r50%%\\r100%%\\n'` });
    expect(bar).toMatchObject({ status: 'done', output: '100%' });
  });
});

describe('unattended terminals', () => {
  it('are closed after the grace once their agent is gone, unless a command runs', async () => {
    const g = await startAgentFixture({ unattendedGraceMs: 0 });
    try {
      const t = g.layer.pairAgent({ name: 'zeta' }).token;
      g.layer.setAgentPolicy({ name: 'zeta', policy: 'always' });
      const client = await g.client(t);
      const idle = (await g.call(client, 'terminal_open', { title: 'idle' })) as { id: string };
      const busy = (await g.call(client, 'terminal_open', { title: 'busy' })) as { id: string };
      // Runs until the end of the test, however long the machine takes (a gate nobody opens).
      const held = gate(g.project);
      expect((await g.call(client, 'terminal_send', { id: busy.id, text: `until [ -e ${held.path} ]; do sleep 0.05; done`, waitMs: 100 })).status).toBe(
        'running',
      );
      await client.close();
      await until(() => !g.host.get(idle.id).meta.agentConnected && !g.host.get(busy.id).meta.agentConnected, 'the host to see the agent gone');
      await g.layer.service.sweepUnattended();
      expect(g.host.has(idle.id)).toBe(false);
      expect(g.host.has(busy.id)).toBe(true);
    } finally {
      await g.close();
    }
  });
});

describe('approvals cannot be sidestepped', () => {
  it('asks for disguised lines, keys, and launch settings that would run code', async () => {
    const tokenH = f.layer.pairAgent({ name: 'eta' }).token;
    const h = await f.client(tokenH);
    // Opening may not smuggle code in through the environment or a shell of the agent's choosing:
    // env beyond the harmless names waits for the person, and a rejected open spawns nothing.
    for (const env of [{ PROMPT_COMMAND: 'touch /tmp/pwned' }, { PATH: '/tmp/evil' }]) {
      const opening = f.call(h, 'terminal_open', { title: 'x', env });
      await expect.poll(() => f.layer.state().approvals.length).toBe(1);
      f.layer.answerApproval({ requestId: f.layer.state().approvals[0]!.id, decision: 'reject', reason: 'no' });
      expect(await opening).toMatchObject({ isError: true, error: { code: 'rejected' } });
    }
    expect(f.host.list()).toEqual([]);
    expect(await f.call(h, 'terminal_open', { title: 'x', shell: '/tmp/evil/bash' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    const opening = f.call(h, 'terminal_open', { title: 'guarded', env: { MY_SETTING: '1' } });
    await expect.poll(() => f.layer.state().approvals.length).toBe(1);
    f.layer.answerApproval({ requestId: f.layer.state().approvals[0]!.id, decision: 'approve' });
    const { id } = (await opening) as { id: string };
    // A carriage return would submit a second line: refused as a control character.
    expect(await f.call(h, 'terminal_send', { id, text: 'ls\rtouch x' })).toMatchObject({ isError: true, error: { code: 'invalid_argument' } });
    for (const attempt of [{ text: 'env touch x' }, { text: 'ls', keys: ['C-u', 't', 'Enter'] }]) {
      const pending = await f.call(h, 'terminal_send', { id, ...attempt, waitMs: 100 });
      expect(pending).toMatchObject({ status: 'awaiting_approval' });
      // One write waits for approval: a second is busy, not a second question.
      expect(await f.call(h, 'terminal_send', { id, text: 'pwd', waitMs: 100 })).toMatchObject({ isError: true, error: { code: 'busy' } });
      const [request] = f.layer.state().approvals;
      f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
      // No wait: the answer frees the agent's slot as its promise settles, before the next call goes out.
    }
    expect(f.layer.state().approvals).toEqual([]);
  });

  it('applies a policy change to a connected agent at once', async () => {
    const tokenT = f.layer.pairAgent({ name: 'theta' }).token;
    f.layer.setAgentPolicy({ name: 'theta', policy: 'always' });
    const t = await f.client(tokenT);
    const { id } = (await f.call(t, 'terminal_open', { title: 'policy' })) as { id: string };
    expect(await f.call(t, 'terminal_send', { id, text: 'printf free' })).toMatchObject({ status: 'done', output: 'free' });
    f.layer.setAgentPolicy({ name: 'theta', policy: 'ask', deny: ['printf'] });
    expect(await f.call(t, 'terminal_send', { id, text: 'printf free' })).toMatchObject({ isError: true, error: { code: 'rejected' } });
  });

  it('withdraws questions about a closed terminal, and survives a late answer', async () => {
    const tokenI = f.layer.pairAgent({ name: 'iota' }).token;
    const i = await f.client(tokenI);
    const { id } = (await f.call(i, 'terminal_open', { title: 'closing' })) as { id: string };
    expect(await f.call(i, 'terminal_send', { id, text: 'printf later', waitMs: 100 })).toMatchObject({ status: 'awaiting_approval' });
    // The request outlives the call's bound, so a short bound only ends the call sooner.
    const handoff = f.call(i, 'terminal_handoff', { id, message: 'log in please', waitMs: 300 });
    await until(() => f.layer.state().handoffs.length === 1, 'the handoff request');
    const requestId = f.layer.state().handoffs[0]!.id;
    await f.host.close(id);
    await until(() => !f.layer.state().handoffs.some((h) => h.id === requestId), 'the handoff to be withdrawn');
    expect(f.layer.state().approvals.filter((a) => a.terminalId === id)).toEqual([]);
    expect(() => f.layer.answerHandoff({ requestId, accept: true })).toThrow(/No pending handoff/);
    await handoff;
  });

  it('keeps concurrent opens within the per-agent limit', async () => {
    const tokenK = f.layer.pairAgent({ name: 'kappa' }).token;
    const k = await f.client(tokenK);
    const results = await Promise.all(Array.from({ length: 6 }, (_, n) => f.call(k, 'terminal_open', { title: `k${n}` })));
    expect(results.filter((r) => !r.isError)).toHaveLength(4);
    expect(results.filter((r) => r.isError).map((r) => (r.error as { code: string }).code)).toEqual(['capacity', 'capacity']);
  });
});
