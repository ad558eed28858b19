import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gitConfigProblem, type GitRun, type GitRunner, runGit } from '../../src/main/agent/judge/git-config.js';
import { gitHookEnv } from '../../src/main/shells/git-hooks.js';

/**
 * The git check beyond one repository's files (issue 23, black-box round 41): the repositories
 * git runs itself in (every populated gitlink, read from its own directory, recursively), the
 * index read as a stream (a huge one neither grows memory nor hits the output cap), partial-clone
 * keys, and the terminal's own GIT_* variables.
 */
const root = mkdtempSync(join(tmpdir(), 'tandem-git-nested-'));
const home = join(root, 'home');
mkdirSync(home, { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

const env = { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', ...args], { cwd, encoding: 'utf8', env, maxBuffer: 64 << 20 });

function repo(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q');
  return dir;
}

/** Index entries added without files (`update-index --index-info`): `mode sha path` lines. */
function addEntries(dir: string, lines: string[]): void {
  execFileSync('git', ['update-index', '--add', '--index-info'], { cwd: dir, input: lines.join('\n') + '\n', env, maxBuffer: 64 << 20 });
}

const blob = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
const commit = '1111111111111111111111111111111111111111';

describe('nested repositories (gitlinks) as git reads them', () => {
  it('a huge index streams through: no output cap, and a gitlink far into it is still found and checked', async () => {
    const dir = repo('huge');
    // About 6 MiB (60,000 entries of about 100 bytes) of `ls-files --stage` output: past the 4 MiB cap on kept output.
    const lines = Array.from({ length: 60_000 }, (_, i) => `100644 ${blob}\tdir${i % 300}/a-rather-long-file-name-to-fill-the-listing-${i}.txt`);
    lines.push(`160000 ${commit}\tzz/inner`);
    addEntries(dir, lines);
    expect(await gitConfigProblem(dir, home)).toBeNull();
    // Populated: the nested repository's own configuration is read from its directory.
    const inner = join(dir, 'zz', 'inner');
    mkdirSync(inner, { recursive: true });
    git(inner, 'init', '-q');
    git(inner, 'config', 'core.fsmonitor', '/tmp/x');
    expect(await gitConfigProblem(dir, home)).toMatch(/nested repository "zz\/inner": git would use "core\.fsmonitor"/);
  });

  it("a gitlink split across the stream's chunks is read whole", async () => {
    const top = join(root, 'chunks');
    mkdirSync(join(top, 'sub dir', 'inner', '.git'), { recursive: true });
    const listing = Buffer.from(`100644 ${blob} 0\ta.txt\x00160000 ${commit} 0\tsub dir/inner\x00100644 ${blob} 0\tz.txt\x00`);
    const cwds: string[] = [];
    const runner: GitRunner = (args, { cwd, onStdout }) => {
      if (args.includes('config')) {
        cwds.push(cwd);
        return Promise.resolve<GitRun>({ status: 0, stdout: cwd === top ? '' : `local\x00file:${cwd}/.git/config\x00diff.external\n/tmp/x\x00`, stderr: '' });
      }
      if (args.includes('--show-toplevel')) return Promise.resolve({ status: 0, stdout: `${top}\n`, stderr: '' });
      if (args[0] === 'rev-parse') return Promise.resolve({ status: 0, stdout: `${top}/.git\n${top}/.git\ntrue\n`, stderr: '' });
      // Three bytes at a time: every boundary falls somewhere inside an entry.
      for (let at = 0; at < listing.length; at += 3) onStdout!(listing.subarray(at, at + 3));
      return Promise.resolve({ status: 0, stdout: '', stderr: '' });
    };
    expect(await gitConfigProblem(top, home, runner)).toMatch(/nested repository "sub dir\/inner": git would use "diff\.external"/);
    expect(cwds).toEqual([top, join(top, 'sub dir', 'inner')]);
  });

  it('more gitlinks than the bound asks without reading them all', async () => {
    const dir = repo('many');
    addEntries(
      dir,
      Array.from({ length: 300 }, (_, i) => `160000 ${commit}\tlink${i}`),
    );
    expect(await gitConfigProblem(dir, home)).toMatch(/more than 256 nested repositories/);
  });

  it('an unpopulated gitlink (no .git in its directory) is not a repository git runs in', async () => {
    const dir = repo('unpopulated');
    addEntries(dir, [`160000 ${commit}\tempty`]);
    mkdirSync(join(dir, 'empty'));
    expect(await gitConfigProblem(dir, home, runGit)).toBeNull();
  });
});

describe('partial clones', () => {
  it.each([
    ['extensions.partialclone', 'origin'],
    ['remote.origin.promisor', 'true'],
    ['remote.origin.partialclonefilter', 'blob:none'],
  ])('%s asks, naming the key', async (key, value) => {
    const dir = repo(`partial-${key}`);
    git(dir, 'config', key, value);
    expect(await gitConfigProblem(dir, home)).toContain(`"${key.toLowerCase()}"`);
  });
});

describe("the terminal's own environment", () => {
  it('GIT_CONFIG_COUNT/KEY/VALUE are listed as command scope and judged', async () => {
    const dir = repo('count');
    const terminal = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.pager', GIT_CONFIG_VALUE_0: 'sh -c x' };
    expect(await gitConfigProblem(dir, home, runGit, { env: terminal })).toMatch(/"core\.pager" \(set in the command line or environment\)/);
    // Tandem's own command-scope settings in agent terminals switch programs off: not judged.
    expect(await gitConfigProblem(dir, home, runGit, { env: { ...gitHookEnv } })).toBeNull();
    // Tandem's key with another value is the agent's.
    expect(await gitConfigProblem(dir, home, runGit, { env: { ...gitHookEnv, GIT_CONFIG_VALUE_0: '/tmp/x' } })).toMatch(/"core\.fsmonitor"/);
  });

  it('GIT_DIR points git at another repository, whose keys are judged', async () => {
    const dir = repo('here');
    const other = repo('there');
    git(other, 'config', 'core.hooksPath', '/tmp/hooks');
    expect(await gitConfigProblem(dir, home, runGit, { env: { GIT_DIR: join(other, '.git') } })).toMatch(/"core\.hookspath"/);
  });

  it("a GIT_CONFIG_GLOBAL from the person's environment is theirs; one the agent set is judged", async () => {
    const dir = repo('global');
    const file = join(root, 'global.gitconfig');
    writeFileSync(file, '[core]\n\tpager = less\n');
    expect(await gitConfigProblem(dir, home, runGit, { env: { GIT_CONFIG_GLOBAL: file } })).toBeNull();
    expect(await gitConfigProblem(dir, home, runGit, { env: { GIT_CONFIG_GLOBAL: file }, agentSet: ['GIT_CONFIG_GLOBAL'] })).toMatch(
      /"core\.pager".*global\.gitconfig/,
    );
    // A HOME other than the person's: its .gitconfig is not the person's file.
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, '.gitconfig'), '[core]\n\tpager = less\n');
    expect(await gitConfigProblem(dir, home, runGit, { env: { HOME: elsewhere } })).toMatch(/"core\.pager"/);
  });
});
