/**
 * The person's tools cannot be poisoned (issue 24): attacks on the workspace repository's
 * `.git` from inside a confined terminal, through the MCP tools with real bubblewrap; then the
 * person's own unconfined `git status` and `git commit` in the workspace, which must run no
 * hook the agent planted (a canary file it would write stays absent).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { AgentFixture } from './agent-helpers.js';
import { confinedAgent, describeSandbox, personGitIn } from './sandbox-helpers.js';

type Result = Record<string, unknown> & { status?: string; exitCode?: number | null; output?: string };

describeSandbox('the workspace repository, attacked from a confined terminal', () => {
  let f: AgentFixture;
  let client: Client;
  let repo: string;
  let canary: string;
  /** The person's git, unconfined, with no global config of theirs in the way. */
  let personGit: (...args: string[]) => string;
  const send = (id: string, text: string) => f.call(client, 'terminal_send', { id, text }) as Promise<Result>;
  const fails = async (id: string, text: string) => {
    const r = await send(id, text);
    expect(r.status, `${text}: ${r.output}`).toBe('done');
    expect(r.exitCode, `${text}: ${r.output}`).not.toBe(0);
    return r;
  };
  const open = async () => (await f.call(client, 'terminal_open', { title: 'git', cwd: repo })) as Result & { id: string };

  beforeAll(async () => {
    ({ f, client } = await confinedAgent('committer'));
    repo = f.project;
    personGit = personGitIn(repo, f.home);
    canary = join(f.root, 'CANARY');
    personGit('init', '-q');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    // A submodule and a linked worktree inside the workspace: theirs are protected too.
    const upstream = join(f.root, 'upstream');
    mkdirSync(upstream);
    execFileSync('git', ['-c', 'user.name=P', '-c', 'user.email=p@e', 'init', '-q'], { cwd: upstream });
    execFileSync('git', ['-c', 'user.name=P', '-c', 'user.email=p@e', 'commit', '-q', '--allow-empty', '-m', 'up'], { cwd: upstream });
    personGit('-c', 'protocol.file.allow=always', 'submodule', '-q', 'add', upstream, 'sub');
    personGit('add', '.');
    personGit('commit', '-q', '-m', 'start');
    personGit('worktree', 'add', '-q', 'wt');
  });
  afterAll(async () => {
    await f.close();
  });
  afterEach(async () => {
    await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
  });

  it('refuses a workspace inside the repository’s machinery: its .git, a folder of it, its hooks folder', async () => {
    // Found black-box: opened in .git, the agent wrote hooks/pre-commit and the person's commit ran it.
    mkdirSync(join(repo, '.githooks'), { recursive: true });
    personGit('config', 'core.hooksPath', '.githooks');
    try {
      for (const cwd of [join(repo, '.git'), join(repo, '.git', 'hooks'), join(repo, '.git', 'modules', 'sub'), join(repo, '.githooks')]) {
        const r = (await f.call(client, 'terminal_open', { title: 'in-git', cwd })) as Result & { error?: { code: string; message: string } };
        expect(r.error?.code, cwd).toBe('sandbox_unavailable');
      }
      expect(f.host.list().filter((t) => t.title === 'in-git')).toEqual([]);
      expect(existsSync(join(repo, '.git', 'hooks', 'pre-commit'))).toBe(false);
      // The repository itself still opens.
      expect(await open()).toMatchObject({ sandbox: { mode: 'workspace-write' } });
    } finally {
      personGit('config', '--unset', 'core.hooksPath');
    }
  });

  it('protects the files the repository’s config includes from the workspace, present or missing, and theirs', async () => {
    // Found black-box: a tracked shared config the repository includes took the agent's fsmonitor.
    writeFileSync(join(repo, '.gitconfig-shared'), '[include]\n\tpath = .gitconfig-more\n');
    personGit('config', 'include.path', '../.gitconfig-shared');
    personGit('config', 'includeIf.onbranch:never.path', '../.gitconfig-branch');
    try {
      const t = await open();
      const plant = `\n[core]\n\tfsmonitor = touch ${canary}\n`;
      for (const file of ['.gitconfig-shared', '.gitconfig-more', '.gitconfig-branch']) {
        await fails(t.id, `printf '${plant.replaceAll('\n', '\\n').replaceAll('\t', '\\t')}' >> ${file}`);
        await fails(t.id, `rm -f ${file}`);
      }
      // The missing ones were made empty, and stay so.
      expect(readFileSync(join(repo, '.gitconfig-more'), 'utf8')).toBe('');
      expect(readFileSync(join(repo, '.gitconfig-branch'), 'utf8')).toBe('');
      expect(readFileSync(join(repo, '.gitconfig-shared'), 'utf8')).not.toMatch(/fsmonitor/);
      personGit('status');
      expect(existsSync(canary)).toBe(false);
    } finally {
      personGit('config', '--unset', 'include.path');
      personGit('config', '--remove-section', 'includeIf.onbranch:never');
    }
  });

  it('refuses every way to plant code in .git, and the person’s git then runs none of it', async () => {
    const t = await open();
    // The agent's own git directory with a hook that would write the canary, to point at.
    const evil = `${repo}/evil`;
    const hook = `#!/bin/sh\\ntouch ${canary}\\n`;
    expect(
      await send(
        t.id,
        `mkdir -p ${evil}/hooks && printf '${hook}' > ${evil}/hooks/pre-commit && chmod +x ${evil}/hooks/pre-commit && printf '[core]\\n\\thooksPath = ${evil}/hooks\\n\\tfsmonitor = touch ${canary}\\n' > ${evil}/config && cp -r .git/objects .git/refs .git/HEAD ${evil}/`,
      ),
    ).toMatchObject({ exitCode: 0 });
    expect(await fails(t.id, 'mv .git .git-x')).toMatchObject({
      sandbox: { path: join(repo, '.git'), access: 'read-only', why: expect.stringContaining('.git') },
    });
    await fails(t.id, 'mv .git .git-x && cp -a .git-x .git');
    await fails(t.id, `mv .git .git-x; ln -sfnT ${evil} .git`);
    await fails(t.id, `python3 -c "import os; os.rename('.git', '.git-y')" 2>&1 || rmdir .git`);
    await fails(t.id, `echo ${evil} > .git/commondir`);
    await fails(t.id, `rm -f .git/commondir`);
    await fails(t.id, `git config core.hooksPath ${evil}/hooks`);
    await fails(t.id, `printf '[core]\\n\\tfsmonitor = touch ${canary}\\n' >> .git/config`);
    await fails(t.id, `git config --worktree core.hooksPath ${evil}/hooks`);
    await fails(t.id, `printf '${hook}' > .git/hooks/pre-commit`);
    await fails(t.id, `mv .git/hooks .git/hooks-x`);
    await fails(t.id, `echo ${evil}/objects > .git/objects/info/alternates`);
    await fails(t.id, `echo '* filter=evil' > .git/info/attributes`);
    await fails(t.id, `printf '[core]\\n\\tfsmonitor = touch ${canary}\\n' >> .git/modules/sub/config`);
    await fails(t.id, `printf '${hook}' > .git/modules/sub/hooks/post-checkout`);
    await fails(t.id, `echo "gitdir: ${evil}" > sub/.git`);
    await fails(t.id, `echo "gitdir: ${evil}" > wt/.git`);
    await fails(t.id, `echo ${evil} > .git/worktrees/wt/commondir`);
    await fails(t.id, `mv .git/worktrees/wt .git/worktrees/wt-x`);
    // Nothing of it reached the host.
    expect(lstatSync(join(repo, '.git')).isDirectory()).toBe(true);
    expect(existsSync(join(repo, '.git-x'))).toBe(false);
    expect(readFileSync(join(repo, '.git', 'commondir'), 'utf8')).toBe('.\n');
    expect(readFileSync(join(repo, '.git', 'config'), 'utf8')).not.toMatch(/hooksPath|fsmonitor/);
    expect(existsSync(join(repo, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(repo, '.git', 'objects', 'info', 'alternates'))).toBe(false);
    // The person's own git, unconfined, in the workspace and its worktree: no hook of the agent's runs.
    personGit('status');
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    personGit('commit', '-q', '-am', 'by the person');
    execFileSync('git', ['status'], { cwd: join(repo, 'wt'), env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } });
    execFileSync('git', ['status'], { cwd: join(repo, 'sub'), env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } });
    expect(existsSync(canary)).toBe(false);
  });

  it('still commits from inside; a repository the agent makes is its own', async () => {
    const t = await open();
    expect(
      await send(t.id, `echo inside >> a.txt && git -c user.name=Agent -c user.email=a@example.com commit -q -am 'by the agent' && git log -1 --format=%s`),
    ).toMatchObject({ exitCode: 0, output: 'by the agent' });
    expect(personGit('log', '-1', '--format=%s').trim()).toBe('by the agent');
    expect(await send(t.id, 'git init -q own && git -C own config core.hooksPath hooks && git -C own config core.hooksPath')).toMatchObject({
      exitCode: 0,
      output: 'hooks',
    });
  });

  it('tells the person of a repository it made and added to the index, which their git status would run git in', async () => {
    const t = await open();
    const made = await send(
      t.id,
      `git init -q inner && git -C inner -c user.name=A -c user.email=a@e commit -q --allow-empty -m i && git -C inner config core.fsmonitor 'touch ${canary}; false' && git add inner 2>/dev/null; git ls-files -s inner | cut -c1-6`,
    );
    expect(made, made.output).toMatchObject({ exitCode: 0, output: '160000' });
    expect(f.host.get(t.id).view().toolFilesChanged).toEqual(['inner/.git']);
    // Undone, so the person's git in the other tests does not run it.
    const undone = await send(t.id, 'git update-index --force-remove inner && rm -rf inner');
    expect(undone, undone.output).toMatchObject({ exitCode: 0 });
  });

  it('tells the person of a repository it made in a folder and left out of the index (black-box round 11)', async () => {
    const t = await open();
    const made = await send(
      t.id,
      `mkdir -p tools/gen && git -C tools/gen init -q && git -C tools/gen config core.fsmonitor 'touch ${canary}; false' && echo made`,
    );
    expect(made, made.output).toMatchObject({ exitCode: 0, output: 'made' });
    expect(f.host.get(t.id).view().toolFilesChanged).toContain('tools/gen/.git');
    const undone = await send(t.id, 'rm -rf tools');
    expect(undone, undone.output).toMatchObject({ exitCode: 0 });
  });

  it('protects a repository nested in the workspace (a gitlink with its own .git), and one nested in that', async () => {
    // Old-style submodules: the person's `git status` at the root runs git inside each.
    const nest = (dir: string) => {
      mkdirSync(dir, { recursive: true });
      execFileSync('git', ['-c', 'user.name=P', '-c', 'user.email=p@e', 'init', '-q'], { cwd: dir });
      writeFileSync(join(dir, 'n.txt'), 'n\n');
    };
    const outer = join(repo, 'nested');
    const inner = join(outer, 'deeper');
    nest(outer);
    nest(inner);
    const commitIn = (dir: string, ...paths: string[]) => {
      execFileSync('git', ['add', ...paths], { cwd: dir, stdio: 'ignore' });
      execFileSync('git', ['-c', 'user.name=P', '-c', 'user.email=p@e', 'commit', '-q', '-m', 'nest'], { cwd: dir });
    };
    commitIn(inner, 'n.txt');
    commitIn(outer, 'n.txt', 'deeper');
    personGit('add', 'nested');
    personGit('commit', '-q', '-m', 'nested repository');
    expect(personGit('ls-files', '-s', 'nested').slice(0, 6)).toBe('160000');
    try {
      const t = await open();
      for (const dir of ['nested', 'nested/deeper']) {
        await fails(t.id, `printf '[core]\\n\\tfsmonitor = touch ${canary}\\n[filter "x"]\\n\\tclean = touch ${canary}\\n' >> ${dir}/.git/config`);
        await fails(t.id, `git -C ${dir} config core.fsmonitor 'touch ${canary}'`);
        await fails(t.id, `echo '* filter=x' > ${dir}/.git/info/attributes`);
        await fails(t.id, `mv ${dir}/.git ${dir}/.git-x`);
      }
      // What the agent may write (a .gitattributes naming a filter) needs a config it cannot write.
      expect(await send(t.id, "echo '* filter=x' > nested/.gitattributes && echo changed >> nested/n.txt")).toMatchObject({ exitCode: 0 });
      for (const dir of [outer, inner]) expect(readFileSync(join(dir, '.git', 'config'), 'utf8')).not.toMatch(/fsmonitor|filter/);
      personGit('status');
      personGit('diff');
      expect(existsSync(canary)).toBe(false);
    } finally {
      await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
      personGit('rm', '-q', '--cached', 'nested');
      personGit('commit', '-q', '-m', 'no nested repository');
    }
  });

  it('removes the commondir it wrote once the last confined terminal closes', async () => {
    const one = await open();
    const two = await open();
    expect(readFileSync(join(repo, '.git', 'commondir'), 'utf8')).toBe('.\n');
    await f.call(client, 'terminal_close', { id: one.id });
    // The other terminal still holds it: still there, still read-only inside.
    expect(readFileSync(join(repo, '.git', 'commondir'), 'utf8')).toBe('.\n');
    await fails(two.id, 'echo /x > .git/commondir');
    await f.call(client, 'terminal_close', { id: two.id });
    expect(existsSync(join(repo, '.git', 'commondir'))).toBe(false);
    expect(personGit('status', '--short')).toBeDefined();
  });
});
