import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Whether the configuration git would use for a command in `cwd` could make an allow-listed
 * git line run a program or read elsewhere. Git itself is asked (`git config --list
 * --show-scope --show-origin -z`), so the repository, its worktree and every include are found
 * exactly as git finds them: `.git` files with `gitdir:`, `commondir`, linked worktrees and their
 * `config.worktree` (only when `extensions.worktreeConfig` makes git read it), an invalid `.git`
 * directory skipped for the parent's, `safe.directory` (a refused repository asks), `include` and
 * `includeIf` with git's own conditions. Listing configuration runs nothing: no hook, pager,
 * filter, fsmonitor or external diff is started by `git config`, and `GIT_CONFIG_*` variables,
 * `GIT_DIR` and the like are not passed in from Tandem's own environment.
 *
 * Then an ALLOW list: a key set by the repository, its worktree, a `-c`/`GIT_CONFIG_*` value
 * (command scope) or any file included from anywhere must be one known to run nothing; any other
 * key asks and the question names it and the file it came from. The person's own files (system
 * and global, not what they include) are the person's and are not judged.
 *
 * Git runs as a child process the event loop waits for without blocking (`runGit`): the judge
 * itself is synchronous and is handed the answer beforehand (judge-line.ts, `gitConfigFor`).
 */
const gitTimeoutMs = 3000;
const maxOutputBytes = 4 << 20;
/** Submodule repositories looked at, at most (each is another `git config`): more asks. */
const maxModules = 16;

/**
 * Keys, lower-case, known to run nothing and read nothing outside the repository. `*` stands
 * for one subsection (`branch.*.merge`) or any key of a section (`user.*`).
 */
const safeKeys: readonly string[] = [
  // Layout and format.
  'core.repositoryformatversion', 'core.bare', 'core.filemode', 'core.logallrefupdates', 'core.ignorecase',
  'core.precomposeunicode', 'core.symlinks', 'core.autocrlf', 'core.eol', 'core.safecrlf', 'core.quotepath',
  'core.abbrev', 'core.compression', 'core.loosecompression', 'core.whitespace', 'core.checkstat',
  'core.trustctime', 'core.untrackedcache', 'core.splitindex', 'core.commentchar', 'core.commentstring',
  'core.sparsecheckout', 'core.sparsecheckoutcone', 'core.multipackindex', 'core.preloadindex', 'core.fscache',
  'core.longpaths', 'core.protectntfs', 'core.protecthfs', 'core.warnambiguousrefs',
  'extensions.worktreeconfig', 'extensions.objectformat', 'extensions.refstorage', 'extensions.preciousobjects',
  'extensions.partialclone', 'index.version', 'index.threads', 'pack.threads', 'feature.manyfiles',
  // Who commits.
  'user.*', 'author.*', 'committer.*',
  // Branches and remotes: names and refspecs (a URL's transport is fetched only by a fetch, which asks).
  'branch.*.remote', 'branch.*.merge', 'branch.*.rebase', 'branch.*.pushremote', 'branch.*.description',
  'branch.autosetupmerge', 'branch.autosetuprebase', 'branch.sort',
  'remote.*.url', 'remote.*.pushurl', 'remote.*.fetch', 'remote.*.push', 'remote.*.mirror', 'remote.*.tagopt',
  'remote.*.prune', 'remote.*.prunetags', 'remote.*.skipdefaultupdate', 'remote.*.promisor', 'remote.*.partialclonefilter',
  'submodule.*.url', 'submodule.*.active', 'submodule.*.branch', 'submodule.active',
  // How output looks and what commands default to.
  'color.*', 'column.*', 'advice.*', 'i18n.*', 'init.defaultbranch',
  'pull.rebase', 'pull.ff', 'push.default', 'push.autosetupremote', 'fetch.prune', 'fetch.prunetags',
  'merge.ff', 'merge.conflictstyle', 'rebase.autosquash', 'rebase.autostash', 'rebase.updaterefs',
  'diff.renames', 'diff.algorithm', 'diff.colormoved', 'diff.mnemonicprefix', 'diff.noprefix', 'diff.context',
  'diff.indentheuristic', 'diff.relative', 'status.showuntrackedfiles', 'status.short', 'status.branch',
  'status.relativepaths', 'log.date', 'log.decorate', 'log.abbrevcommit', 'log.follow', 'blame.date',
  'lfs.repositoryformatversion', 'gui.wmstate', 'gui.geometry',
  // Includes themselves: what they include is listed by git and judged key by key.
  'include.path', 'includeif.*.path',
];

function isSafe(key: string): boolean {
  const parts = key.split('.');
  const section = parts[0]!;
  const name = parts.at(-1)!;
  const middle = parts.length > 2;
  return safeKeys.some((pattern) => {
    const want = pattern.split('.');
    if (want.length === 2 && want[1] === '*') return section === want[0];
    if (want.length === 2) return !middle && section === want[0] && name === want[1];
    return middle && section === want[0] && name === want[2];
  });
}

export interface GitEntry {
  scope: string;
  origin: string;
  key: string;
}

/** Parses `git config --list --show-scope --show-origin -z`: `scope NUL origin NUL key [LF value] NUL`, repeated. */
export function parseConfigList(out: string): GitEntry[] | null {
  const fields = out.split('\0');
  if (fields.at(-1) === '') fields.pop();
  if (fields.length % 3 !== 0) return null;
  const entries: GitEntry[] = [];
  for (let i = 0; i < fields.length; i += 3) {
    const key = fields[i + 2]!.split('\n', 1)[0]!.toLowerCase();
    entries.push({ scope: fields[i]!, origin: fields[i + 1]!, key });
  }
  return entries;
}

/** The person's own top-level files: judged only for what they include. */
function personsFile(entry: GitEntry, home: string): boolean {
  if (entry.scope === 'system') return entry.origin === 'file:/etc/gitconfig' || /^file:\/(usr|opt|etc)\//.test(entry.origin) && entry.origin.endsWith('/gitconfig');
  if (entry.scope !== 'global') return false;
  const xdg = process.env.XDG_CONFIG_HOME && process.env.XDG_CONFIG_HOME !== '' ? process.env.XDG_CONFIG_HOME : join(home, '.config');
  return entry.origin === `file:${join(home, '.gitconfig')}` || entry.origin === `file:${join(xdg, 'git', 'config')}`;
}

/** A clean environment for git: nothing of Tandem's own `GIT_*` (a locator or `-c` values) reaches it. */
function gitEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' };
  if (process.env.XDG_CONFIG_HOME) env.XDG_CONFIG_HOME = process.env.XDG_CONFIG_HOME;
  if (process.env.SYSTEMROOT) env.SYSTEMROOT = process.env.SYSTEMROOT;
  return { ...env, ...extra };
}

/** What one git run gave: its exit status (null when it did not exit by itself), its output, and why it failed to run or was stopped. */
export interface GitRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** An errno-like code: `ENOENT` (no git), `ETIMEDOUT` (killed after the timeout), `ENOBUFS` (killed past the output cap). */
  error?: string;
}

/** Runs git with `args` in `cwd`; injectable so a test can hold a run open. */
export type GitRunner = (args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }) => Promise<GitRun>;

/**
 * The real runner: git as a child process, stdin closed, killed (SIGKILL) after `gitTimeoutMs`
 * or once its output passes `maxOutputBytes`. Never rejects.
 */
const spawnGit: GitRunner = (args, { cwd, env }) =>
  new Promise<GitRun>((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let failure: string | undefined;
    let settled = false;
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('git', [...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    } catch (error) {
      resolve({ status: null, stdout: '', stderr: '', error: (error as NodeJS.ErrnoException).code ?? String(error) });
      return;
    }
    const finish = (status: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status: failure ? null : status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), ...(failure ? { error: failure } : {}) });
    };
    const stop = (code: string) => {
      failure ??= code;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop('ETIMEDOUT'), gitTimeoutMs);
    const take = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxOutputBytes) return stop('ENOBUFS');
      into.push(chunk);
    };
    child.stdout!.on('data', take(out));
    child.stderr!.on('data', take(err));
    child.on('error', (error: NodeJS.ErrnoException) => {
      failure ??= error.code ?? error.message;
      child.kill('SIGKILL');
      finish(null);
    });
    child.on('close', (code) => finish(code));
  });

/** How many git checks run at once, host-wide: a flood of git lines waits its turn. */
export const maxConcurrentGitRuns = 4;

/** `runner` with at most `max` runs at once; the rest start in order as places free. */
export function limitRuns(runner: GitRunner, max = maxConcurrentGitRuns): GitRunner {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (args, options) => {
    if (running >= max) await new Promise<void>((start) => waiting.push(start));
    else running += 1;
    try {
      return await runner(args, options);
    } finally {
      // The place passes straight to the next waiting run, or is given back.
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
}

/** The real runner, bounded: a hostile agent's flood of git lines starts no more than this many gits. */
export const runGit: GitRunner = limitRuns(spawnGit);

async function listConfig(run: GitRunner, cwd: string, home: string, extraEnv: Record<string, string> = {}): Promise<{ entries: GitEntry[] } | { problem: string }> {
  const result = await run(['--no-pager', 'config', '--list', '--show-scope', '--show-origin', '-z'], { cwd, env: gitEnv(home, extraEnv) });
  if (result.error) return { problem: `git could not read this repository's configuration (${result.error})` };
  if (result.status !== 0) {
    const said = result.stderr.split('\n').find((line) => line.startsWith('fatal:') || line.startsWith('error:'))?.slice(0, 200);
    return { problem: said ? `git refuses this repository's configuration: ${quoted(said, 200)}` : 'git could not read this repository\'s configuration' };
  }
  const entries = parseConfigList(result.stdout);
  return entries ? { entries } : { problem: 'git listed a configuration this check cannot read' };
}

/**
 * A key, file or message the repository chose, as a quoted string: control characters escaped
 * and the length bounded, so it reads as the repository's words, never as Tandem's sentence
 * (the card also draws invisible characters as tokens).
 */
function quoted(text: string, max = 120): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

function judgeEntries(entries: readonly GitEntry[], home: string): string | null {
  for (const entry of entries) {
    if (personsFile(entry, home)) continue;
    if (isSafe(entry.key)) continue;
    const where = entry.origin.startsWith('file:') ? entry.origin.slice(5) : entry.origin;
    return `git would use ${quoted(entry.key)} (set in ${entry.scope === 'command' ? 'the command line or environment' : quoted(where, 200)}), which is not on the list of keys known to run nothing`;
  }
  return null;
}

/** The repository's git directory as git finds it from `cwd`, or null outside one. */
async function gitDirOf(run: GitRunner, cwd: string, home: string): Promise<string | null> {
  const result = await run(['rev-parse', '--absolute-git-dir', '--git-common-dir'], { cwd, env: gitEnv(home) });
  if (result.error || result.status !== 0) return null;
  const [, common] = result.stdout.trim().split('\n');
  return common ? (common.startsWith('/') || /^[A-Za-z]:/.test(common) ? common : join(cwd, common)) : null;
}

/** Submodule repositories (`modules/...` under the common git dir), which status and diff run git in. */
function moduleDirs(common: string): string[] | null {
  const found: string[] = [];
  const walk = (dir: string): boolean => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return true;
    }
    for (const name of names) {
      const path = join(dir, name);
      try {
        if (!statSync(path).isDirectory()) continue;
      } catch {
        continue;
      }
      if (existsSync(join(path, 'HEAD')) || existsSync(join(path, 'config'))) {
        if (found.length >= maxModules) return false;
        found.push(path);
        if (existsSync(join(path, 'modules')) && !walk(join(path, 'modules'))) return false;
      } else if (!walk(path)) return false;
    }
    return true;
  };
  return walk(join(common, 'modules')) ? found : null;
}

/**
 * Why git lines in `cwd` must ask because of the configuration git would use there, or null.
 * Asynchronous: git runs while the event loop keeps serving every terminal and connection.
 */
export async function gitConfigProblem(cwd: string, home: string, run: GitRunner = runGit): Promise<string | null> {
  const listed = await listConfig(run, cwd, home);
  if ('problem' in listed) return listed.problem;
  const problem = judgeEntries(listed.entries, home);
  if (problem) return problem;
  const common = await gitDirOf(run, cwd, home);
  if (!common || !existsSync(join(common, 'modules'))) return null;
  const modules = moduleDirs(common);
  if (!modules) return 'the repository has too many submodules to check';
  for (const dir of modules) {
    const inModule = await listConfig(run, cwd, home, { GIT_DIR: dir });
    if ('problem' in inModule) return inModule.problem;
    const found = judgeEntries(inModule.entries, home);
    if (found) return `a submodule: ${found}`;
  }
  return null;
}
