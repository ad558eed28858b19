import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';

/**
 * Issue 23, "git as git reads it": the configuration git would use (found by git itself) must
 * hold only keys known to run nothing, or an allow-listed git line asks. Each attack goes through
 * the real MCP client and a real bash, by an agent with the default policy, and proves that the
 * program the configuration names did not run (its canary file is absent); where plain git runs
 * that program for the same line, the test shows it does (the attack is live, not hypothetical).
 */
let f: AgentFixture;
let agent: Client;
let project: string;
let n = 0;

const gitEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: f.home, GIT_CONFIG_NOSYSTEM: '1' };
  return env;
};
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', ...args], { cwd, encoding: 'utf8', env: gitEnv() });

/** A fresh repository inside the project with one commit, and a canary path with a script that creates it. */
function scenario(): { repo: string; canary: string; script: string } {
  n += 1;
  const repo = join(project, `repo${n}`);
  mkdirSync(join(repo, 'pkg'), { recursive: true });
  git(repo, 'init', '-q');
  writeFileSync(join(repo, 'a.txt'), 'one\n');
  writeFileSync(join(repo, 'pkg', 'b.txt'), 'one\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'one');
  const canary = join(f.home, `ran-${n}`);
  const script = join(f.home, `program-${n}.sh`);
  writeFileSync(script, `#!/bin/sh\ntouch ${canary}\ncat >/dev/null 2>&1 </dev/null\n`);
  chmodSync(script, 0o755);
  return { repo, canary, script };
}

beforeAll(async () => {
  f = await startAgentFixture();
  agent = await f.client(f.layer.pairAgent({ name: 'gitty' }).token);
  project = join(f.home, 'project');
  mkdirSync(project, { recursive: true });
});
afterAll(async () => {
  await f.close();
});
afterEach(async () => {
  for (const request of f.layer.state().approvals) f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'test over' });
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

async function open(cwd: string, as: Client = agent): Promise<string> {
  const opened = await f.call(as, 'terminal_open', { title: 'git-attack', shell: 'bash', cwd });
  expect(opened, JSON.stringify(opened)).not.toHaveProperty('isError');
  return opened.id as string;
}

/** The line waits for the person and the card names `key`; then it is rejected, so nothing runs. */
async function asksNaming(id: string, text: string, key: string, as: Client = agent): Promise<void> {
  const result = await f.call(as, 'terminal_send', { id, text, waitMs: 300 });
  expect(result, text).toMatchObject({ status: 'awaiting_approval' });
  const request = f.layer.state().approvals.find((entry) => entry.terminalId === id);
  expect(request?.command).toBe(text);
  expect(request?.why).toContain(key);
  f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
}

describe('git lines ask unless every key git would use is known to run nothing', () => {
  it('a repository with only harmless keys runs git status and git diff without asking', async () => {
    const { repo } = scenario();
    git(repo, 'config', 'user.name', 'Someone');
    git(repo, 'config', 'core.autocrlf', 'input');
    git(repo, 'remote', 'add', 'origin', 'https://example.invalid/x.git');
    const id = await open(repo);
    for (const text of ['git status', 'git diff'])
      expect(await f.call(agent, 'terminal_send', { id, text, waitMs: 55_000 }), text).toMatchObject({ status: 'done', approval: null });
  });

  it('a workspace inside a larger repository: git reads there ask, since git reads the whole repository (round s41 W2)', async () => {
    const { repo } = scenario();
    const nonce = String(Math.floor(Math.random() * 1e9));
    writeFileSync(join(repo, 'secret.txt'), `secret-${nonce}\n`);
    git(repo, 'add', 'secret.txt');
    git(repo, 'commit', '-qm', 'secret');
    writeFileSync(join(repo, 'secret.txt'), `changed-${nonce}\n`);
    // The workspace is the package folder; the repository's top is above it.
    const id = await open(join(repo, 'pkg'));
    for (const text of ['git show HEAD:../secret.txt', 'git diff', 'git log -p', 'git grep -n secret -- :/']) {
      await asksNaming(id, text, "reaches outside the terminal's workspace");
    }
    expect(JSON.stringify(await f.call(agent, 'terminal_read', { id }))).not.toContain(nonce);
    // Opened at the repository's top, the same reads run.
    const top = await open(repo);
    expect(await f.call(agent, 'terminal_send', { id: top, text: 'git status', waitMs: 55_000 })).toMatchObject({ status: 'done', approval: null });
  });

  it('an empty pkg/.git directory: git uses the parent repository and its diff.external, so git diff asks', async () => {
    const { repo, canary, script } = scenario();
    mkdirSync(join(repo, 'pkg', '.git'));
    git(repo, 'config', 'diff.external', script);
    writeFileSync(join(repo, 'pkg', 'b.txt'), 'two\n');
    const id = await open(join(repo, 'pkg'));
    await asksNaming(id, 'git diff', 'diff.external');
    expect(existsSync(canary)).toBe(false);
    // Plain git in the same place runs the parent's program: the attack is live.
    git(join(repo, 'pkg'), 'diff');
    expect(existsSync(canary)).toBe(true);
  });

  it('core.hooksPath: git status would run its post-index-change hook, so it asks', async () => {
    const { repo, canary, script } = scenario();
    mkdirSync(join(repo, '.githooks'));
    writeFileSync(join(repo, '.githooks', 'post-index-change'), `#!/bin/sh\nexec ${script}\n`);
    chmodSync(join(repo, '.githooks', 'post-index-change'), 0o755);
    git(repo, 'config', 'core.hooksPath', '.githooks');
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    const id = await open(repo);
    await asksNaming(id, 'git status', 'core.hookspath');
    expect(existsSync(canary)).toBe(false);
    // Plain git status runs the hook when it rewrites the index: a clean entry whose stat data
    // changed makes it rewrite, however long ago the index was written (no racy-git timing).
    utimesSync(join(repo, 'pkg', 'b.txt'), 1_000_000, 1_000_000);
    git(repo, 'status');
    expect(existsSync(canary)).toBe(true);
  });

  it('includeIf gitdir: an included file that sets core.fsmonitor makes git status ask', async () => {
    const { repo, canary, script } = scenario();
    writeFileSync(join(repo, 'inc.cfg'), `[core]\n\tfsmonitor = ${script}\n`);
    git(repo, 'config', `includeIf.gitdir:${repo}/.path`, join(repo, 'inc.cfg'));
    const id = await open(repo);
    await asksNaming(id, 'git status', 'core.fsmonitor');
    expect(existsSync(canary)).toBe(false);
    // Plain git status runs the hook when it rewrites the index: a clean entry whose stat data
    // changed makes it rewrite, however long ago the index was written (no racy-git timing).
    utimesSync(join(repo, 'pkg', 'b.txt'), 1_000_000, 1_000_000);
    git(repo, 'status');
    expect(existsSync(canary)).toBe(true);
  });

  // Found black-box (round 4): the reach was judged by the worktree's top alone, so a `.git` file
  // in the workspace naming another repository's git directory gave allow-listed lines its history.
  it('a .git file or an alternates line naming another repository: git reads ask, and nothing of that repository is returned', async () => {
    const { repo: victim } = scenario();
    const nonce = String(Math.floor(Math.random() * 1e9));
    writeFileSync(join(victim, '.env'), `PASSWORD=hunter-${nonce}\n`);
    git(victim, 'add', '.env');
    git(victim, 'commit', '-qm', 'env');
    const blob = git(victim, 'rev-parse', 'HEAD:.env').trim();
    // A folder whose .git file points at the victim's git directory.
    const pointed = join(project, `pointed${n}`);
    mkdirSync(pointed);
    writeFileSync(join(pointed, '.git'), `gitdir: ${join(victim, '.git')}\n`);
    // A repository of its own that borrows the victim's objects.
    const borrowing = join(project, `borrowing${n}`);
    mkdirSync(borrowing);
    git(borrowing, 'init', '-q');
    writeFileSync(join(borrowing, '.git', 'objects', 'info', 'alternates'), `${join(victim, '.git', 'objects')}\n`);
    // A worktree entry of its own inside the folder, whose commondir is the victim's (found by review).
    const faked = join(project, `faked${n}`);
    mkdirSync(join(faked, 'entry'), { recursive: true });
    writeFileSync(join(faked, '.git'), 'gitdir: entry\n');
    writeFileSync(join(faked, 'entry', 'HEAD'), 'ref: refs/heads/master\n');
    writeFileSync(join(faked, 'entry', 'commondir'), `${join(victim, '.git')}\n`);
    writeFileSync(join(faked, 'entry', 'gitdir'), `${join(faked, '.git')}\n`);
    // Alternates of alternates: a store inside the folder that borrows the victim's (found by review).
    const chained = join(project, `chained${n}`);
    mkdirSync(join(chained, 'store', 'objects', 'info'), { recursive: true });
    git(chained, 'init', '-q');
    writeFileSync(join(chained, '.git', 'objects', 'info', 'alternates'), `${join(chained, 'store', 'objects')}\n`);
    writeFileSync(join(chained, 'store', 'objects', 'info', 'alternates'), `${join(victim, '.git', 'objects')}\n`);
    // A repository of its own whose objects and refs folders are the victim's (black-box round 6).
    const linkedIn = join(project, `linkedin${n}`);
    mkdirSync(linkedIn);
    git(linkedIn, 'init', '-q');
    rmSync(join(linkedIn, '.git', 'objects'), { recursive: true, force: true });
    rmSync(join(linkedIn, '.git', 'refs'), { recursive: true, force: true });
    symlinkSync(join(victim, '.git', 'objects'), join(linkedIn, '.git', 'objects'));
    symlinkSync(join(victim, '.git', 'refs'), join(linkedIn, '.git', 'refs'));
    // Plain git reads the victim's secret from each: the attacks are live.
    expect(git(pointed, 'show', 'HEAD:.env')).toContain(nonce);
    expect(git(borrowing, 'show', blob)).toContain(nonce);
    expect(git(faked, 'show', 'HEAD:.env')).toContain(nonce);
    expect(git(chained, 'show', blob)).toContain(nonce);
    expect(git(linkedIn, 'log', '-p', '--all')).toContain(nonce);
    // One terminal at a time (an agent runs at most 4): each asks, and shows nothing of the victim.
    // Unconfined (the sandbox refuses to open where `.git` holds a link at all): the judge's own check.
    const { token } = f.layer.pairAgent({ name: `unconfined${n}` });
    f.layer.setAgentPolicy({ name: `unconfined${n}`, policy: 'ask-unless-allowed', sandbox: 'off' });
    const unconfined = await f.client(token);
    for (const [dir, texts] of [
      [pointed, ['git show HEAD:.env', 'git log -p', 'git status']],
      [borrowing, [`git show ${blob}`]],
      [faked, ['git show HEAD:.env']],
      [chained, [`git show ${blob}`]],
      [linkedIn, ['git log -p --all']],
    ] as const) {
      const id = await open(dir, unconfined);
      for (const text of texts) await asksNaming(id, text, "reaches outside the terminal's workspace", unconfined);
      expect(JSON.stringify(await f.call(unconfined, 'terminal_read', { id }))).not.toContain(nonce);
      await f.host.close(id);
    }
  });

  it('a linked worktree of a repository outside the workspace runs git status without asking; a .git file naming that worktree entry elsewhere asks', async () => {
    const { repo } = scenario();
    const linked = join(project, `worktree${n}`);
    git(repo, 'worktree', 'add', '-q', linked);
    // The workspace is the linked worktree; its repository (the main one) lies outside it.
    const id = await open(linked);
    expect(await f.call(agent, 'terminal_send', { id, text: 'git status', waitMs: 55_000 })).toMatchObject({ status: 'done', approval: null });
    // The same entry named from a folder the repository never registered.
    const copy = join(project, `copied${n}`);
    mkdirSync(copy);
    writeFileSync(join(copy, '.git'), `gitdir: ${join(repo, '.git', 'worktrees', `worktree${n}`)}\n`);
    await asksNaming(await open(copy), 'git status', "reaches outside the terminal's workspace");
  });

  it("a linked worktree's config.worktree (extensions.worktreeConfig) makes git status there ask", async () => {
    const { repo, canary, script } = scenario();
    git(repo, 'config', 'extensions.worktreeConfig', 'true');
    const linked = join(project, `linked${n}`);
    git(repo, 'worktree', 'add', '-q', linked);
    git(linked, 'config', '--worktree', 'core.fsmonitor', script);
    // The main worktree does not use the linked one's config.worktree.
    const main = await open(repo);
    expect(await f.call(agent, 'terminal_send', { id: main, text: 'git status', waitMs: 55_000 })).toMatchObject({ status: 'done', approval: null });
    const id = await open(linked);
    await asksNaming(id, 'git status', 'core.fsmonitor');
    expect(existsSync(canary)).toBe(false);
    git(linked, 'status');
    expect(existsSync(canary)).toBe(true);
  });

  it(".git/hooks/post-index-change (no key needed) makes git status and git diff ask; a commit's hook leaves them alone (black-box round 7)", async () => {
    const { repo, canary, script } = scenario();
    // The agent's own file tool writes the hook (or a downloaded repository ships it); a tracked
    // file's time changes, so status and diff refresh the index and write it back.
    const hook = join(repo, '.git', 'hooks', 'post-index-change');
    writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), `#!/bin/sh\nexec ${script}\n`, { mode: 0o755 });
    const id = await open(repo);
    utimesSync(join(repo, 'a.txt'), new Date(), new Date(Date.now() - 60_000));
    // A hook only a commit runs: the looking commands still run without asking, and run no hook.
    expect(await f.call(agent, 'terminal_send', { id, text: 'git status', waitMs: 55_000 })).toMatchObject({ status: 'done', approval: null });
    expect(existsSync(canary)).toBe(false);
    writeFileSync(hook, `#!/bin/sh\nexec ${script}\n`, { mode: 0o755 });
    utimesSync(join(repo, 'a.txt'), new Date(), new Date(Date.now() - 30_000));
    await asksNaming(id, 'git status', 'post-index-change');
    await asksNaming(id, 'git diff', 'post-index-change');
    expect(f.layer.state().approvals).toEqual([]);
    expect(existsSync(canary)).toBe(false);
    // Plain git status runs the hook: the attack is live.
    git(repo, 'status');
    expect(existsSync(canary)).toBe(true);
  });

  it("an allowed 'git config' entry writes nothing: --global and a plain key = value ask, the person's config stays (black-box round 9)", async () => {
    const { repo, script } = scenario();
    const { token } = f.layer.pairAgent({ name: 'configurer' });
    f.layer.setAgentPolicy({ name: 'configurer', policy: 'ask-unless-allowed', sandbox: 'off', allow: ['git config', 'git status'] });
    const configurer = await f.client(token);
    const id = await open(repo, configurer);
    expect(await f.call(configurer, 'terminal_send', { id, text: 'git config --get core.bare', waitMs: 55_000 })).toMatchObject({
      status: 'done',
      approval: null,
      output: 'false',
    });
    await asksNaming(id, `git config --global core.fsmonitor ${script}`, 'writes configuration', configurer);
    await asksNaming(id, `git config core.fsmonitor ${script}`, 'writes configuration', configurer);
    expect(existsSync(join(f.home, '.gitconfig')) ? git(repo, 'config', '--global', '--list') : '').not.toContain('fsmonitor');
    expect(git(repo, 'config', '--local', '--list')).not.toContain('fsmonitor');
  });

  it('core.fsmonitor in the repository makes git status ask', async () => {
    const { repo, canary, script } = scenario();
    git(repo, 'config', 'core.fsmonitor', script);
    const id = await open(repo);
    await asksNaming(id, 'git status', 'core.fsmonitor');
    expect(existsSync(canary)).toBe(false);
    // Plain git status runs the hook when it rewrites the index: a clean entry whose stat data
    // changed makes it rewrite, however long ago the index was written (no racy-git timing).
    utimesSync(join(repo, 'pkg', 'b.txt'), 1_000_000, 1_000_000);
    git(repo, 'status');
    expect(existsSync(canary)).toBe(true);
  });

  it('core.sshCommand, alias.* and any key not known to be harmless make git lines ask', async () => {
    const { repo, canary, script } = scenario();
    git(repo, 'config', 'core.sshCommand', script);
    const id = await open(repo);
    await asksNaming(id, 'git status', 'core.sshcommand');
    git(repo, 'config', '--unset', 'core.sshCommand');
    git(repo, 'config', 'alias.status', `!${script}`);
    await asksNaming(id, 'git status', 'alias.status');
    git(repo, 'config', '--unset', 'alias.status');
    git(repo, 'config', 'frobnicate.anything', 'x');
    await asksNaming(id, 'git log -1', 'frobnicate.anything');
    expect(existsSync(canary)).toBe(false);
  });

  it('filter.*.clean named by .gitattributes makes git status and git diff ask', async () => {
    const { repo, canary, script } = scenario();
    writeFileSync(join(repo, '.gitattributes'), '*.txt filter=evil\n');
    git(repo, 'config', 'filter.evil.clean', script);
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    const id = await open(repo);
    await asksNaming(id, 'git status', 'filter.evil.clean');
    await asksNaming(id, 'git diff', 'filter.evil.clean');
    expect(existsSync(canary)).toBe(false);
    git(repo, 'diff');
    expect(existsSync(canary)).toBe(true);
    rmSync(canary);
  });
});

/**
 * Repositories git runs itself in for status and diff: a nested repository recorded in the
 * outer index as a gitlink (mode 160000), without `.gitmodules`, and one nested in that; and a
 * partial clone, whose every read of a missing object fetches from the remote (black-box round
 * 41, F1-F3).
 */
describe('git as git reads it: nested repositories and partial clones', () => {
  /** `repo/path` as its own repository with a.txt committed and `*.txt filter=evil` whose clean program is `script`; recorded in `repo`'s index as a gitlink. */
  function nest(repo: string, path: string, script: string | null): string {
    const dir = join(repo, path);
    mkdirSync(dir, { recursive: true });
    git(dir, 'init', '-q');
    writeFileSync(join(dir, 'a.txt'), 'one\n');
    if (script) writeFileSync(join(dir, '.gitattributes'), '*.txt filter=evil\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'inner');
    // git add of an embedded repository records a gitlink (and hints about submodules).
    git(repo, 'add', path);
    git(repo, 'commit', '-qm', `nest ${path}`);
    expect(git(repo, 'ls-files', '--stage', path)).toMatch(/^160000 /);
    if (script) git(dir, 'config', 'filter.evil.clean', script);
    return dir;
  }

  it("a nested repository's filter: git status and git diff in the outer repository ask, naming it", async () => {
    const { repo, canary, script } = scenario();
    const inner = nest(repo, 'vendor/inner', script);
    writeFileSync(join(inner, 'a.txt'), 'two\n');
    const id = await open(repo);
    await asksNaming(id, 'git status', 'filter.evil.clean');
    await asksNaming(id, 'git diff', 'filter.evil.clean');
    expect(f.layer.state().approvals).toEqual([]);
    expect(existsSync(canary)).toBe(false);
    // The reason says where: the nested repository's path, quoted.
    await f.call(agent, 'terminal_send', { id, text: 'git status', waitMs: 300 });
    const request = f.layer.state().approvals.find((entry) => entry.terminalId === id)!;
    expect(request.why).toContain('nested repository "vendor/inner"');
    f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'no' });
    // Plain git status in the outer repository runs the nested one's filter: the attack is live.
    git(repo, 'status');
    expect(existsSync(canary)).toBe(true);
  });

  it('a repository nested in a nested one: git status in the outermost asks', async () => {
    const { repo, canary, script } = scenario();
    const mid = join(repo, 'mid');
    mkdirSync(mid);
    git(mid, 'init', '-q');
    writeFileSync(join(mid, 'm.txt'), 'm\n');
    git(mid, 'add', '.');
    git(mid, 'commit', '-qm', 'mid');
    const inner = nest(mid, 'inner', script);
    git(repo, 'add', 'mid');
    git(repo, 'commit', '-qm', 'nest mid');
    writeFileSync(join(inner, 'a.txt'), 'two\n');
    const id = await open(repo);
    await asksNaming(id, 'git status', 'filter.evil.clean');
    expect(existsSync(canary)).toBe(false);
    git(repo, 'status');
    expect(existsSync(canary)).toBe(true);
  });

  it('nested repositories with harmless keys: git status and git diff still run without asking', async () => {
    const { repo } = scenario();
    nest(repo, 'one', null);
    nest(join(repo, 'one'), 'two', null);
    writeFileSync(join(repo, 'one', 'two', 'a.txt'), 'changed\n');
    const id = await open(repo);
    for (const text of ['git status', 'git diff'])
      expect(await f.call(agent, 'terminal_send', { id, text, waitMs: 55_000 }), text).toMatchObject({ status: 'done', approval: null });
  });

  it("a submodule as git adds it runs git status and git diff without asking; its core.worktree led elsewhere asks, and that folder's file is not returned", async () => {
    const { repo } = scenario();
    const { repo: library } = scenario();
    git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', library, 'deps/lib');
    git(repo, 'commit', '-qm', 'submodule');
    const moduleConfig = join(repo, '.git', 'modules', 'deps', 'lib', 'config');
    // git wrote the submodule's worktree into its configuration: a key off the list, judged by where it leads.
    expect(git(repo, 'config', '-f', moduleConfig, 'core.worktree')).toBe('../../../../deps/lib\n');
    writeFileSync(join(repo, 'deps', 'lib', 'a.txt'), 'changed\n');
    const id = await open(repo);
    for (const text of ['git status', 'git diff'])
      expect(await f.call(agent, 'terminal_send', { id, text, waitMs: 55_000 }), text).toMatchObject({ status: 'done', approval: null });
    // The submodule's worktree moved outside the project, to a folder holding a file named as the tracked one.
    const elsewhere = join(f.home, `elsewhere-${n}`);
    mkdirSync(elsewhere);
    const nonce = `outside-${Date.now()}`;
    writeFileSync(join(elsewhere, 'a.txt'), `${nonce}\n`);
    git(repo, 'config', '-f', moduleConfig, 'core.worktree', elsewhere);
    for (const text of ['git status', 'git diff']) await asksNaming(id, text, 'core.worktree');
    const read = await f.call(agent, 'terminal_read', { id });
    expect(JSON.stringify(read)).not.toContain(nonce);
    // Plain git diff there reads the outside folder's file: the attack is live. Closed first: while
    // a confined terminal is open, its neutral `commondir` makes git ignore a module's core.worktree.
    await f.host.close(id);
    expect(git(join(repo, 'deps', 'lib'), 'diff')).toContain(nonce);
  });

  it('more nested repositories than the check reads: git status asks, saying so', async () => {
    const { repo } = scenario();
    for (let i = 0; i < 17; i++) nest(repo, `n${i}`, null);
    const id = await open(repo);
    await asksNaming(id, 'git status', 'nested repositories or submodules to check');
  });

  it('a partial clone: git show of a missing blob asks instead of fetching it from the remote', async () => {
    const { repo: origin } = scenario();
    writeFileSync(join(origin, 'a.txt'), 'only in the second commit\n');
    git(origin, 'commit', '-qam', 'two');
    writeFileSync(join(origin, 'a.txt'), 'three\n');
    git(origin, 'commit', '-qam', 'three');
    git(origin, 'config', 'uploadpack.allowFilter', 'true');
    git(origin, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
    const clone = join(project, `partial${n}`);
    git(project, 'clone', '-q', '--filter=blob:none', `file://${origin}`, clone);
    const missing = () =>
      git(clone, 'rev-list', '--objects', '--missing=print', 'HEAD~1')
        .split('\n')
        .filter((line) => line.startsWith('?'));
    // The first commit's a.txt was not fetched.
    expect(missing()).toHaveLength(1);
    const id = await open(clone);
    const result = await f.call(agent, 'terminal_send', { id, text: 'git show HEAD~1:a.txt', waitMs: 300 });
    expect(result).toMatchObject({ status: 'awaiting_approval' });
    const request = f.layer.state().approvals.find((entry) => entry.terminalId === id)!;
    expect(request.why).toMatch(/"remote\.origin\.(promisor|partialclonefilter)"|"extensions\.partialclone"/);
    f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'no' });
    // Nothing was fetched: the blob is still missing.
    expect(missing()).toHaveLength(1);
    // Plain git fetches it from the remote to show it: the attack is live.
    expect(git(clone, 'show', 'HEAD~1:a.txt')).toBe('only in the second commit\n');
    expect(missing()).toHaveLength(0);
  });
});
