import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { hasCommand } from './helpers.js';
import { findPwsh, pwshRequired } from './pwsh-helpers.js';

/**
 * Issue 10's attacks through the real MCP client and real shells, by an agent paired with the
 * default policy (ask-unless-allowed): each proves the side effect did not happen.
 */
let f: AgentFixture;
let agent: Client;
let workspace: string;
let git: (...args: string[]) => string;

beforeAll(async () => {
  const pwsh = findPwsh();
  // Discovery finds shells on the host's PATH: include the .NET tool's pwsh where it lives.
  if (pwsh && !process.env.PATH?.split(':').includes(join(pwsh, '..'))) process.env.PATH = `${process.env.PATH}:${join(pwsh, '..')}`;
  f = await startAgentFixture();
  agent = await f.client(f.layer.pairAgent({ name: 'judged' }).token);
  workspace = join(f.home, 'project');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  git = (...args) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', ...args], {
      cwd: workspace,
      encoding: 'utf8',
      env: { ...process.env, HOME: f.home },
    });
  git('init', '-q');
  writeFileSync(join(workspace, 'README.md'), 'hello from the readme\n');
  writeFileSync(join(workspace, 'src', 'main.ts'), 'export const a = 1;\n');
  git('add', '.');
  git('commit', '-qm', 'one');
  writeFileSync(join(workspace, 'src', 'main.ts'), 'export const a = 2;\n');
  git('commit', '-qam', 'two');
});
afterAll(async () => {
  await f.close();
});
afterEach(async () => {
  for (const request of f.layer.state().approvals) f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'test over' });
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

async function open(shell = 'bash'): Promise<string> {
  const opened = await f.call(agent, 'terminal_open', { title: `judge-${shell}`, shell, cwd: workspace });
  expect(opened).not.toHaveProperty('isError');
  return opened.id as string;
}

async function runsWithoutAsking(id: string, text: string): Promise<Record<string, unknown>> {
  const result = await f.call(agent, 'terminal_send', { id, text, waitMs: 55_000 });
  expect(result, text).toMatchObject({ status: 'done', approval: null });
  return result;
}

/** The line waits for the person; the question is then rejected so the terminal is free again. */
async function asks(id: string, text: string): Promise<void> {
  const result = await f.call(agent, 'terminal_send', { id, text, waitMs: 300 });
  expect(result, text).toMatchObject({ status: 'awaiting_approval' });
  const request = f.layer.state().approvals.find((entry) => entry.terminalId === id);
  expect(request?.command).toBe(text);
  f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
  // No wait: the answer frees the agent's slot as its promise settles, before the next call goes out.
}

describe('allowed lines keep running without asking, and are logged', () => {
  it('ls -la, git status, git diff HEAD~1 -- src, cat README.md', async () => {
    const id = await open();
    await runsWithoutAsking(id, 'ls -la');
    await runsWithoutAsking(id, 'git status');
    expect(await runsWithoutAsking(id, 'git diff HEAD~1 -- src')).toMatchObject({ output: expect.stringContaining('+export const a = 2;') });
    expect(await runsWithoutAsking(id, 'cat README.md')).toMatchObject({ output: 'hello from the readme' });
    const log = f.layer
      .state()
      .ran.find((entry) => entry.agent === 'judged')!
      .entries.map((entry) => entry.command);
    expect(log.slice(-4)).toEqual(['ls -la', 'git status', 'git diff HEAD~1 -- src', 'cat README.md']);
    expect(f.layer.state().ran[0]!.entries.at(-1)).toMatchObject({ terminalId: id, title: 'judge-bash' });
  });
});

describe('class 1: allowed programs that write or execute ask', () => {
  it('git show --output and git diff --output write nothing', async () => {
    const id = await open();
    const config = readFileSync(join(workspace, '.git', 'config'), 'utf8');
    await asks(id, 'git show --format=x --output=.git/config');
    await asks(id, 'git diff --output=victim');
    await asks(id, 'git log --outp=victim');
    await asks(id, 'git -c core.fsmonitor=true status');
    expect(readFileSync(join(workspace, '.git', 'config'), 'utf8')).toBe(config);
    expect(existsSync(join(workspace, 'victim'))).toBe(false);
  });

  it('a repository whose config runs programs makes git status and git diff ask', async () => {
    const configPath = join(workspace, '.git', 'config');
    const clean = readFileSync(configPath, 'utf8');
    const canary = join(f.home, 'fsmonitor-ran');
    try {
      writeFileSync(configPath, `${clean}[core]\n\tfsmonitor = touch ${canary}\n[diff "x"]\n\ttextconv = touch ${canary}\n`);
      const id = await open();
      await asks(id, 'git status');
      await asks(id, 'git diff HEAD~1 -- src');
      expect(existsSync(canary)).toBe(false);
    } finally {
      writeFileSync(configPath, clean);
    }
  });
});

describe('issue 28: grep, find, rg, git grep, stat, file, du and df', () => {
  it('read-only searches run without asking; actions, preprocessors and follow options ask and do nothing', async () => {
    const id = await open();
    expect(await runsWithoutAsking(id, 'grep -rn hello')).toMatchObject({ output: expect.stringContaining('README.md:1:hello from the readme') });
    expect(await runsWithoutAsking(id, "find . -name 'main.ts'")).toMatchObject({ output: './src/main.ts' });
    expect(await runsWithoutAsking(id, 'git grep -n export -- src')).toMatchObject({ output: 'src/main.ts:1:export const a = 2;' });
    await runsWithoutAsking(id, 'stat -c %s README.md');
    await runsWithoutAsking(id, 'du -sh src');
    const canary = join(workspace, 'X');
    const evilRan = join(workspace, 'evil-ran');
    const evil = join(workspace, 'evil');
    writeFileSync(evil, `#!/bin/sh\ntouch ${evilRan}\ncat "$1"\n`);
    chmodSync(evil, 0o755);
    await asks(id, 'find . -exec touch X \\;');
    await asks(id, "find . -exec touch X ';'");
    await asks(id, "find . -execdir touch X '+'");
    await asks(id, 'find . -fprint X');
    await asks(id, 'find . -name README.md -delete');
    await asks(id, 'rg --pre ./evil hello');
    await asks(id, 'rg --pre=./evil hello');
    await asks(id, 'file -C -m X');
    await asks(id, 'grep -R hello');
    expect(existsSync(canary)).toBe(false);
    expect(existsSync(evilRan)).toBe(false);
    expect(existsSync(join(workspace, 'README.md'))).toBe(true);
    // The same lines do run once the person approves: the canaries could have been written.
    const pending = await f.call(agent, 'terminal_send', { id, text: "find . -maxdepth 0 -exec touch X ';'", waitMs: 300 });
    expect(pending).toMatchObject({ status: 'awaiting_approval' });
    const request = f.layer.state().approvals.find((entry) => entry.terminalId === id)!;
    f.layer.answerApproval({ requestId: request.id, decision: 'approve' });
    await expect.poll(() => existsSync(canary), { timeout: 30_000 }).toBe(true);
  });
});

describe('class 2: env at open waits for the person', () => {
  it('lists the variables on the card, spawns nothing until approved, and nothing when rejected', async () => {
    const before = f.host.list().length;
    const pending = f.call(agent, 'terminal_open', { title: 'env', cwd: workspace, env: { GIT_PAGER: 'touch pwned', HOME: '/tmp', LANG: 'C.UTF-8' } });
    await expect.poll(() => f.layer.state().approvals.length).toBe(1);
    const [question] = f.layer.state().approvals;
    expect(question).toMatchObject({ kind: 'open', agent: 'judged', env: ['GIT_PAGER=touch pwned', 'HOME=/tmp'] });
    expect(f.host.list().length).toBe(before);
    f.layer.answerApproval({ requestId: question!.id, decision: 'reject', reason: 'not with those' });
    expect(await pending).toMatchObject({ isError: true, error: { code: 'rejected', message: 'not with those' } });
    expect(f.host.list().length).toBe(before);
    // Harmless names alone pass without a question.
    const plain = await f.call(agent, 'terminal_open', { title: 'plain', cwd: workspace, env: { LANG: 'C.UTF-8', NO_COLOR: '1' } });
    expect(plain).toMatchObject({ status: 'idle' });
  });
});

describe('class 3: shell syntax the old line check did not see', () => {
  it('bash: history expansion, substitutions and globs ask', async () => {
    const id = await open();
    const canary = join(workspace, 'bash-ran');
    await asks(id, 'echo !-1:s,a,b,');
    await asks(id, `ls $(touch ${canary})`);
    await asks(id, `ls \`touch ${canary}\``);
    await asks(id, `cat <(touch ${canary})`);
    expect(existsSync(canary)).toBe(false);
  });

  it('zsh: glob qualifiers and =(...) ask', async () => {
    const id = await open('zsh');
    const canary = join(workspace, 'zsh-ran');
    await asks(id, `ls *(e:'touch ${canary}':)`);
    await asks(id, `cat =(touch ${canary})`);
    await asks(id, 'ls =ls');
    expect(existsSync(canary)).toBe(false);
    await runsWithoutAsking(id, 'ls -la');
  });

  const pwsh = findPwsh();
  if (!pwsh && !pwshRequired) console.warn('pwsh judge test: skipped, pwsh is not installed (set TANDEM_REQUIRE_PWSH=1 to fail instead).');
  it.runIf(pwsh !== null || pwshRequired)('pwsh: subexpressions and groups ask', async () => {
    const id = await open('pwsh');
    const canary = join(workspace, 'pwsh-ran');
    await asks(id, `ls $(New-Item ${canary})`);
    await asks(id, `ls (New-Item ${canary})`);
    await asks(id, `ls @(New-Item ${canary})`);
    expect(existsSync(canary)).toBe(false);
    await runsWithoutAsking(id, 'git status');
  });
});

describe('class 4: reads that would undo the scrubbing ask', () => {
  it("the host's environ, Tandem's state directory and another terminal's pts", async () => {
    const id = await open();
    mkdirSync(join(f.stateDir, 'agents'), { recursive: true });
    writeFileSync(join(f.stateDir, 'agents', 'other.token'), 'secret-token');
    await asks(id, `cat /proc/${process.pid}/environ`);
    await asks(id, `head -c 100 /proc/${process.pid}/environ`);
    await asks(id, `cat ${join(f.stateDir, 'agents', 'other.token')}`);
    await asks(id, 'tail -f /dev/pts/0');
    await asks(id, 'cat ../../outside');
  });
});

describe('paths each process reads as its own (black-box round 7)', () => {
  it("cat /proc/self/cwd/...: judged as Tandem's cwd, read from the command's; it asks, and the secret is not returned", async () => {
    const id = await open();
    const secret = join(f.home, 'proc-self-secret');
    writeFileSync(secret, 'PROC-SELF canary');
    // The same relative path names a decoy in the workspace from Tandem's cwd, and the secret
    // from the command's (the workspace): up as many folders as Tandem's cwd is deep, then down
    // to the workspace's decoy, which from the workspace lands in a folder the attacker made.
    const tandemCwd = realpathSync(process.cwd());
    const up = tandemCwd.split('/').length - 1;
    const rel = `${'../'.repeat(up)}${realpathSync(workspace).slice(1)}/decoy`;
    writeFileSync(join(workspace, 'decoy'), 'a harmless file\n');
    const landing = resolve(realpathSync(workspace), rel);
    // Where the fixture's folders live (removed with it), and not the decoy itself.
    const live = landing.startsWith(`${realpathSync(dirname(f.home))}/`) && landing !== join(realpathSync(workspace), 'decoy');
    if (!live) {
      console.warn(`/proc/self test: the workspace is too shallow for Tandem's cwd ${tandemCwd}; only the question is checked`);
    } else {
      mkdirSync(dirname(landing), { recursive: true });
      symlinkSync(secret, landing);
    }
    await asks(id, `cat /proc/self/cwd/${rel}`);
    const why = await f.call(agent, 'terminal_send', { id, text: `head -n 1 /proc/thread-self/cwd/${rel}`, waitMs: 300 });
    expect(why).toMatchObject({ status: 'awaiting_approval' });
    expect(f.layer.state().approvals.find((entry) => entry.terminalId === id)?.why).toMatch(/passes through \/proc\/thread-self/);
    f.layer.answerApproval({ requestId: f.layer.state().approvals.find((entry) => entry.terminalId === id)!.id, decision: 'reject', reason: 'no' });
    await asks(id, 'cat /dev/stdin');
    // A link in the workspace to /proc/self counts the same.
    symlinkSync('/proc/self', join(workspace, 'me'));
    try {
      await asks(id, `cat me/cwd/${rel}`);
    } finally {
      rmSync(join(workspace, 'me'), { force: true });
    }
    const read = await f.call(agent, 'terminal_read', { id });
    expect(JSON.stringify(read)).not.toContain('PROC-SELF canary');
    // The attack is live: the command's own /proc/self reads the secret.
    if (live) expect(execFileSync('cat', [`/proc/self/cwd/${rel}`], { cwd: workspace, encoding: 'utf8' })).toContain('PROC-SELF canary');
  });
});

describe("the shell's folder as the kernel holds it (black-box round 8)", () => {
  it('a folder renamed under the shell, with a decoy put in its place: operands and git resolve where the shell is, so they ask', async () => {
    const secret = join(f.home, 'renamed-secret');
    writeFileSync(secret, 'RENAMED canary');
    const sub = join(workspace, 'moving');
    mkdirSync(sub);
    writeFileSync(join(sub, 'k'), 'harmless\n');
    execFileSync('git', ['init', '-q'], { cwd: sub });
    // Unconfined: a confined terminal's workspace is a mount that follows the moved folder, and
    // the secret is hidden there (round 8: "No such file").
    const mover = await f.client(f.layer.pairAgent({ name: 'mover' }).token);
    f.layer.setAgentPolicy({ name: 'mover', policy: 'ask-unless-allowed', sandbox: 'off' });
    const opened = await f.call(mover, 'terminal_open', { title: 'moving', shell: 'bash', cwd: sub });
    expect(opened).not.toHaveProperty('isError');
    const id = opened.id as string;
    const runsWithoutAsking = async (id: string, text: string) => {
      const result = await f.call(mover, 'terminal_send', { id, text, waitMs: 55_000 });
      expect(result, `${text}: ${f.layer.state().approvals.find((entry) => entry.terminalId === id)?.why}`).toMatchObject({ status: 'done', approval: null });
      return result;
    };
    const asks = async (id: string, text: string) => {
      expect(await f.call(mover, 'terminal_send', { id, text, waitMs: 300 }), text).toMatchObject({ status: 'awaiting_approval' });
      const request = f.layer.state().approvals.find((entry) => entry.terminalId === id)!;
      f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'no' });
    };
    expect((await runsWithoutAsking(id, 'cat k')).output).toBe('harmless');
    expect((await runsWithoutAsking(id, 'git status --short')).output).toBe('?? k');
    // The agent's own file tool: the shell's folder moves aside, a decoy takes its name, and the
    // moved folder's file becomes a link to the secret and its repository gets a hook.
    renameSync(sub, join(workspace, 'moved'));
    mkdirSync(sub);
    writeFileSync(join(sub, 'k'), 'decoy\n');
    rmSync(join(workspace, 'moved', 'k'));
    symlinkSync(secret, join(workspace, 'moved', 'k'));
    const canary = join(f.home, 'renamed-hook-ran');
    writeFileSync(join(workspace, 'moved', '.git', 'hooks', 'post-index-change'), `#!/bin/sh\ntouch ${canary}\n`, { mode: 0o755 });
    await asks(id, 'cat k');
    await asks(id, 'git status');
    const read = await f.call(mover, 'terminal_read', { id });
    expect(JSON.stringify(read)).not.toContain('RENAMED canary');
    expect(existsSync(canary)).toBe(false);
    // The attack is live: the shell reads the moved folder's k.
    expect(readFileSync(join(workspace, 'moved', 'k'), 'utf8')).toBe('RENAMED canary');
    rmSync(join(workspace, 'moved'), { recursive: true, force: true });
    rmSync(sub, { recursive: true, force: true });
  });
});

describe('issue 23, attack 8: reads that can change under the agent ask', () => {
  it('tail -f --retry missing asks, and no later command turns it into a read of a secret', async () => {
    const id = await open();
    const secret = join(f.home, '.ssh-like-secret');
    writeFileSync(secret, 'PRIVATE KEY canary');
    await asks(id, 'tail -f --retry missing');
    expect(f.layer.state().approvals).toEqual([]);
    // Following without --retry, a name that is not there yet, a FIFO: each asks, with its reason on the card.
    const pending = await f.call(agent, 'terminal_send', { id, text: 'tail --retry missing', waitMs: 300 });
    expect(pending).toMatchObject({ status: 'awaiting_approval' });
    expect(f.layer.state().approvals.find((entry) => entry.terminalId === id)?.why).toMatch(/--retry|does not exist yet/);
    f.layer.answerApproval({ requestId: f.layer.state().approvals.find((entry) => entry.terminalId === id)!.id, decision: 'reject', reason: 'no' });
    await asks(id, 'cat missing');
    await asks(id, 'tail -f README.md');
    // The person's own command makes the name a link to the secret: the agent's read of it asks too.
    symlinkSync(secret, join(workspace, 'missing'));
    try {
      await asks(id, 'cat missing');
    } finally {
      rmSync(join(workspace, 'missing'), { force: true });
    }
    execFileSync('mkfifo', [join(workspace, 'pipe')]);
    try {
      await asks(id, 'cat pipe');
    } finally {
      rmSync(join(workspace, 'pipe'), { force: true });
    }
    // A plain read of a file that is there still runs.
    await runsWithoutAsking(id, 'tail -n 1 README.md');
  });
});

describe('class 5: control sequences in text are refused', () => {
  it('names the character, and nothing is typed', async () => {
    const id = await open();
    const canary = join(workspace, 'paste-ran');
    const result = await f.call(agent, 'terminal_send', { id, text: `echo hi\x1b[201~\rtouch ${canary}` });
    expect(result).toMatchObject({ isError: true, error: { code: 'invalid_argument', message: expect.stringContaining('ESC (U+001B) at position 7') } });
    const bidi = await f.call(agent, 'terminal_send', { id, text: 'cat README.md\u202e' });
    expect(bidi).toMatchObject({ isError: true, error: { code: 'invalid_argument', message: expect.stringContaining('U+202E') } });
    expect(f.layer.state().approvals).toEqual([]);
    // The person's own edit is held to the same rule: the card shows what will be typed.
    const pending = await f.call(agent, 'terminal_send', { id, text: 'printf approved', waitMs: 300 });
    expect(pending).toMatchObject({ status: 'awaiting_approval' });
    const [question] = f.layer.state().approvals;
    expect(() => f.layer.answerApproval({ requestId: question!.id, decision: 'edit', command: `echo\x1b[201~touch ${canary}` })).toThrow(/ESC \(U\+001B\)/);
    f.layer.answerApproval({ requestId: question!.id, decision: 'reject', reason: 'no' });
    await runsWithoutAsking(id, 'pwd');
    expect(existsSync(canary)).toBe(false);
  });
});

describe('black-box round 11: entries the card offers, and zsh', () => {
  it("'Always allow sed', 'git config', 'diff' and 'uniq' run nothing, read nothing outside and write no git config", async () => {
    const { token } = f.layer.pairAgent({ name: 'offered' });
    f.layer.setAgentPolicy({ name: 'offered', policy: 'ask-unless-allowed', sandbox: 'off', allow: ['sed', 'git config', 'diff', 'uniq'] });
    const offered = await f.client(token);
    const opened = await f.call(offered, 'terminal_open', { title: 'offered', shell: 'bash', cwd: workspace });
    const id = opened.id as string;
    const secret = join(f.home, '.ssh', 'id_round11');
    mkdirSync(dirname(secret), { recursive: true });
    writeFileSync(secret, 'ROUND11-SECRET\n');
    const planted = join(workspace, 'notes.txt');
    writeFileSync(planted, `[core]\n\tfsmonitor = touch ${join(f.home, 'fsmonitor-ran')}; false #\n`);
    const config = readFileSync(join(workspace, '.git', 'config'), 'utf8');
    const asksFor = async (text: string) => {
      const result = await f.call(offered, 'terminal_send', { id, text, waitMs: 300 });
      expect(result, text).toMatchObject({ status: 'awaiting_approval' });
      const request = f.layer.state().approvals.find((entry) => entry.terminalId === id);
      f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
    };
    try {
      await asksFor("sed '1e touch sed-ran' README.md");
      await asksFor("sed -n 'w sed-wrote' README.md");
      await asksFor(`git config --list --file=${secret}`);
      await asksFor(`diff --from-file=${secret} README.md`);
      await asksFor('uniq notes.txt .git/config');
      expect(existsSync(join(workspace, 'sed-ran'))).toBe(false);
      expect(existsSync(join(workspace, 'sed-wrote'))).toBe(false);
      expect(readFileSync(join(workspace, '.git', 'config'), 'utf8')).toBe(config);
      // What stays allowed still runs.
      expect(await f.call(offered, 'terminal_send', { id, text: 'uniq README.md', waitMs: 55_000 })).toMatchObject({
        status: 'done',
        approval: null,
        output: 'hello from the readme',
      });
    } finally {
      rmSync(planted, { force: true });
      rmSync(secret, { force: true });
    }
  });

  it('round 12: entries for git rebase, make, tar and zip run no command from their options', async () => {
    const { token } = f.layer.pairAgent({ name: 'offered12' });
    f.layer.setAgentPolicy({ name: 'offered12', policy: 'ask-unless-allowed', sandbox: 'off', allow: ['git rebase', 'make test', 'tar', 'zip', 'npm test'] });
    const offered = await f.client(token);
    const id = (await f.call(offered, 'terminal_open', { title: 'offered12', shell: 'bash', cwd: workspace })).id as string;
    const lines = [
      "git rebase -x 'touch r12-ran' HEAD~1",
      "make test '--eval=$(shell touch r12-ran)'",
      "tar cf r12.tar README.md '--checkpoint-action=exec=touch r12-ran' --checkpoint=1",
      "zip r12.zip README.md -T -TT 'touch r12-ran;'",
      "npm test '--node-options=--require=./r12.js'",
    ];
    for (const text of lines) {
      const result = await f.call(offered, 'terminal_send', { id, text, waitMs: 300 });
      expect(result, text).toMatchObject({ status: 'awaiting_approval' });
      const request = f.layer.state().approvals.find((entry) => entry.terminalId === id);
      f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
    }
    for (const made of ['r12-ran', 'r12.tar', 'r12.zip']) expect(existsSync(join(workspace, made)), made).toBe(false);
  });

  it.runIf(hasCommand('zsh'))("zsh: which prints no function of the person's, it asks", async () => {
    const rc = join(f.home, '.zshrc');
    writeFileSync(rc, 'deploy() { echo "Bearer ROUND11-FUNCTION-TOKEN" }\n');
    try {
      const id = await open('zsh');
      const result = await f.call(agent, 'terminal_send', { id, text: 'which deploy', waitMs: 300 });
      expect(result).toMatchObject({ status: 'awaiting_approval' });
      expect(JSON.stringify(result)).not.toContain('ROUND11-FUNCTION-TOKEN');
    } finally {
      rmSync(rc, { force: true });
    }
  });
});
