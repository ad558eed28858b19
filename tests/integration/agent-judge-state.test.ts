import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AgentFixture, startAgentFixture } from './agent-helpers.js';
import { findPwsh, pwshRequired } from './pwsh-helpers.js';

/**
 * Issue 23, the terminal's own state: the allow list judges a line's words, the shell runs them
 * under the variables the terminal was opened with and whatever earlier lines changed (aliases,
 * functions, exported variables...). An agent with the default policy, unconfined, through the
 * real MCP client and real shells: a terminal opened with variables the person approved, or one
 * where an approved line changed the shell's state, runs no allow-listed line unasked, and the
 * program the state would have run did not run (its canary file is absent). A clean terminal, a
 * `cd`, and a clean repository still run `ls` and `git status` without asking.
 */
let f: AgentFixture;
let agent: Client;
/** The person's own git config, named by GIT_CONFIG_GLOBAL in the person's environment and let through to agent terminals. */
let personsGitConfig: string;
let n = 0;

const pwsh = findPwsh();
if (!pwsh && !pwshRequired) console.warn('agent-judge-state test: pwsh cases skipped, pwsh is not installed.');

const gitEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: f.home, GIT_CONFIG_NOSYSTEM: '1' });
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', ...args], { cwd, encoding: 'utf8', env: gitEnv() });

/** A fresh directory in the project with a clean repository (one commit, a sub directory), and a canary with a program that creates it. */
function scenario(): { dir: string; canary: string; script: string } {
  n += 1;
  const dir = join(f.project, `state${n}`);
  mkdirSync(join(dir, 'sub'), { recursive: true });
  git(dir, 'init', '-q');
  writeFileSync(join(dir, 'a.txt'), 'one\n');
  writeFileSync(join(dir, 'sub', 'b.txt'), 'one\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'one');
  const canary = join(f.home, `ran-${n}`);
  const script = join(dir, `program-${n}.sh`);
  writeFileSync(script, `#!/bin/sh\ntouch ${canary}\n`);
  chmodSync(script, 0o755);
  return { dir, canary, script };
}

beforeAll(async () => {
  personsGitConfig = join(await import('node:os').then((os) => os.tmpdir()), `tandem-persons-gitconfig-${process.pid}`);
  writeFileSync(personsGitConfig, '[user]\n\tname = Person\n');
  f = await startAgentFixture({
    defaultSandbox: 'off',
    env: { GIT_CONFIG_GLOBAL: personsGitConfig, ...(pwsh ? { PATH: `${process.env.PATH}:${join(pwsh, '..')}` } : {}) },
  });
  f.host.settings.update({ agentEnvAllow: ['GIT_CONFIG_GLOBAL'] });
  agent = await f.client(f.layer.pairAgent({ name: 'stateful' }).token);
});
afterAll(async () => {
  await f?.close();
});
afterEach(async () => {
  for (const request of f.layer.state().approvals) f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'test over' });
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
  writeFileSync(personsGitConfig, '[user]\n\tname = Person\n');
});

/** Polls until the person's card for `match` is there; the bound catches a hang, not slowness. */
async function card(match: (request: { kind: string; terminalId: string }) => boolean): Promise<{ id: string; why: string | null; env: string[] }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const request = f.layer.state().approvals.find(match);
    if (request) return request as unknown as { id: string; why: string | null; env: string[] };
    if (Date.now() > deadline) throw new Error('no approval card came');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** terminal_open in `cwd`; with `env`, the person approves the variables on the card. */
async function open(cwd: string, env?: Record<string, string>, shell = 'bash'): Promise<string> {
  const opening = f.call(agent, 'terminal_open', { title: 'state', shell, cwd, ...(env ? { env } : {}) });
  if (env) {
    const request = await card((entry) => entry.kind === 'open');
    f.layer.answerApproval({ requestId: request.id, decision: 'approve' });
  }
  const opened = await opening;
  expect(opened, JSON.stringify(opened)).not.toHaveProperty('isError');
  return opened.id as string;
}

/** The line runs without a question. */
async function runsUnasked(id: string, text: string): Promise<Record<string, unknown>> {
  const result = await f.call(agent, 'terminal_send', { id, text, waitMs: 55_000 });
  expect(result, text).toMatchObject({ status: 'done', approval: null });
  return result;
}

/** The line asks; the person approves it and it runs. */
async function approved(id: string, text: string): Promise<void> {
  const sent = f.call(agent, 'terminal_send', { id, text, waitMs: 55_000 });
  const request = await card((entry) => entry.kind === 'command' && entry.terminalId === id);
  f.layer.answerApproval({ requestId: request.id, decision: 'approve' });
  expect(await sent, text).toMatchObject({ status: 'done', approval: { state: 'approved' } });
}

/** The line waits for the person, the card's reason matches `why`; then it is rejected, so nothing runs. */
async function asks(id: string, text: string, why: RegExp): Promise<void> {
  const result = await f.call(agent, 'terminal_send', { id, text, waitMs: 300 });
  expect(result, text).toMatchObject({ status: 'awaiting_approval' });
  const request = f.layer.state().approvals.find((entry) => entry.terminalId === id);
  expect(request?.command).toBe(text);
  expect(request?.why).toMatch(why);
  f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
}

describe('a clean terminal keeps running allow-listed lines', () => {
  it('ls and git status run unasked, and still do after an approved cd sub and cd ..', async () => {
    const { dir } = scenario();
    const id = await open(dir);
    await runsUnasked(id, 'ls');
    await runsUnasked(id, 'git status');
    await approved(id, 'cd sub');
    expect(await runsUnasked(id, 'ls')).toMatchObject({ output: 'b.txt' });
    await runsUnasked(id, 'git status');
    await approved(id, 'cd .. && pwd');
    await runsUnasked(id, 'ls');
  });

  it('an approved line that changes nothing (echo with an expansion) keeps the terminal clean', async () => {
    const { dir } = scenario();
    const id = await open(dir);
    await approved(id, 'echo "$HOME" | wc -c');
    await runsUnasked(id, 'ls');
  });

  it("the person's own global git config, let through by agentEnvAllow, is theirs: git status runs unasked", async () => {
    const { dir } = scenario();
    const id = await open(dir);
    await runsUnasked(id, 'git status');
  });
});

describe('variables given at open, approved by the person', () => {
  it('GIT_CONFIG_COUNT/KEY/VALUE naming core.fsmonitor: git status asks, and the program does not run', async () => {
    const { dir, canary, script } = scenario();
    const env = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: script };
    const id = await open(dir, env);
    await asks(id, 'git status', /"core\.fsmonitor"|"GIT_CONFIG_COUNT"/);
    expect(existsSync(canary)).toBe(false);
    // git with the same variables runs the program: the attack is live.
    execFileSync('git', ['status'], { cwd: dir, env: { ...gitEnv(), ...env } });
    expect(existsSync(canary)).toBe(true);
  });

  it('GIT_DIR naming another repository whose config runs a program: git status asks', async () => {
    const { dir, canary, script } = scenario();
    const { dir: other } = scenario();
    git(other, 'config', 'core.fsmonitor', script);
    const id = await open(dir, { GIT_DIR: join(other, '.git') });
    await asks(id, 'git status', /"GIT_DIR"|"core\.fsmonitor"/);
    expect(existsSync(canary)).toBe(false);
  });

  it('PATH with the workspace first: ls asks, naming PATH, and the workspace ls does not run', async () => {
    const { dir, canary } = scenario();
    mkdirSync(join(dir, 'bin'));
    writeFileSync(join(dir, 'bin', 'ls'), `#!/bin/sh\ntouch ${canary}\n`);
    chmodSync(join(dir, 'bin', 'ls'), 0o755);
    const id = await open(dir, { PATH: `${join(dir, 'bin')}:${process.env.PATH}` });
    await asks(id, 'ls', /opened with "PATH" set/);
    await asks(id, 'cat a.txt', /"PATH"/);
    expect(existsSync(canary)).toBe(false);
  });

  it("a global git config the agent named (GIT_CONFIG_GLOBAL at open) is not the person's: git status asks", async () => {
    const { dir, canary, script } = scenario();
    const own = join(dir, 'own.gitconfig');
    writeFileSync(own, `[core]\n\tfsmonitor = ${script}\n`);
    const id = await open(dir, { GIT_CONFIG_GLOBAL: own });
    await asks(id, 'git status', /"core\.fsmonitor"|"GIT_CONFIG_GLOBAL"/);
    expect(existsSync(canary)).toBe(false);
  });

  it('locale and colour variables need no approval and keep allow-listed lines unasked', async () => {
    const { dir } = scenario();
    const opened = await f.call(agent, 'terminal_open', { title: 'locale', shell: 'bash', cwd: dir, env: { LC_ALL: 'C', NO_COLOR: '1' } });
    await runsUnasked(opened.id as string, 'ls');
  });
});

describe("the person's GIT_* reach the git check", () => {
  it("a GIT_CONFIG_GLOBAL let through from the host names a file that includes the repository's: git status asks", async () => {
    const { dir, canary, script } = scenario();
    // The person's file includes one in the workspace, which the agent can write.
    writeFileSync(join(dir, 'inc.cfg'), `[core]\n\tfsmonitor = ${script}\n`);
    writeFileSync(personsGitConfig, `[user]\n\tname = Person\n[include]\n\tpath = ${join(dir, 'inc.cfg')}\n`);
    const id = await open(dir);
    await asks(id, 'git status', /"core\.fsmonitor".*inc\.cfg/);
    expect(existsSync(canary)).toBe(false);
  });
});

describe('an approved line that changes the shell state makes later allow-listed lines ask', () => {
  it('alias ls=...: ls asks afterwards (the shell reports the alias), and the alias does not run', async () => {
    const { dir, canary } = scenario();
    const id = await open(dir);
    await runsUnasked(id, 'ls');
    await approved(id, `alias ls='touch ${canary}'`);
    await asks(id, 'ls', /ls is an alias/);
    expect(existsSync(canary)).toBe(false);
  });

  it('export GIT_EXTERNAL_DIFF=...: git diff asks, and would have run the program', async () => {
    const { dir, canary, script } = scenario();
    writeFileSync(join(dir, 'a.txt'), 'two\n');
    const id = await open(dir);
    await runsUnasked(id, 'git diff');
    await approved(id, `export GIT_EXTERNAL_DIFF=${script}`);
    await asks(id, 'git diff', /runs "export"/);
    await asks(id, 'git status', /runs "export"/);
    expect(existsSync(canary)).toBe(false);
    // Approved, the same line runs the program: the question was the only thing in the way.
    await approved(id, 'git diff');
    expect(existsSync(canary)).toBe(true);
  });

  it('a function of an allow-listed name: that name asks afterwards (the shell reports it); other lines run', async () => {
    const { dir, canary } = scenario();
    const id = await open(dir);
    await approved(id, `cat() { touch ${canary}; }`);
    await asks(id, 'cat a.txt', /cat is a function/);
    await runsUnasked(id, 'ls');
    expect(existsSync(canary)).toBe(false);
  });

  it('zsh: a preexec hook function runs before every command, so every later allow-listed line asks', async () => {
    const { dir, canary } = scenario();
    const id = await open(dir, undefined, 'zsh');
    await runsUnasked(id, 'ls');
    await approved(id, `preexec() { touch ${canary}; }`);
    await asks(id, 'ls', /defines the function "preexec"/);
    await asks(id, 'git status', /defines the function "preexec"/);
    expect(existsSync(canary)).toBe(false);
    // Approved, the next line runs the hook: the question was the only thing in the way.
    await approved(id, 'ls');
    expect(existsSync(canary)).toBe(true);
  });

  it("an edited approval counts as the line that runs: the person's edit to a state change holds the terminal", async () => {
    const { dir, canary, script } = scenario();
    writeFileSync(join(dir, 'a.txt'), 'two\n');
    const id = await open(dir);
    const sent = f.call(agent, 'terminal_send', { id, text: 'echo hello > hello.txt', waitMs: 55_000 });
    const request = await card((entry) => entry.kind === 'command' && entry.terminalId === id);
    f.layer.answerApproval({ requestId: request.id, decision: 'edit', command: `export GIT_EXTERNAL_DIFF=${script}` });
    expect(await sent).toMatchObject({ status: 'done' });
    await asks(id, 'git diff', /runs "export"/);
    expect(existsSync(canary)).toBe(false);
  });

  it('a line split over two sends (typed without submit, then completed) is read whole', async () => {
    const { dir, canary, script } = scenario();
    writeFileSync(join(dir, 'a.txt'), 'two\n');
    const id = await open(dir);
    expect(await f.call(agent, 'terminal_send', { id, text: 'export GIT_EXTERNAL', submit: false, waitMs: 2000 })).not.toHaveProperty('isError');
    const sent = f.call(agent, 'terminal_send', { id, text: `_DIFF=${script}`, waitMs: 55_000 });
    const request = await card((entry) => entry.kind === 'command' && entry.terminalId === id);
    f.layer.answerApproval({ requestId: request.id, decision: 'approve' });
    expect(await sent).toMatchObject({ status: 'done' });
    await asks(id, 'git diff', /runs "export"/);
    expect(existsSync(canary)).toBe(false);
  });

  it('a line submitted by named keys (an approved history recall) is not known, so later lines ask; keys that only edit keep the terminal', async () => {
    const { dir } = scenario();
    const id = await open(dir);
    await runsUnasked(id, 'ls');
    const keys = async (sent: string[]) => {
      const sending = f.call(agent, 'terminal_send', { id, keys: sent, waitMs: 1_000 });
      f.layer.answerApproval({ requestId: (await card((entry) => entry.kind === 'command' && entry.terminalId === id)).id, decision: 'approve' });
      expect(await sending).not.toHaveProperty('isError');
    };
    // Recalled, not submitted: the next line empties it first, nothing unknown ran.
    await keys(['Up']);
    await runsUnasked(id, 'ls');
    await keys(['Up', 'Enter']);
    await asks(id, 'ls', /submitted as named keys left it/);
  });

  it.skipIf(!pwsh && !pwshRequired)('pwsh: an approved $env: assignment makes git diff ask', async () => {
    const { dir, canary, script } = scenario();
    writeFileSync(join(dir, 'a.txt'), 'two\n');
    const id = await open(dir, undefined, 'pwsh');
    await runsUnasked(id, 'git diff');
    await approved(id, `$env:GIT_EXTERNAL_DIFF = '${script}'`);
    await asks(id, 'git diff', /assigns a variable/);
    expect(existsSync(canary)).toBe(false);
  });
});
