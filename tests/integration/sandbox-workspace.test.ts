/**
 * A confined terminal may write anywhere in its workspace, so a workspace wider than the
 * agent's project asks the person first, through the real MCP client: nothing is spawned
 * while the question waits, and a denial leaves no terminal.
 */
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { describeSandbox } from './sandbox-helpers.js';

type Opened = Record<string, unknown> & { id: string; cwd: string; sandbox: unknown };

describeSandbox('the workspace of a confined open', () => {
  let f: AgentFixture;
  let client: Client;
  let outside: string;
  const openQuestions = () => f.layer.state().approvals.filter((q) => q.kind === 'open');
  const agentTerminals = () => f.host.list().filter((t) => t.origin === 'agent').length;
  /** Starts an open and waits for its question; the terminal must not exist meanwhile. */
  const asked = async (cwd: string) => {
    const before = agentTerminals();
    const opening = f.call(client, 'terminal_open', { title: 'wide', cwd });
    await expect.poll(() => openQuestions().length).toBe(1);
    const question = openQuestions()[0]!;
    expect(agentTerminals()).toBe(before);
    return { opening, question, before };
  };

  beforeAll(async () => {
    f = await startAgentFixture({ defaultSandbox: 'workspace-write' });
    const token = f.layer.pairAgent({ name: 'roamer' }).token;
    // Under `always` the sandbox is the only boundary left: the workspace still asks.
    f.layer.setAgentPolicy({ name: 'roamer', policy: 'always', sandbox: 'workspace-write', network: false });
    client = await f.client(token);
    outside = mkdtempSync(join(tmpdir(), 'tandem-roam-'));
  });
  afterAll(async () => {
    await f.close();
    rmSync(outside, { recursive: true, force: true });
  });
  afterEach(async () => {
    await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
    f.layer.setAgentPolicy({ name: 'roamer', policy: 'always', sandbox: 'workspace-write', network: false });
  });

  it('opens in its project, and below it, without asking', async () => {
    const sub = join(f.project, 'pkg');
    mkdirSync(sub, { recursive: true });
    for (const cwd of [undefined, sub]) {
      const opened = (await f.call(client, 'terminal_open', { title: 'here', ...(cwd ? { cwd } : {}) })) as Opened;
      expect(opened).toMatchObject({ cwd: cwd ?? f.project, sandbox: { mode: 'workspace-write', network: false } });
      await f.call(client, 'terminal_close', { id: opened.id });
    }
    expect(openQuestions()).toEqual([]);
  });

  it('asks for the home directory; a denial leaves no terminal and writes nothing', async () => {
    const { opening, question, before } = await asked(f.home);
    expect(question).toMatchObject({ agent: 'roamer', terminalId: '', env: [], why: expect.stringContaining('home directory') });
    expect(question.command).toContain(f.home);
    f.layer.answerApproval({ requestId: question.id, decision: 'reject', reason: 'not my home' });
    expect(await opening).toMatchObject({ isError: true, error: { code: 'rejected', message: 'not my home' } });
    expect(agentTerminals()).toBe(before);
    expect(f.host.list().some((t) => t.cwd === f.home)).toBe(false);
  });

  it('asks for / and for a directory outside the project; approved, the terminal opens there', async () => {
    const root = await asked('/');
    expect(root.question.why).toContain('whole filesystem');
    f.layer.answerApproval({ requestId: root.question.id, decision: 'reject' });
    expect(await root.opening).toMatchObject({ isError: true, error: { code: 'rejected' } });

    const away = await asked(outside);
    expect(away.question.why).toContain(`outside the agent's project (${f.project})`);
    f.layer.answerApproval({ requestId: away.question.id, decision: 'approve' });
    const opened = (await away.opening) as Opened;
    expect(opened).toMatchObject({ cwd: outside, sandbox: { mode: 'workspace-write', network: false } });
    expect(await f.call(client, 'terminal_send', { id: opened.id, text: 'echo ok > made.txt' })).toMatchObject({ status: 'done', exitCode: 0 });
    expect(readFileSync(join(outside, 'made.txt'), 'utf8')).toBe('ok\n');
  });

  it('opens nothing when the approved folder is swapped for a link while the question waits', async () => {
    // What the person approves is a folder: a link put in its place before the terminal starts
    // (here while the card waits; in the black-box round as a race, 7 of 18 opens) must not
    // give the sandbox the link's target, the home, writable.
    const folder = join(outside, 'swapped');
    mkdirSync(folder);
    const { opening, question, before } = await asked(folder);
    renameSync(folder, `${folder}-aside`);
    symlinkSync(f.home, folder);
    f.layer.answerApproval({ requestId: question.id, decision: 'approve' });
    expect(await opening).toMatchObject({
      isError: true,
      error: { code: 'sandbox_unavailable', message: expect.stringContaining('changed while the terminal opened') },
    });
    expect(agentTerminals()).toBe(before);
    expect(f.host.list().some((t) => t.cwd === f.home || t.cwd === folder)).toBe(false);
  });

  it('refuses a NUL in a variable: nothing opens, and no bubblewrap option is added', async () => {
    // Black-box round s39: in the sandbox's argument file a NUL ended the value and began options.
    const before = agentTerminals();
    const refused = await f.call(client, 'terminal_open', { title: 'nul', env: { FOO: 'x\0--setenv\0INJECTED\0yes' } });
    expect(refused).toMatchObject({ isError: true, error: { code: 'invalid_argument', message: expect.stringContaining('NUL') } });
    expect(agentTerminals()).toBe(before);
    // The host refuses it on its own too (the person's create, any caller past the tool's schema).
    await expect(f.host.create({ title: 'nul', env: { FOO: 'x\0--setenv\0INJECTED\0yes' } })).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('NUL'),
    });
  });

  it('withdraws the question when the agent gives up, and opens nothing', async () => {
    const before = agentTerminals();
    const opening = client
      .callTool({ name: 'terminal_open', arguments: { title: 'gives up', cwd: f.home } }, undefined, { timeout: 1500 })
      .catch((error: Error) => error);
    await expect.poll(() => openQuestions().length).toBe(1);
    expect(await opening).toBeInstanceOf(Error);
    await expect.poll(() => openQuestions().length).toBe(0);
    expect(agentTerminals()).toBe(before);
  });

  it('does not ask when the terminal runs unconfined: the workspace grants nothing there', async () => {
    f.layer.setAgentPolicy({ name: 'roamer', policy: 'always', sandbox: 'off' });
    const opened = (await f.call(client, 'terminal_open', { title: 'free', cwd: f.home })) as Opened;
    expect(opened).toMatchObject({ cwd: f.home, sandbox: null });
    expect(openQuestions()).toEqual([]);
  });
});
