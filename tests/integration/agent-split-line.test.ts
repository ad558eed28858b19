import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/until.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { findPwsh } from './pwsh-helpers.js';

/**
 * Issue 23, attack 1: a line split over sends. Each part alone is allow-listed; the shell runs
 * the joined line. Black-box through the official MCP client, default policy, sandbox off.
 */
let f: AgentFixture;
let agent: Client;
let workspace: string;
/** Outside the project: an allowed read never returns it. */
let secret: string;
const secretText = 'SECRET-KEY-MATERIAL-23';

beforeAll(async () => {
  const pwsh = findPwsh();
  if (pwsh && !process.env.PATH?.split(':').includes(join(pwsh, '..'))) process.env.PATH = `${process.env.PATH}:${join(pwsh, '..')}`;
  f = await startAgentFixture({ defaultSandbox: 'off' });
  agent = await f.client(f.layer.pairAgent({ name: 'splitter' }).token);
  workspace = f.project;
  mkdirSync(join(f.home, '.ssh'), { recursive: true });
  secret = join(f.home, '.ssh', 'id_rsa');
  writeFileSync(secret, `${secretText}\n`);
  writeFileSync(join(workspace, 'README.md'), 'hello\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', ...args], { cwd: workspace, env: { ...process.env, HOME: f.home } });
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'one');
});
afterAll(async () => {
  await f.close();
});
afterEach(async () => {
  for (const request of f.layer.state().approvals) f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'test over' });
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

async function open(shell: string): Promise<string> {
  const opened = await f.call(agent, 'terminal_open', { title: `split-${shell}`, shell, cwd: workspace });
  expect(opened, JSON.stringify(opened)).not.toHaveProperty('isError');
  return opened.id as string;
}

function send(id: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  return f.call(agent, 'terminal_send', { id, waitMs: 5_000, ...args });
}

/** Ctrl+C at the prompt empties the line; the shell's fresh prompt is awaited. */
async function interrupt(id: string): Promise<void> {
  await f.call(agent, 'terminal_signal', { id, signal: 'SIGINT' });
  await f.call(agent, 'terminal_wait', { id, waitMs: 2_000 });
}

/** The send waits for the person; the card shows `shown`; the person rejects it. */
async function asks(id: string, args: Record<string, unknown>, shown?: string | RegExp): Promise<void> {
  const result = await send(id, { waitMs: 400, ...args });
  expect(result, JSON.stringify(args)).toMatchObject({ status: 'awaiting_approval' });
  const request = f.layer.state().approvals.find((entry) => entry.terminalId === id)!;
  if (typeof shown === 'string') expect(request.command).toBe(shown);
  else if (shown) expect(request.command).toMatch(shown);
  f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'no' });
  await expect.poll(() => f.layer.state().approvals.length).toBe(0);
}

/** The send waits for the person, who approves it; its result. */
async function approved(id: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const pending = send(id, { waitMs: 30_000, ...args });
  await expect.poll(() => f.layer.state().approvals.some((entry) => entry.terminalId === id)).toBe(true);
  const request = f.layer.state().approvals.find((entry) => entry.terminalId === id)!;
  f.layer.answerApproval({ requestId: request.id, decision: 'approve' });
  return pending;
}

/**
 * The person approves a command that does not read the terminal; resolves once it runs, whether
 * the send's short bound ended before or after the approval, with the function that ends it:
 * `cat` blocked opening a FIFO, ended by a writer's end of file once it holds the FIFO (not a
 * sleep the machine could outlast).
 */
async function approvedHeld(id: string): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-held-'));
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const pending = send(id, { text: `cat '${fifo}' >/dev/null`, waitMs: 300 });
  await expect.poll(() => f.layer.state().approvals.some((entry) => entry.terminalId === id)).toBe(true);
  f.layer.answerApproval({ requestId: f.layer.state().approvals.find((entry) => entry.terminalId === id)!.id, decision: 'approve' });
  expect(['running', 'awaiting_approval']).toContain((await pending).status);
  // A non-blocking open for writing succeeds once a reader has the FIFO open.
  let writer = -1;
  await until(() => {
    try {
      writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      return true;
    } catch {
      return false;
    }
  }, 'the approved command to run');
  expect(f.host.get(id).session.status).toBe('running');
  return () => {
    closeSync(writer);
    rmSync(dir, { recursive: true, force: true });
  };
}

/** Typed without submit: no question, nothing runs (the send settles at its short bound). */
async function typed(id: string, text: string, extra: Record<string, unknown> = {}): Promise<void> {
  const result = await send(id, { text, submit: false, waitMs: 300, ...extra });
  expect(result, text).not.toHaveProperty('isError');
  expect(result.approval).toBeNull();
  expect(f.layer.state().approvals).toEqual([]);
}

async function runsWithoutAsking(id: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await send(id, { waitMs: 55_000, ...args });
  expect(result, JSON.stringify(args)).toMatchObject({ status: 'done', approval: null });
  return result;
}

const shells = ['bash', 'zsh', ...(findPwsh() ? ['pwsh'] : [])];
if (!findPwsh()) console.warn('split-line test: pwsh cases skipped, pwsh is not installed.');
const posix = ['bash', 'zsh'];
const gitFragment = 'git log -1 --format=touch%x20X%x0a%x23';

describe('a line split over sends is judged as the joined line', { timeout: 90_000 }, () => {
  it.each(shells)('%s: git log --format=...%%x23 unsubmitted, then echo --output=<canary>, asks and writes nothing', async (shell) => {
    const id = await open(shell);
    const canary = join(f.home, `canary-${shell}`);
    await typed(id, gitFragment);
    await asks(id, { text: `echo --output=${canary}` }, `${gitFragment}echo --output=${canary}`);
    expect(existsSync(canary)).toBe(false);
    // Rejected: the fragment is still on the line, and still judged with what follows.
    await asks(id, { text: `echo --output=${canary}` }, `${gitFragment}echo --output=${canary}`);
    // An interrupt empties the line; the next command runs alone.
    await interrupt(id);
    expect(await runsWithoutAsking(id, { text: 'echo fresh' })).toMatchObject({ output: 'fresh' });
    expect(existsSync(canary)).toBe(false);
  });

  it.each(posix)('%s: cat unsubmitted, then echo <secret>: asks, returns no secret', async (shell) => {
    const id = await open(shell);
    await typed(id, 'cat ');
    await asks(id, { text: `echo ${secret}` }, `cat echo ${secret}`);
    await interrupt(id);
    const after = await runsWithoutAsking(id, { text: 'echo done' });
    expect(after.output).toBe('done');
    expect(JSON.stringify(after)).not.toContain(secretText);
  });

  it.each(posix)('%s: three parts (cat, a space, the path)', async (shell) => {
    const id = await open(shell);
    await typed(id, 'cat');
    await typed(id, ' ');
    await asks(id, { text: secret }, `cat ${secret}`);
    const read = await f.call(agent, 'terminal_read', { id });
    expect(JSON.stringify(read)).not.toContain(secretText);
  });

  it.each(shells)('%s: the fragment submitted by a key (Enter, C-j, C-m) is judged with the key', async (shell) => {
    const id = await open(shell);
    const canary = join(f.home, `canary-key-${shell}`);
    for (const key of ['Enter', 'C-j', 'C-m']) {
      await typed(id, gitFragment);
      await typed(id, `echo --output=${canary}`);
      await asks(id, { keys: [key] }, `${gitFragment}echo --output=${canary} <${key}>`);
      await interrupt(id);
    }
    expect(existsSync(canary)).toBe(false);
  });

  it('the deny list sees the joined line', async () => {
    const id = await open('bash');
    await typed(id, 'd');
    expect(await send(id, { text: 'd if=/dev/zero of=/dev/null count=1' })).toMatchObject({ isError: true, error: { code: 'rejected' } });
  });

  it.each(shells)('%s: a legitimate long command in two parts runs without asking, as one line', async (shell) => {
    const id = await open(shell);
    await typed(id, 'git log -1 ');
    expect(await runsWithoutAsking(id, { text: '--oneline' })).toMatchObject({ output: expect.stringMatching(/^[0-9a-f]+ .*one$/) });
    await typed(id, 'git log -1 --oneline');
    expect(await runsWithoutAsking(id, { keys: ['Enter'] })).toMatchObject({ status: 'done' });
    const ran = f.layer
      .state()
      .ran.find((entry) => entry.agent === 'splitter')!
      .entries.filter((entry) => entry.terminalId === id)
      .map((entry) => entry.command);
    expect(ran.filter((command) => command === 'git log -1 --oneline')).toHaveLength(2);
  });
});

describe('input that reaches the shell from elsewhere is emptied before a judged line', { timeout: 90_000 }, () => {
  it.each(shells)('%s: typeahead to a program that is not reading, then a judged line', async (shell) => {
    const id = await open(shell);
    const canary = join(f.home, `canary-ahead-${shell}`);
    // The person approves a command that does not read the terminal.
    // pwsh keeps `sleep 2`, which ends by itself: what its engine makes of the typeahead depends
    // on how the command ends. Ended by the test (a FIFO, a process it waited for, a signal,
    // Start-Sleep 5, a loop) the next prompt was seen and the typeahead left out of the judged
    // line, in every run here (issue 22: left for a follow-up; a loaded machine can still type
    // the fragment after the 2 s).
    const end = shell === 'pwsh' ? null : await approvedHeld(id);
    if (shell === 'pwsh') expect(await approved(id, { text: 'sleep 2', waitMs: 300 })).toMatchObject({ status: 'running' });
    await typed(id, gitFragment, { input: true });
    // The fragment is in the terminal's input, and the shell reads it at its prompt.
    end?.();
    // (pwsh stays running with typeahead queued: that wait ends at its bound, after the sleep.)
    await f.call(agent, 'terminal_wait', { id, waitMs: shell === 'pwsh' ? 15_000 : 55_000 });
    if (shell === 'pwsh') {
      // pwsh: with typeahead queued the engine does not see the next prompt (the terminal stays
      // running), so the line is judged with the typeahead that precedes it, and asks. On a
      // loaded machine the fragment can come after the sleep ended instead: it then sits at the
      // prompt and is emptied before the judged line. Either way the card shows exactly what
      // runs: a joined line is rejected, the lone echo approved, and the canary never written.
      const pending = send(id, { text: `echo --output=${canary}`, input: true, waitMs: 30_000 });
      await until(() => f.layer.state().approvals.some((entry) => entry.terminalId === id), 'the question');
      const request = f.layer.state().approvals.find((entry) => entry.terminalId === id)!;
      expect([`${gitFragment}echo --output=${canary}`, `echo --output=${canary}`]).toContain(request.command);
      f.layer.answerApproval({ requestId: request.id, decision: request.command === `echo --output=${canary}` ? 'approve' : 'reject' });
      await pending;
      await f.call(agent, 'terminal_wait', { id, waitMs: 15_000 });
      expect(existsSync(canary)).toBe(false);
      return;
    }
    const result = await runsWithoutAsking(id, { text: `echo --output=${canary}` });
    expect(result.output).toBe(`--output=${canary}`);
    expect(existsSync(canary)).toBe(false);
  });

  it.each(posix)('%s: typeahead joined with the typeahead that submits it asks', async (shell) => {
    const id = await open(shell);
    const end = await approvedHeld(id);
    await typed(id, 'cat ', { input: true });
    await asks(id, { text: secret, input: true }, `cat ${secret}`);
    end();
    await f.call(agent, 'terminal_wait', { id, waitMs: 55_000 });
    const read = await f.call(agent, 'terminal_read', { id });
    expect(JSON.stringify(read)).not.toContain(secretText);
  });
});

describe('input a program left unread never reaches the shell (black-box round 7)', { timeout: 90_000 }, () => {
  // `head -c 5` takes "echo " of an allow-listed `echo touch <canary>` typed as its input and
  // exits; the rest, a whole line, was left in the terminal, and the shell ran it as a command
  // nobody judged (the canary written, the ran-log showing only the two allowed lines).
  it.each(shells)('%s: head -c 5, then echo touch <canary> as its input: the rest is emptied at the prompt', async (shell) => {
    const id = await open(shell);
    const canary = join(f.home, `canary-unread-${shell}`);
    const waiting = await send(id, { text: 'head -c 5', waitMs: 30_000 });
    expect(waiting, JSON.stringify(waiting)).toMatchObject({ status: 'waiting_input', approval: null });
    const answered = await send(id, { text: `echo touch ${canary}`, waitMs: 30_000 });
    expect(answered, JSON.stringify(answered)).toMatchObject({ approval: null });
    // The next command runs alone, once the prompt is back: nothing of the rest ran before it.
    const after = await runsWithoutAsking(id, { text: 'echo alive' });
    expect(after.output).toBe('alive');
    await f.call(agent, 'terminal_wait', { id, waitMs: 500 });
    expect(existsSync(canary)).toBe(false);
    expect(f.layer.state().approvals).toEqual([]);
  });

  // Where nothing empties it (sh; bash before 4.4, whose integration cannot look without waiting
  // on bash 3), input to a program asks: the rest a program leaves could run (round 8: dash).
  it.each(['sh', 'bash before 4.4'])('%s: input to a program asks, and nothing runs when the person says no', async (name) => {
    const before = process.env.TANDEM_BASH_INTEGRATION;
    if (name !== 'sh') process.env.TANDEM_BASH_INTEGRATION = 'legacy';
    let id: string;
    try {
      id = await open(name === 'sh' ? 'sh' : 'bash');
    } finally {
      if (before === undefined) delete process.env.TANDEM_BASH_INTEGRATION;
      else process.env.TANDEM_BASH_INTEGRATION = before;
    }
    const canary = join(f.home, `canary-unread-${name.replace(/\W/g, '-')}`);
    const started = await send(id, { text: 'head -c 5', waitMs: 30_000 });
    expect(started, JSON.stringify(started)).toMatchObject({ status: 'waiting_input', approval: null });
    await asks(id, { text: `echo touch ${canary}` }, `echo touch ${canary}`);
    await interrupt(id);
    await f.call(agent, 'terminal_wait', { id, waitMs: 1_000 });
    expect(existsSync(canary)).toBe(false);
  });
});

describe('continuation prompts: the next send completes the earlier line', () => {
  it.each(posix)('%s: an approved unclosed quote, then text that closes it', async (shell) => {
    const id = await open(shell);
    const canary = join(f.home, `canary-quote-${shell}`);
    expect(await approved(id, { text: "echo 'a", waitMs: 30_000 })).toMatchObject({ status: 'waiting_input', evidence: 'continuation' });
    await asks(id, { text: `'; touch ${canary}` }, `echo 'a\n'; touch ${canary}`);
    expect(existsSync(canary)).toBe(false);
  });

  it.each(posix)('%s: a trailing backslash, then the rest of the word', async (shell) => {
    const id = await open(shell);
    const canary = join(f.home, `canary-bs-${shell}`);
    const first = await send(id, { text: `${gitFragment}\\`, waitMs: 30_000 });
    if (first.status === 'awaiting_approval') {
      const request = f.layer.state().approvals.find((entry) => entry.terminalId === id)!;
      f.layer.answerApproval({ requestId: request.id, decision: 'approve' });
    }
    await expect
      .poll(async () => (await f.call(agent, 'terminal_list')).terminals)
      .toEqual(expect.arrayContaining([expect.objectContaining({ id, status: 'waiting_input' })]));
    await asks(id, { text: `echo --output=${canary}` }, `${gitFragment}\\\necho --output=${canary}`);
    expect(existsSync(canary)).toBe(false);
  });

  it.each(posix)('%s: a here-document, then a line with a substitution', async (shell) => {
    const id = await open(shell);
    const canary = join(f.home, `canary-heredoc-${shell}`);
    expect(await approved(id, { text: 'cat <<EOF', waitMs: 30_000 })).toMatchObject({ status: 'waiting_input', evidence: 'continuation' });
    await typed(id, '$(touch ');
    await asks(id, { text: `${canary})` }, `cat <<EOF\n$(touch ${canary})`);
    expect(existsSync(canary)).toBe(false);
  });

  it('a continuation Tandem did not type (begun under `always`) asks', async () => {
    const token = f.layer.pairAgent({ name: 'switcher' }).token;
    const other = await f.client(token);
    f.layer.setAgentPolicy({ name: 'switcher', policy: 'always' });
    const opened = await f.call(other, 'terminal_open', { title: 'switch', shell: 'bash', cwd: workspace });
    const id = opened.id as string;
    expect(await f.call(other, 'terminal_send', { id, text: "echo 'a", waitMs: 30_000 })).toMatchObject({ status: 'waiting_input' });
    f.layer.setAgentPolicy({ name: 'switcher', policy: 'ask-unless-allowed' });
    const result = await f.call(other, 'terminal_send', { id, text: "'", waitMs: 400 });
    expect(result).toMatchObject({ status: 'awaiting_approval' });
    expect(f.layer.state().approvals.find((entry) => entry.terminalId === id)).toMatchObject({ why: expect.stringContaining('did not type') });
  });
});

describe('history recall asks unless the line it submits was judged', { timeout: 90_000 }, () => {
  it.each(posix)('%s: Up, C-p, C-r, C-o, C-x C-e and history words', async (shell) => {
    const id = await open(shell);
    const canary = join(f.home, `canary-recall-${shell}`);
    await approved(id, { text: `touch ${canary}` });
    await expect.poll(() => existsSync(canary)).toBe(true);
    rmSync(canary);
    await asks(id, { keys: ['Up', 'Enter'] });
    await asks(id, { keys: ['C-p', 'Enter'] });
    await asks(id, { keys: ['C-r', 't', 'o', 'u', 'Enter'] });
    await asks(id, { keys: ['Up', 'C-o'] });
    await asks(id, { keys: ['C-x', 'C-e'] });
    // Recall approved alone, then a bare Enter: the line it submits was not judged.
    await approved(id, { keys: ['Up'], waitMs: 2_000 });
    await asks(id, { keys: ['Enter'] }, '<Enter>');
    // Text after a recall starts a fresh line: the recalled command is emptied, not run.
    expect(await runsWithoutAsking(id, { text: 'echo fresh' })).toMatchObject({ output: 'fresh' });
    for (const text of ['!!', '!-1', 'fc -s', 'r', '^touch^touch', `echo !$`]) {
      const result = await send(id, { text, waitMs: 2_000 });
      if (result.status === 'awaiting_approval') {
        for (const request of f.layer.state().approvals) f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'no' });
      } else expect(text).toBe('echo !$');
    }
    expect(existsSync(canary)).toBe(false);
  });

  it.runIf(findPwsh() !== null)('pwsh: Up and r', async () => {
    const id = await open('pwsh');
    const canary = join(f.home, 'canary-recall-pwsh');
    await approved(id, { text: `New-Item ${canary}` });
    await expect.poll(() => existsSync(canary)).toBe(true);
    rmSync(canary);
    await asks(id, { keys: ['Up', 'Enter'] });
    await asks(id, { text: 'r' });
    await asks(id, { text: 'Invoke-History' });
    expect(existsSync(canary)).toBe(false);
  });
});

describe('input to a program that holds the terminal stays its input', () => {
  it('vim: text without submit is typed into the editor', async () => {
    const id = await open('bash');
    const file = join(workspace, 'edited.txt');
    const approveAll = setInterval(() => {
      for (const request of f.layer.state().approvals) if (request.terminalId === id) f.layer.answerApproval({ requestId: request.id, decision: 'approve' });
    }, 20);
    try {
      await send(id, { text: 'vim -u NONE -N edited.txt', waitMs: 30_000 });
      await send(id, { text: 'ihello from the agent', submit: false, waitMs: 1_000 });
      await send(id, { keys: ['Escape'], waitMs: 1_000 });
      await send(id, { text: ':wq', waitMs: 30_000 });
    } finally {
      clearInterval(approveAll);
    }
    await expect.poll(() => existsSync(file) && readFileSync(file, 'utf8')).toBe('hello from the agent\n');
  });
});
