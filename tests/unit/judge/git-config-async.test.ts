import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultAllowList } from '../../../src/main/agent/judge/allow-entries.js';
import { gitConfigProblem, type GitRun, type GitRunner, limitRuns } from '../../../src/main/agent/judge/git-config.js';
import { gitChecksWanted, gitConfigFor, judgeAllowed, type LineContext } from '../../../src/main/agent/judge/judge-line.js';
import { type Grammars, loadGrammars } from '../../../src/main/agent/judge/tree-sitter.js';

const root = mkdtempSync(join(tmpdir(), 'tandem-git-async-'));
const home = join(root, 'home');
const workspace = join(home, 'project');
mkdirSync(join(workspace, 'src'), { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

let grammars: Grammars;
beforeAll(async () => {
  grammars = await loadGrammars();
});

const context = (): LineContext => ({ shell: 'bash', grammars, home, operands: { cwd: workspace, workspace, roots: { home, tandemDirs: [] } } });

/** A git whose `config --list` answers only when the test releases it; `rev-parse` finds no repository. */
function heldGit(): { runner: GitRunner; calls: string[]; release: (run: GitRun) => void } {
  const calls: string[] = [];
  let release: (run: GitRun) => void = () => {
    throw new Error('git config was not run');
  };
  const runner: GitRunner = (args, { cwd, env }) => {
    calls.push(`${args.includes('config') ? 'config' : args[0]} in ${cwd}${env.GIT_DIR ? ` GIT_DIR=${env.GIT_DIR}` : ''}`);
    if (!args.includes('config')) return Promise.resolve({ status: 128, stdout: '', stderr: 'fatal: not a git repository' });
    return new Promise<GitRun>((resolve) => {
      release = resolve;
    });
  };
  return { runner, calls, release: (run) => release(run) };
}

describe('the git configuration check does not block the event loop', () => {
  it('a timer scheduled before the check fires while git has not answered, and the judge gets the answer after', async () => {
    const git = heldGit();
    const order: string[] = [];
    const timer = new Promise<void>((resolve) =>
      setImmediate(() => {
        order.push('timer');
        resolve();
      }),
    );
    const checking = gitConfigFor('git status', defaultAllowList, context(), (cwd, at) => gitConfigProblem(cwd, at, git.runner)).then((answers) => {
      order.push('checked');
      return answers;
    });
    await timer;
    // git is still running: the event loop served the timer meanwhile.
    expect(order).toEqual(['timer']);
    expect(git.calls).toEqual([`config in ${workspace}`]);
    // The judge without the answer asks (fail closed), with nothing run.
    expect(judgeAllowed('git status', defaultAllowList, context())).toEqual({ verdict: 'ask', why: 'the configuration git would use here was not checked' });
    git.release({ status: 0, stdout: `local\0file:${workspace}/.git/config\0core.pager\nsh -c x\0`, stderr: '' });
    const answers = await checking;
    expect(order).toEqual(['timer', 'checked']);
    expect(answers.get(workspace)).toMatch(/core\.pager/);
    expect(judgeAllowed('git status', defaultAllowList, { ...context(), gitConfig: answers })).toMatchObject({
      verdict: 'ask',
      why: expect.stringMatching(/core\.pager/),
    });
  });

  it('a clean configuration lets the allowed git line run', async () => {
    const git = heldGit();
    const checking = gitConfigFor('git diff HEAD~1', defaultAllowList, context(), (cwd, at) => gitConfigProblem(cwd, at, git.runner));
    await new Promise<void>((resolve) => setImmediate(resolve));
    git.release({ status: 0, stdout: `local\0file:${workspace}/.git/config\0core.bare\nfalse\0`, stderr: '' });
    const answers = await checking;
    expect(git.calls).toEqual([`config in ${workspace}`, `rev-parse in ${workspace}`]);
    expect(answers).toEqual(new Map([[workspace, null]]));
    expect(judgeAllowed('git diff HEAD~1', defaultAllowList, { ...context(), gitConfig: answers })).toEqual({ verdict: 'run' });
  });

  it('runs git only for a line the judge would ask it about', async () => {
    expect(gitChecksWanted('git status', defaultAllowList, context())).toEqual([workspace]);
    for (const line of ['ls -la', 'cat README.md', 'git push', 'git -C /tmp status', 'git status; touch x', 'echo git'])
      expect(gitChecksWanted(line, defaultAllowList, context()), line).toEqual([]);
    const git = heldGit();
    expect(await gitConfigFor('ls -la', defaultAllowList, context(), (cwd, at) => gitConfigProblem(cwd, at, git.runner))).toEqual(new Map());
    expect(git.calls).toEqual([]);
  });

  it('the real runner reports a git it could not start in a missing directory', async () => {
    expect(await gitConfigProblem(join(root, 'missing'), home)).toMatch(/could not read this repository's configuration \(ENOENT\)/);
  });
});

describe('git checks at once', () => {
  it('start at most the bound, the rest in order as places free', async () => {
    const started: string[] = [];
    const finish = new Map<string, (run: GitRun) => void>();
    const held: GitRunner = (args) => {
      started.push(args[0]!);
      return new Promise<GitRun>((resolve) => finish.set(args[0]!, resolve));
    };
    const limited = limitRuns(held, 2);
    const options = { cwd: root, env: {} };
    const runs = ['a', 'b', 'c', 'd'].map((name) => limited([name], options));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a', 'b']);
    finish.get('b')!({ status: 0, stdout: '', stderr: '' });
    await runs[1];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a', 'b', 'c']);
    for (const name of ['a', 'c']) finish.get(name)!({ status: 0, stdout: '', stderr: '' });
    await Promise.all([runs[0], runs[2]]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    finish.get('d')!({ status: 0, stdout: 'd-done', stderr: '' });
    expect((await runs[3]!).stdout).toBe('d-done');
  });
});
