import { spawn } from 'node:child_process';
import { type Dirent, existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { gitHookSettings } from '../../shells/git-hooks.js';

/**
 * Whether the configuration git would use for a command in `cwd` could make an allow-listed
 * git line run a program or read elsewhere. Git itself is asked (`git config --list
 * --show-scope --show-origin -z`), so the repository, its worktree and every include are found
 * exactly as git finds them: `.git` files with `gitdir:`, `commondir`, linked worktrees and their
 * `config.worktree` (only when `extensions.worktreeConfig` makes git read it), an invalid `.git`
 * directory skipped for the parent's, `safe.directory` (a refused repository asks), `include` and
 * `includeIf` with git's own conditions. Listing configuration runs nothing: no hook, pager,
 * filter, fsmonitor or external diff is started by `git config`. Git gets the terminal's own
 * `GIT_*`, `HOME` and `XDG_CONFIG_HOME` (never Tandem's process's), so it lists what it would
 * really use there: `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` as command scope, `GIT_DIR`,
 * `GIT_CONFIG_GLOBAL`...
 *
 * Then an ALLOW list: a key set by the repository, its worktree, a `-c`/`GIT_CONFIG_*` value
 * (command scope; Tandem's own switches in agent terminals excepted) or any file included from
 * anywhere must be one known to run nothing; any other key asks and the question names it and
 * the file it came from. The person's own files (system and global, not what they include) are
 * the person's and are not judged; one named by a variable the agent set at open is judged.
 *
 * Then every repository git runs itself in for `status` and `diff`: each populated gitlink of the
 * index (a nested repository or a submodule's worktree), read from its own directory as git
 * reads it there, recursively, and the submodule repositories under `modules/`; bounded.
 *
 * Git runs as a child process the event loop waits for without blocking (`runGit`): the judge
 * itself is synchronous and is handed the answer beforehand (judge-line.ts, `gitConfigFor`).
 */
const gitTimeoutMs = 3000;
const maxOutputBytes = 4 << 20;
/** Nested and submodule repositories looked at, at most (each is another `git config`): more asks. */
const maxModules = 16;

/**
 * Keys, lower-case, known to run nothing and read nothing outside the repository. `*` stands
 * for one subsection (`branch.*.merge`) or any key of a section (`user.*`).
 */
// prettier-ignore
const safeKeys: readonly string[] = [
  // Layout and format.
  'core.repositoryformatversion', 'core.bare', 'core.filemode', 'core.logallrefupdates', 'core.ignorecase',
  'core.precomposeunicode', 'core.symlinks', 'core.autocrlf', 'core.eol', 'core.safecrlf', 'core.quotepath',
  'core.abbrev', 'core.compression', 'core.loosecompression', 'core.whitespace', 'core.checkstat',
  'core.trustctime', 'core.untrackedcache', 'core.splitindex', 'core.commentchar', 'core.commentstring',
  'core.sparsecheckout', 'core.sparsecheckoutcone', 'core.multipackindex', 'core.preloadindex', 'core.fscache',
  'core.longpaths', 'core.protectntfs', 'core.protecthfs', 'core.warnambiguousrefs',
  'extensions.worktreeconfig', 'extensions.objectformat', 'extensions.refstorage', 'extensions.preciousobjects',
  'index.version', 'index.threads', 'pack.threads', 'feature.manyfiles',
  // Who commits.
  'user.*', 'author.*', 'committer.*',
  // Branches and remotes: names and refspecs (a URL's transport is fetched only by a fetch, which asks).
  // Not here: a partial clone's `extensions.partialclone`, `remote.*.promisor` and
  // `remote.*.partialclonefilter`, with which any read of a missing object fetches from the
  // remote's URL (any transport, the person's ssh keys) and then runs `git maintenance run --auto`.
  'branch.*.remote', 'branch.*.merge', 'branch.*.rebase', 'branch.*.pushremote', 'branch.*.description',
  'branch.autosetupmerge', 'branch.autosetuprebase', 'branch.sort',
  'remote.*.url', 'remote.*.pushurl', 'remote.*.fetch', 'remote.*.push', 'remote.*.mirror', 'remote.*.tagopt',
  'remote.*.prune', 'remote.*.prunetags', 'remote.*.skipdefaultupdate',
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
  /** The value as git lists it (null: a key set without `=`). */
  value: string | null;
}

/** Parses `git config --list --show-scope --show-origin -z`: `scope NUL origin NUL key [LF value] NUL`, repeated. */
export function parseConfigList(out: string): GitEntry[] | null {
  const fields = out.split('\0');
  if (fields.at(-1) === '') fields.pop();
  if (fields.length % 3 !== 0) return null;
  const entries: GitEntry[] = [];
  for (let i = 0; i < fields.length; i += 3) {
    const item = fields[i + 2]!;
    const newline = item.indexOf('\n');
    const key = (newline < 0 ? item : item.slice(0, newline)).toLowerCase();
    entries.push({ scope: fields[i]!, origin: fields[i + 1]!, key, value: newline < 0 ? null : item.slice(newline + 1) });
  }
  return entries;
}

/**
 * The person's own top-level files: judged only for what they include. Those in the person's
 * home, the system's, and the files the terminal's `GIT_CONFIG_GLOBAL`/`GIT_CONFIG_SYSTEM` name
 * when the person's environment gave them (`terminal.agentSet`: names the agent chose at open,
 * whose files are judged like the repository's).
 */
function personsFile(entry: GitEntry, home: string, terminal: TerminalGit): boolean {
  const named = (name: string) => {
    const value = terminal.env?.[name];
    return value !== undefined && value !== '' && !terminal.agentSet?.includes(name) && entry.origin === `file:${value}`;
  };
  if (entry.scope === 'system')
    return (
      named('GIT_CONFIG_SYSTEM') ||
      entry.origin === 'file:/etc/gitconfig' ||
      (/^file:\/(usr|opt|etc)\//.test(entry.origin) && entry.origin.endsWith('/gitconfig'))
    );
  if (entry.scope !== 'global') return false;
  if (named('GIT_CONFIG_GLOBAL')) return true;
  const xdg = process.env.XDG_CONFIG_HOME && process.env.XDG_CONFIG_HOME !== '' ? process.env.XDG_CONFIG_HOME : join(home, '.config');
  return entry.origin === `file:${join(home, '.gitconfig')}` || entry.origin === `file:${join(xdg, 'git', 'config')}`;
}

/** What of a terminal's environment the check uses: its variables, and those the agent chose at open. */
export interface TerminalGit {
  env?: Readonly<Record<string, string>>;
  agentSet?: readonly string[];
  /**
   * The terminal's workspace (its real path): a repository whose work tree begins above it lets
   * allow-listed git read files outside it (`git show HEAD:../x`, `git grep -- :/`), so git asks
   * there (black-box round s41 W2: a dotfiles repository at ~, a monorepo's subfolder).
   */
  workspace?: string;
  /**
   * The line's git subcommand may run any hook (`gitCheckKey`: one not known to look only):
   * then every hook the repository holds asks, not only those a looking command runs.
   */
  everyHook?: boolean;
}

/**
 * Subcommands that only look: git runs no hook for them beyond `lookingHooks` (status and diff
 * refresh the index and write it back, which runs `post-index-change`).
 */
const lookingSubcommands: ReadonlySet<string> = new Set([
  'status',
  'diff',
  'show',
  'log',
  'branch',
  'grep',
  'blame',
  'ls-files',
  'ls-tree',
  'rev-parse',
  'cat-file',
  'describe',
  'shortlog',
]);
/** The hooks a looking subcommand can run (those of a write it makes by itself, counted wide). */
const lookingHooks: readonly string[] = ['post-index-change', 'reference-transaction', 'pre-auto-gc', 'fsmonitor-watchman'];

/**
 * The key of a git check's answer: the cwd for a subcommand that only looks (one answer serves
 * them all), the cwd with a mark for any other, whose answer counts every hook.
 */
export function gitCheckKey(cwd: string, subcommand: string | undefined): string {
  return subcommand !== undefined && lookingSubcommands.has(subcommand) ? cwd : `${cwd}\0every hook`;
}

/**
 * The hooks git would run from `hooks` (a repository's own `hooks/` folder, which needs no key to
 * be used): every entry but git's `.sample` files that is an executable file (git skips others
 * with a warning; on Windows git runs a hook through sh whatever its mode). Bounded: a folder
 * with more entries than `maxHookEntries` counts as holding hooks.
 */
function hooksIn(hooks: string): string[] {
  let names: string[];
  try {
    names = readdirSync(hooks);
  } catch {
    return [];
  }
  if (names.length > maxHookEntries) return names.slice(0, 1);
  return names.filter((name) => {
    if (name.endsWith('.sample')) return false;
    try {
      const stat = statSync(join(hooks, name));
      return stat.isFile() && (process.platform === 'win32' || (stat.mode & 0o111) !== 0);
    } catch {
      return false;
    }
  });
}
const maxHookEntries = 256;

/** Why a git line would run a hook of the repository whose hooks folder is `hooks`, or null. */
function hookProblem(hooks: string, terminal: TerminalGit): string | null {
  const found = hooksIn(hooks).filter((name) => terminal.everyHook || lookingHooks.includes(name));
  if (found.length === 0) return null;
  return `git would run the repository's hook ${quoted(join(hooks, found[0]!), 200)}, a program the repository holds`;
}

/** Tandem's own command-scope settings in agent terminals (git-hooks.ts): they switch programs off. */
function tandemsOwn(entry: GitEntry): boolean {
  return entry.scope === 'command' && gitHookSettings.some(([key, value]) => key.toLowerCase() === entry.key && value === entry.value);
}

/**
 * The variables of a terminal's environment that decide what git reads there: every `GIT_*`
 * (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`, `GIT_CONFIG_PARAMETERS`, `GIT_DIR`, `GIT_WORK_TREE`,
 * `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM`...), `HOME` and
 * `XDG_CONFIG_HOME` (where the global file is).
 */
export function gitRelevantEnv(env: Readonly<Record<string, string | undefined>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env ?? {})) {
    if (value !== undefined && (name.startsWith('GIT_') || name === 'HOME' || name === 'XDG_CONFIG_HOME')) out[name] = value;
  }
  return out;
}

/**
 * Variables git drops before it runs git in a submodule (git's `local_repo_env`): they name the
 * outer repository or its command-line configuration, not the submodule's.
 */
// prettier-ignore
const localRepoEnv = new Set([
  'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_CONFIG', 'GIT_CONFIG_COUNT', 'GIT_OBJECT_DIRECTORY', 'GIT_DIR', 'GIT_WORK_TREE',
  'GIT_IMPLICIT_WORK_TREE', 'GIT_GRAFT_FILE', 'GIT_INDEX_FILE', 'GIT_NO_REPLACE_OBJECTS', 'GIT_REPLACE_REF_BASE', 'GIT_PREFIX',
  'GIT_SHALLOW_FILE', 'GIT_COMMON_DIR',
]);

function nestedEnv(terminal: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(terminal).filter(([name]) => !localRepoEnv.has(name) && !/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(name)));
}

/**
 * The environment git runs in for a check: the terminal's own variables that decide what git
 * reads (`terminal`, see `gitRelevantEnv`; none of Tandem's own process), with the person's home
 * when the terminal names none, and what keeps the check itself from prompting or locking.
 */
function gitEnv(home: string, terminal: Readonly<Record<string, string>> = {}, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home };
  if (process.env.XDG_CONFIG_HOME && !('HOME' in terminal)) env.XDG_CONFIG_HOME = process.env.XDG_CONFIG_HOME;
  if (process.env.SYSTEMROOT) env.SYSTEMROOT = process.env.SYSTEMROOT;
  return { ...env, ...terminal, ...extra, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' };
}

/** What one git run gave: its exit status (null when it did not exit by itself), its output, and why it failed to run or was stopped. */
export interface GitRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** An errno-like code: `ENOENT` (no git), `ETIMEDOUT` (killed after the timeout), `ENOBUFS` (killed past the output cap). */
  error?: string;
}

/**
 * Runs git with `args` in `cwd`; injectable so a test can hold a run open. With `onStdout`, the
 * output goes to it as it comes (not kept, not capped: the reader keeps what it needs), and
 * returning false stops git (`ENOBUFS`).
 */
export type GitRunner = (args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; onStdout?: (chunk: Buffer) => boolean }) => Promise<GitRun>;

/**
 * The real runner: git as a child process, stdin closed, killed (SIGKILL) after `gitTimeoutMs`
 * or once its kept output passes `maxOutputBytes`. Never rejects.
 */
const spawnGit: GitRunner = (args, { cwd, env, onStdout }) =>
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
      resolve({
        status: failure ? null : status,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ...(failure ? { error: failure } : {}),
      });
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
    child.stdout!.on('data', onStdout ? (chunk: Buffer) => void (failure === undefined && !onStdout(chunk) && stop('ENOBUFS')) : take(out));
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

async function listConfig(run: GitRunner, cwd: string, env: NodeJS.ProcessEnv): Promise<{ entries: GitEntry[] } | { problem: string }> {
  const result = await run(['--no-pager', 'config', '--list', '--show-scope', '--show-origin', '-z'], { cwd, env });
  if (result.error) return { problem: `git could not read this repository's configuration (${result.error})` };
  if (result.status !== 0) {
    const said = result.stderr
      .split('\n')
      .find((line) => line.startsWith('fatal:') || line.startsWith('error:'))
      ?.slice(0, 200);
    return { problem: said ? `git refuses this repository's configuration: ${quoted(said, 200)}` : "git could not read this repository's configuration" };
  }
  const entries = parseConfigList(result.stdout);
  return entries ? { entries } : { problem: 'git listed a configuration this check cannot read' };
}

/**
 * A key, file or message the repository chose, as a quoted string: control characters escaped
 * and the length bounded, so it reads as the repository's words, never as Tandem's sentence
 * (the card also draws invisible characters as tokens).
 */
export function quoted(text: string, max = 120): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

/**
 * The first entry git would use that is neither the person's nor known to run nothing, as the
 * question's words, or null. `later`: entries set aside to be judged once the repository is
 * located (a `core.worktree`, judged by where it leads).
 */
function judgeEntries(entries: readonly GitEntry[], home: string, terminal: TerminalGit, later?: (entry: GitEntry) => boolean): string | null {
  for (const entry of entries) {
    if (personsFile(entry, home, terminal)) continue;
    if (isSafe(entry.key) || tandemsOwn(entry) || later?.(entry)) continue;
    return offList(entry);
  }
  return null;
}

function offList(entry: GitEntry, why = 'which is not on the list of keys known to run nothing'): string {
  const where = entry.origin.startsWith('file:') ? entry.origin.slice(5) : entry.origin;
  return `git would use ${quoted(entry.key)} (set in ${entry.scope === 'command' ? 'the command line or environment' : quoted(where, 200)}), ${why}`;
}

/** A `core.worktree` a repository's own file sets (git writes one into every submodule's configuration). */
function isWorktreeSetting(entry: GitEntry): boolean {
  return entry.key === 'core.worktree' && (entry.scope === 'local' || entry.scope === 'worktree') && entry.origin.startsWith('file:') && !!entry.value;
}

/**
 * Whether a `core.worktree` leads inside `roots`: it must be set in one of `gitDirs`' own
 * `config` or `config.worktree` (git takes a relative value relative to the git directory, so a
 * value from an included file elsewhere would be read against another base), and the folder it
 * names, as a real path, must lie in a root. Otherwise git would read and write a worktree
 * elsewhere (`git status` reading the home's files, `git checkout` writing there).
 */
function worktreeInside(entry: GitEntry, cwd: string, gitDirs: readonly string[], roots: readonly string[]): boolean {
  const file = realOr(resolve(cwd, entry.origin.slice(5)));
  const gitDir = gitDirs.find((dir) => file === join(realOr(dir), 'config') || file === join(realOr(dir), 'config.worktree'));
  if (gitDir === undefined) return false;
  // Both the path as given and its real one: `..` after a link leads elsewhere than after its target.
  const targets = [resolve(gitDir, entry.value!), resolve(realOr(gitDir), entry.value!)];
  return targets.every((target) => roots.some((root) => insideDir(realOr(target), root)));
}

/** The worktree's top and the common git directory as git finds them from `cwd`; null outside a repository (or a bare one: no worktree). */
async function locate(run: GitRunner, cwd: string, env: NodeJS.ProcessEnv): Promise<{ top: string | null; gitDir: string; common: string } | null> {
  const result = await run(['rev-parse', '--absolute-git-dir', '--git-common-dir', '--is-inside-work-tree'], { cwd, env });
  if (result.error || result.status !== 0) return null;
  const [gitDir, common, inside] = result.stdout.trim().split('\n');
  if (!gitDir || !common) return null;
  const commonDir = common.startsWith('/') || /^[A-Za-z]:/.test(common) ? common : join(cwd, common);
  if (inside !== 'true') return { top: null, gitDir, common: commonDir };
  const top = await run(['rev-parse', '--show-toplevel'], { cwd, env });
  return { top: top.error || top.status !== 0 || top.stdout.trim() === '' ? null : top.stdout.trim(), gitDir, common: commonDir };
}

/**
 * Where git would read beyond the allowed folders (`roots`: the terminal's workspace, as real
 * paths) in the repository `found`, or null: its worktree's top (a workspace inside a larger
 * repository), its git directory and common directory (a `.git` file's `gitdir:` names any
 * repository on the machine), and every object store its `objects/info/alternates` chain adds
 * (git follows alternates of alternates). A linked worktree of a repository outside the
 * workspace (`git worktree add`) reads that repository's git directory: it passes when that
 * repository registered this very worktree (its entry lies in the common directory's own
 * `worktrees/` and names this worktree's `.git`), which nothing planted in the workspace can
 * arrange; that common directory then joins `roots`, so the worktree's submodules (kept under
 * it) pass too.
 */
function reachBeyond(found: { top: string | null; gitDir: string; common: string }, roots: string[]): string | null {
  const inside = (path: string) => {
    const real = realOr(path);
    return roots.some((root) => insideDir(real, root));
  };
  if (found.top !== null && !inside(found.top)) return found.top;
  if (!inside(found.gitDir) || !inside(found.common)) {
    if (found.top === null || !registeredWorktree(found.gitDir, found.common, found.top)) return inside(found.gitDir) ? found.common : found.gitDir;
    roots.push(realOr(found.common));
  }
  for (const store of objectStores(join(found.common, 'objects'))) if (!inside(store)) return store;
  for (const dir of new Set([found.gitDir, found.common])) {
    const linked = linkOutside(dir, inside);
    if (linked) return linked;
  }
  return null;
}

/** The folders of a git directory whose entries are read by name: a link among them can lead to another repository's. */
const linkedParts = ['', 'objects', 'objects/pack', 'objects/info', 'refs', 'refs/heads', 'refs/tags', 'refs/remotes', 'logs', 'logs/refs'];
/** Entries looked at before the rest is taken as reaching out. */
const maxGitEntries = 4096;

/**
 * The first link in a git directory's top folders (the directory itself, `objects` and its
 * fan-out folders, `refs`, `logs`...) that leads outside (`inside` false), or null: `objects` or
 * `refs` linked to another repository's gave its whole history to `git log -p` (black-box round
 * 6), as a fan-out folder `objects/ab` linked gives the objects in it. Loose object files are not
 * looked at one by one. More entries than `maxGitEntries` is taken as reaching out.
 */
function linkOutside(gitDir: string, inside: (path: string) => boolean): string | null {
  let budget = maxGitEntries;
  for (const part of linkedParts) {
    const dir = join(gitDir, part);
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    budget -= entries.length;
    if (budget < 0) return dir;
    for (const entry of entries) {
      if (!entry.isSymbolicLink()) continue;
      const path = join(dir, entry.name);
      if (!inside(path)) return path;
    }
  }
  return null;
}

/**
 * Whether `gitDir` is a linked worktree's entry of the repository `common`: it sits in
 * `common/worktrees/` and its back-pointer (`gitdir`) names `top`'s `.git`.
 */
function registeredWorktree(gitDir: string, common: string, top: string): boolean {
  if (realOr(dirname(gitDir)) !== join(realOr(common), 'worktrees')) return false;
  try {
    const named = readFileSync(join(gitDir, 'gitdir'), 'utf8').trim();
    return named !== '' && realOr(named) === realOr(join(top, '.git'));
  } catch {
    return false;
  }
}

/** git follows alternates this many stores deep (its own limit is 5). */
const maxAlternateDepth = 5;
/** Object stores read before the rest is taken as reaching out (the first outside one is named). */
const maxAlternateStores = 64;

/**
 * Every object store the alternates chain of `objects` adds, as git follows it: each store's own
 * `info/alternates` lines (relative ones relative to that store), to git's depth, each once.
 * Past `maxAlternateStores` the next one is returned as it is, so a caller finds it outside
 * nothing and asks.
 */
function objectStores(objects: string): string[] {
  const seen = new Set<string>([realOr(objects)]);
  const stores: string[] = [];
  let level = [objects];
  for (let depth = 0; depth < maxAlternateDepth && level.length > 0; depth++) {
    const next: string[] = [];
    for (const store of level) {
      for (const line of alternateLines(store)) {
        const path = line.startsWith('/') || /^[A-Za-z]:/.test(line) ? line : join(store, line);
        const real = realOr(path);
        if (seen.has(real)) continue;
        seen.add(real);
        stores.push(path);
        if (stores.length > maxAlternateStores) return stores;
        next.push(path);
      }
    }
    level = next;
  }
  return stores;
}

/** A store's `info/alternates` lines (comments and blanks dropped), a bounded read. */
function alternateLines(objects: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(objects, 'info', 'alternates'), 'utf8').slice(0, 64 << 10);
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .slice(0, maxAlternateStores + 1);
}

/** Gitlinks (index entries of mode 160000) listed before the check asks instead. */
const maxGitlinks = 256;
/** The longest index entry kept while it streams in; git's paths are far shorter. */
const maxEntryBytes = 64 << 10;

/**
 * The paths of the index's gitlinks (mode 160000: a nested repository or a submodule), read from
 * `git ls-files -z --stage` as it streams: only those entries are kept, so a huge index neither
 * grows memory nor hits an output cap. null when git could not list them or there are more than
 * `maxGitlinks`.
 */
async function gitlinks(run: GitRunner, top: string, env: NodeJS.ProcessEnv): Promise<{ paths: string[] } | { problem: string }> {
  const paths: string[] = [];
  let rest = Buffer.alloc(0);
  let tooMany = false;
  const onStdout = (chunk: Buffer): boolean => {
    let data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    let at = data.indexOf(0);
    while (at >= 0) {
      // `<mode> <object> <stage>\t<path>`
      if (data.subarray(0, 7).toString('latin1') === '160000 ') {
        const entry = data.subarray(0, at).toString('utf8');
        const tab = entry.indexOf('\t');
        if (tab > 0) paths.push(entry.slice(tab + 1));
        if (paths.length > maxGitlinks) {
          tooMany = true;
          return false;
        }
      }
      data = data.subarray(at + 1);
      at = data.indexOf(0);
    }
    rest = Buffer.from(data);
    return rest.length <= maxEntryBytes;
  };
  const result = await run(['ls-files', '-z', '--stage'], { cwd: top, env, onStdout });
  if (tooMany) return { problem: `the repository has more than ${maxGitlinks} nested repositories or submodules to check` };
  if (result.error || result.status !== 0)
    return { problem: `git could not list this repository's nested repositories (${result.error ?? `exit ${result.status}`})` };
  return { paths };
}

/** Submodule repositories (`modules/...` under the common git dir), which status and diff run git in. */
function moduleDirs(common: string, budget: { left: number }): string[] | null {
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
        if (budget.left <= 0) return false;
        budget.left -= 1;
        found.push(path);
        if (existsSync(join(path, 'modules')) && !walk(join(path, 'modules'))) return false;
      } else if (!walk(path)) return false;
    }
    return true;
  };
  return walk(join(common, 'modules')) ? found : null;
}

const tooManyRepositories = `the repository has more than ${maxModules} nested repositories or submodules to check`;

/**
 * One repository as git reads it from `cwd` with `env`, then every repository git would run
 * itself in for status and diff: each populated gitlink's worktree (a nested repository with its
 * own `.git`, recorded in the index as mode 160000, with or without `.gitmodules`), read from
 * that directory as git reads it there, recursively; and the submodule repositories kept under
 * `modules/`. At most `maxModules` of them in all (`budget`): more asks.
 */
async function checkRepository(
  run: GitRunner,
  cwd: string,
  home: string,
  env: NodeJS.ProcessEnv,
  terminal: TerminalGit & { env: Record<string, string>; roots: string[] | null },
  budget: { left: number },
  within: string,
): Promise<string | null> {
  const listed = await listConfig(run, cwd, env);
  if ('problem' in listed) return `${within}${listed.problem}`;
  const roots = terminal.roots;
  const worktrees: GitEntry[] = [];
  const later = roots ? (entry: GitEntry) => isWorktreeSetting(entry) && worktrees.push(entry) > 0 : undefined;
  const problem = judgeEntries(listed.entries, home, terminal, later);
  if (problem) return `${within}${problem}`;
  const found = await locate(run, cwd, env);
  const wrongTree = worktrees.find((entry) => !found || !worktreeInside(entry, cwd, [found.gitDir, found.common], roots!));
  if (wrongTree) return `${within}${offList(wrongTree, "a worktree outside the terminal's workspace")}`;
  if (!found) return null;
  // Hooks live in the common git directory (a linked worktree's too); `core.hooksPath` is off the list.
  const hook = hookProblem(join(found.common, 'hooks'), terminal);
  if (hook) return `${within}${hook}`;
  if (terminal.roots) {
    const reach = reachBeyond(found, terminal.roots);
    if (reach !== null) return `${within}the repository here (${quoted(reach, 200)}) reaches outside the terminal's workspace: git would read files beyond it`;
  }
  const inner = gitEnv(home, nestedEnv(terminal.env));
  if (found.top) {
    const links = await gitlinks(run, found.top, env);
    if ('problem' in links) return `${within}${links.problem}`;
    for (const path of links.paths) {
      const dir = join(found.top, path);
      // git runs itself only in a populated one: a `.git` file or directory in its worktree.
      if (!existsSync(join(dir, '.git'))) continue;
      if (budget.left <= 0) return tooManyRepositories;
      budget.left -= 1;
      const nested = await checkRepository(run, dir, home, inner, terminal, budget, `${within}in the nested repository ${quoted(path, 200)}: `);
      if (nested) return nested;
    }
  }
  if (!existsSync(join(found.common, 'modules'))) return null;
  const modules = moduleDirs(found.common, budget);
  if (!modules) return tooManyRepositories;
  for (const dir of modules) {
    const inModule = await listConfig(run, cwd, { ...inner, GIT_DIR: dir });
    if ('problem' in inModule) return `${within}${inModule.problem}`;
    const inside = (entry: GitEntry) => !!roots && isWorktreeSetting(entry) && worktreeInside(entry, cwd, [dir], roots);
    const bad = judgeEntries(inModule.entries, home, terminal, inside) ?? hookProblem(join(dir, 'hooks'), terminal);
    if (bad) return `${within}a submodule: ${bad}`;
  }
  return null;
}

/**
 * Why git lines in `cwd` must ask because of the configuration git would use there, or null.
 * `terminal`: the terminal's own variables (`gitRelevantEnv` of them decide what git reads), so
 * git lists what it would really use there (its `GIT_CONFIG_*` as command scope, its
 * `GIT_DIR`...), and which of them the agent chose at open.
 * Asynchronous: git runs while the event loop keeps serving every terminal and connection.
 */
export async function gitConfigProblem(cwd: string, home: string, run: GitRunner = runGit, terminal: TerminalGit = {}): Promise<string | null> {
  const relevant = gitRelevantEnv(terminal.env);
  return checkRepository(
    run,
    cwd,
    home,
    gitEnv(home, relevant),
    {
      env: relevant,
      agentSet: terminal.agentSet ?? [],
      workspace: terminal.workspace,
      everyHook: terminal.everyHook,
      roots: terminal.workspace === undefined ? null : [terminal.workspace],
    },
    { left: maxModules },
    '',
  );
}

function realOr(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

function insideDir(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}
