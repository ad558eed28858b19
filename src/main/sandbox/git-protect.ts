/**
 * The workspace repository's `.git`, protected as git would execute it (issue 24): the person's
 * own unconfined `git status` must run nothing a confined agent wrote.
 *
 * - Each git directory in the workspace (the repository's, its submodules' under
 *   `modules/`, its linked worktrees' under `worktrees/`) is bound onto itself: a mount point
 *   cannot be renamed, removed or replaced (EBUSY), so `mv .git .git-x && cp -a .git-x .git`
 *   and a symlink in its place fail. A `.git` file (a worktree's or submodule's) likewise.
 * - Read-only inside each: what git reads as configuration or runs: `config`,
 *   `config.worktree`, `hooks/`, `info/`, `commondir`, `gitdir`, `objects/info/` (alternates),
 *   a `core.hooksPath` inside the workspace, and the files its config includes from the
 *   workspace (`include.path`, `includeIf.*.path`, whatever the condition, and their includes;
 *   a missing one is made empty). Objects, refs, the index and logs stay writable, so the agent
 *   still commits.
 * - A file git would read that does not exist cannot be made read-only without a mount point:
 *   the missing directories are created (`hooks/`, `info/`, `objects/info/`, as `git init`
 *   makes them), and a missing `commondir` is written as `.` (the git directory itself, which
 *   git reads as if it were absent) while a confined terminal holds the repository, and removed
 *   after the last one closes. A missing `config.worktree` is made empty when the repository
 *   enables `extensions.worktreeConfig` (only then does git read it).
 *
 * - Repositories nested in the workspace that the person's `git status` runs git in (the
 *   index's gitlinks that hold a `.git` of their own, and theirs in turn, up to
 *   `maxNestedRepos`) are protected the same way: their config would otherwise run the agent's
 *   filter or fsmonitor in the person's next `git status` at the workspace's root.
 *
 * - Every other repository under the workspace (a `.git` directory or file found by a bounded
 *   walk that follows no symbolic link and skips `node_modules`): the person runs git in it
 *   when they `cd` there, so an agent must not plant its fsmonitor or hooks there either.
 *
 * Nothing is written through a symbolic link (issue 24's black-box round: a planted `.git` or
 * `commondir` link made the host create `hooks/` in ~/.ssh). A symbolic link inside the
 * workspace where git reads a repository from (`.git`, an entry of a git directory, a component
 * of a `gitdir:` or `core.hooksPath` path) cannot be pinned by a mount (a mount lands on its
 * target, and the link itself stays replaceable), so the open is refused (`sandbox_unavailable`)
 * naming the path. What Tandem creates, it creates relative to a directory handle it holds open
 * and has checked (`createIn`).
 *
 * A repository the agent creates inside the workspace is its own and not protected while the
 * terminal that made it is open (adding it to the index is told to the person: tool-files.ts);
 * the next confined open finds it and protects it like the person's.
 */
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { posix } from 'node:path';
import { TandemError } from '../../shared/errors.js';
import { gitlinkRepos } from './tool-files.js';
import type { HiddenPath } from './types.js';
import { within } from './types.js';

export interface GitProtection {
  /** Git directories and `.git` files bound onto themselves (writable under workspace-write), outermost first. */
  anchors: HiddenPath[];
  /** Bound read-only after the anchors. */
  readOnly: HiddenPath[];
  /** `commondir` files written for this terminal: released on close. */
  written: string[];
}

/** `commondir` files Tandem wrote, and how many confined terminals hold each. */
const heldCommondirs = new Map<string, number>();
const neutralCommondir = '.\n';
/** Repositories nested in the workspace protected at most; more makes the open refuse (each costs a config read and its mounts). */
export const maxNestedRepos = 256;
/** Directories the walk for nested repositories reads at most, and how deep; past either the open is refused. */
export const maxScannedDirs = 50_000;
const maxScanDepth = 32;
/** Entries of a git directory that git reads as configuration, runs, or follows to another repository. */
const gitDirEntries = ['config', 'config.worktree', 'hooks', 'info', 'commondir', 'gitdir', 'objects', 'objects/info', 'modules', 'worktrees'];

function lstat(path: string) {
  return lstatSync(path, { throwIfNoEntry: false });
}

function refuse(path: string, why: string): never {
  throw new TandemError(
    'sandbox_unavailable',
    `${path} ${why}: a confined terminal could not keep the agent from changing what git runs there. Open the terminal elsewhere, or replace the link with what it points to.`,
  );
}

function linkText(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '?';
  }
}

/** Refuses the open when git reaches `path` through a symbolic link inside the workspace (one the agent could replace). */
function noLinkInside(path: string, workspace: string): void {
  if (!within(path, workspace) || path === workspace) return;
  let at = workspace;
  for (const part of path.slice(workspace.length + 1).split('/')) {
    at = posix.join(at, part);
    const st = lstat(at);
    if (!st) return;
    if (st.isSymbolicLink()) refuse(at, `is a symbolic link (to ${linkText(at)}) where git looks for a repository`);
  }
}

/** Entries are made through /proc/self/fd/N (Linux): relative to a held directory handle. */
const procFd = existsSync('/proc/self/fd');

/**
 * Creates `name` in `dir` (a directory inside the workspace, reached through no symbolic link):
 * a directory, or a file holding `content`. `dir` is opened without following a link and must
 * be the directory at that path (same inode; its /proc link names the path); the entry is made
 * relative to that handle, and anything already there (a dangling link included) is left alone
 * (mkdir(2) and O_EXCL never follow a last component). So a directory or link swapped in
 * meanwhile gets nothing. Returns whether it created the entry.
 */
function createIn(dir: string, name: string, content: string | null): boolean {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    return false;
  }
  try {
    const held = fstatSync(fd);
    const there = lstat(dir);
    if (!there?.isDirectory() || there.ino !== held.ino || there.dev !== held.dev) return false;
    const base = procFd ? `/proc/self/fd/${fd}` : dir;
    if (procFd && readlinkSync(base) !== dir) return false;
    if (content === null) {
      mkdirSync(`${base}/${name}`, { mode: 0o755 });
      return true;
    }
    const file = openSync(`${base}/${name}`, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      writeSync(file, content);
    } finally {
      closeSync(file);
    }
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** Creates the missing directories of `path` below `from` (which exists), each with `createIn`. */
function createDirsIn(from: string, path: string): void {
  let at = from;
  for (const part of path.slice(from.length + 1).split('/')) {
    const next = posix.join(at, part);
    if (!lstat(next)) createIn(at, part, null);
    at = next;
  }
}

/** The git directory a `.git` file points to (`gitdir: PATH`), resolved lexically against the file's directory. */
function gitfileTarget(file: string): string | null {
  try {
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(file, 'utf8').slice(0, 4096));
    return match ? posix.resolve(posix.dirname(file), match[1]!) : null;
  } catch {
    return null;
  }
}

/** One `git config --list` per config file version, per process: opens stay cheap. */
const configCache = new Map<string, { stamp: string; values: Map<string, string> }>();

function gitConfigValue(configFile: string, key: string): string | null {
  const st = lstat(configFile);
  if (!st?.isFile()) return null;
  const stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
  let cached = configCache.get(configFile);
  if (cached?.stamp !== stamp) {
    const run = spawnSync('git', ['config', '--file', configFile, '--no-includes', '--list', '-z'], { encoding: 'utf8', timeout: 5000 });
    const values = new Map<string, string>();
    for (const record of run.status === 0 ? run.stdout.split('\0') : []) {
      const newline = record.indexOf('\n');
      if (record !== '') values.set((newline < 0 ? record : record.slice(0, newline)).toLowerCase(), newline < 0 ? 'true' : record.slice(newline + 1));
    }
    cached = { stamp, values };
    // Bounded: one entry per config file seen; a long-running host forgets them all past 1,024.
    if (configCache.size >= 1024) configCache.clear();
    configCache.set(configFile, cached);
  }
  return cached.values.get(key.toLowerCase()) ?? null;
}

/** At most this many files a repository's config includes are followed (includes of includes too). */
const maxIncludedFiles = 32;

/**
 * The files a config file includes (`include.path`, `includeIf.*.path`), resolved as git does:
 * relative to the including file's folder, `~/` from the home. Every condition counts, met or not:
 * the agent may meet one later (a branch it checks out).
 */
function includedFiles(configFile: string): string[] {
  if (!lstat(configFile)?.isFile()) return [];
  const run = spawnSync('git', ['config', '--file', configFile, '--no-includes', '--get-regexp', '-z', '^include(if\\..*)?\\.path$'], {
    encoding: 'utf8',
    timeout: 5000,
  });
  if (run.status !== 0) return [];
  return run.stdout
    .split('\0')
    .map((record) => record.slice(record.indexOf('\n') + 1))
    .filter((value) => value !== '' && !value.includes('\n'))
    .map((value) => posix.resolve(posix.dirname(configFile), value.replace(/^~(?=\/)/, process.env.HOME ?? '~')));
}

/**
 * Refuses a workspace inside a repository's machinery: a git directory (`.git`, a bare
 * repository, a submodule's under `.git/modules`) or the hooks folder a repository above names
 * (`core.hooksPath`). Found black-box: a confined terminal opened in `~/proj/.git` wrote
 * `hooks/pre-commit` and `core.fsmonitor`, and the person's next commit ran them; what is
 * protected is found under the workspace, and there the workspace is the repository's inside.
 */
function insideGitMachinery(workspace: string): void {
  for (let dir = workspace; ; dir = posix.dirname(dir)) {
    if (posix.basename(dir) === '.git' || looksLikeGitDir(dir)) refuse(workspace, `is inside the git directory ${dir}, which the person's git reads and runs`);
    const dotGit = posix.join(dir, '.git');
    const st = dir === workspace ? undefined : lstat(dotGit);
    const gitDir = st?.isDirectory() ? dotGit : st?.isFile() ? gitfileTarget(dotGit) : null;
    const hooks = gitDir ? configPaths(gitDir).hooksPath : null;
    if (hooks && within(workspace, hooks)) refuse(workspace, `is inside the hooks folder ${hooks} of the repository at ${dir}`);
    if (dir === '/') return;
  }
}

function looksLikeGitDir(dir: string): boolean {
  return existsSync(posix.join(dir, 'HEAD')) && (existsSync(posix.join(dir, 'objects')) || existsSync(posix.join(dir, 'commondir')));
}

/** Where a git directory's `core.hooksPath` and `core.worktree` point (config read without includes), resolved lexically. */
function configPaths(gitDir: string): { hooksPath: string | null; worktree: string | null; worktreeConfig: boolean } {
  const config = posix.join(gitDir, 'config');
  const hooks = gitConfigValue(config, 'core.hooksPath');
  const worktree = gitConfigValue(config, 'core.worktree');
  return {
    hooksPath: hooks ? posix.resolve(gitDir, '..', hooks.replace(/^~(?=\/)/, process.env.HOME ?? '~')) : null,
    worktree: worktree ? posix.resolve(gitDir, worktree) : null,
    worktreeConfig: gitConfigValue(config, 'extensions.worktreeConfig') === 'true',
  };
}

/** Resolves symbolic links outside the workspace (a /tmp that is /private/tmp); inside, `noLinkInside` has refused any. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Everything to protect for a confined terminal whose workspace is `workspace` (resolved).
 * Throws `sandbox_unavailable` (before anything is created) where a symbolic link inside the
 * workspace leads git to a repository, or where the workspace holds more repositories or
 * directories than the bounds. The walk for unrecorded repositories is skipped where the person
 * made their whole home (or `/`) the workspace: the agent may write their rc files there, which
 * run more than any repository's hooks.
 */
export function gitProtection(workspace: string, personHome = '', limits = { repos: maxNestedRepos, dirs: maxScannedDirs }): GitProtection {
  const out: GitProtection = { anchors: [], readOnly: [], written: [] };
  insideGitMachinery(workspace);
  const seen = new Set<string>();
  const gitDirs: string[] = [];
  const inside = (path: string) => within(path, workspace);
  const included = new Set<string>();
  const readOnly = (path: string) => {
    const st = lstat(path);
    if (st && inside(path)) out.readOnly.push({ path, dir: st.isDirectory() });
  };

  // First every check (each may refuse), then the writes: a refused open creates nothing.
  const findGitDir = (gitDir: string) => {
    if (seen.has(gitDir) || !inside(gitDir)) return;
    noLinkInside(gitDir, workspace);
    if (!lstat(gitDir)?.isDirectory()) return;
    seen.add(gitDir);
    for (const entry of gitDirEntries) noLinkInside(posix.join(gitDir, entry), workspace);
    gitDirs.push(gitDir);
    out.anchors.push({ path: gitDir, dir: true });
    const config = configPaths(gitDir);
    if (config.hooksPath) noLinkInside(config.hooksPath, workspace);
    // Files the config includes from the workspace are config too (found black-box: a tracked
    // `.gitconfig-shared` the repository includes took a `core.fsmonitor`), and so are theirs.
    const pending = [posix.join(gitDir, 'config'), posix.join(gitDir, 'config.worktree')];
    while (pending.length > 0 && included.size < maxIncludedFiles) {
      for (const file of includedFiles(pending.shift()!)) {
        if (!inside(file) || included.has(file)) continue;
        noLinkInside(file, workspace);
        included.add(file);
        pending.push(file);
      }
    }
    // A submodule's work tree holds a `.git` file naming this directory.
    if (config.worktree) findDotGit(posix.join(config.worktree, '.git'));
    for (const group of ['modules', 'worktrees']) walkGitDirs(posix.join(gitDir, group), group === 'modules' ? 4 : 1);
    // A linked worktree's `gitdir` file names its `.git` file.
    const linked = posix.join(gitDir, 'gitdir');
    if (lstat(linked)?.isFile()) {
      try {
        findDotGit(posix.resolve(gitDir, readFileSync(linked, 'utf8').trim()));
      } catch {
        // Unreadable: nothing to follow.
      }
    }
  };

  /** Submodules nest (`modules/a/modules/b`) and may have slashes in their names. */
  const walkGitDirs = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = posix.join(dir, name);
      noLinkInside(path, workspace);
      if (!lstat(path)?.isDirectory()) continue;
      if (looksLikeGitDir(path)) findGitDir(path);
      else if (depth > 1) walkGitDirs(path, depth - 1);
    }
  };

  const findDotGit = (dotGit: string) => {
    if (seen.has(dotGit) || !inside(dotGit)) return;
    noLinkInside(dotGit, workspace);
    const st = lstat(dotGit);
    if (!st) return;
    if (st.isDirectory()) {
      findGitDir(dotGit);
      return;
    }
    if (!st.isFile()) return;
    seen.add(dotGit);
    out.anchors.push({ path: dotGit, dir: false });
    out.readOnly.push({ path: dotGit, dir: false });
    const target = gitfileTarget(dotGit);
    if (target) {
      noLinkInside(target, workspace);
      findGitDir(inside(target) ? target : real(target));
    }
  };

  findDotGit(posix.join(workspace, '.git'));
  let budget = limits.repos;
  const nested = (dotGit: string) => {
    if (seen.has(dotGit)) return;
    if (budget-- <= 0) refuse(workspace, `holds more than ${limits.repos} git repositories`);
    findDotGit(dotGit);
  };
  // The index's gitlinks (the person's `git status` at the root runs git in them), breadth first.
  const roots = [workspace];
  for (let n = 0; roots.length > 0 && n < limits.repos; n++) {
    const root = roots.shift()!;
    for (const rel of gitlinkRepos(root)) {
      const dotGit = posix.join(root, rel);
      nested(dotGit);
      roots.push(posix.dirname(dotGit));
    }
  }
  // Then every other `.git` under the workspace: the person runs git there when they `cd` in.
  // The walk follows no link, and skips node_modules (package managers leave no repositories there).
  const queue: Array<{ dir: string; depth: number }> = workspace === personHome || workspace === '/' ? [] : [{ dir: workspace, depth: 0 }];
  let scanned = 0;
  while (queue.length > 0) {
    const { dir, depth } = queue.shift()!;
    if (++scanned > limits.dirs) refuse(workspace, `holds more than ${limits.dirs} folders to look through for git repositories`);
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = posix.join(dir, entry.name);
      if (entry.name === '.git') {
        if (dir !== workspace) nested(path);
        continue;
      }
      if (!entry.isDirectory() || entry.name === 'node_modules') continue;
      if (depth >= maxScanDepth) refuse(path, `lies more than ${maxScanDepth} folders deep, past where Tandem looks for git repositories`);
      queue.push({ dir: path, depth: depth + 1 });
    }
  }

  // The checks held: create what git would read if it existed, each through a held handle.
  for (const gitDir of gitDirs) {
    const config = configPaths(gitDir);
    for (const dir of ['hooks', 'info']) if (!lstat(posix.join(gitDir, dir))) createIn(gitDir, dir, null);
    const objects = posix.join(gitDir, 'objects');
    if (lstat(objects)?.isDirectory() && !lstat(posix.join(objects, 'info'))) createIn(objects, 'info', null);
    const commondir = posix.join(gitDir, 'commondir');
    if (!lstat(commondir) && lstat(objects)?.isDirectory() && createIn(gitDir, 'commondir', neutralCommondir)) heldCommondirs.set(commondir, 0);
    if (heldCommondirs.has(commondir)) {
      heldCommondirs.set(commondir, heldCommondirs.get(commondir)! + 1);
      out.written.push(commondir);
    }
    if (config.worktreeConfig && !lstat(posix.join(gitDir, 'config.worktree'))) createIn(gitDir, 'config.worktree', '');
    for (const name of ['config', 'config.worktree', 'hooks', 'info', 'commondir', 'gitdir', 'objects/info']) readOnly(posix.join(gitDir, name));
    // A hooks folder the config names inside the workspace, made if missing so the agent cannot make it.
    if (config.hooksPath && inside(config.hooksPath)) {
      if (!lstat(config.hooksPath)) createDirsIn(workspace, config.hooksPath);
      readOnly(config.hooksPath);
    }
  }
  // An included file that is missing is made empty (git reads it as nothing), so the agent cannot make it.
  for (const file of included) {
    if (!lstat(file) && lstat(posix.dirname(file))?.isDirectory()) createIn(posix.dirname(file), posix.basename(file), '');
    readOnly(file);
  }
  // Outermost first: an inner anchor mounts on top of the outer one.
  out.anchors.sort((a, b) => a.path.split('/').length - b.path.split('/').length);
  return out;
}

/** Removes the `commondir` files this terminal held once no confined terminal holds them, if they still say `.`. */
export function releaseGitProtection(written: readonly string[]): void {
  for (const path of written) {
    const count = (heldCommondirs.get(path) ?? 1) - 1;
    if (count > 0) {
      heldCommondirs.set(path, count);
      continue;
    }
    heldCommondirs.delete(path);
    try {
      if (readFileSync(path, 'utf8') === neutralCommondir) rmSync(path, { force: true });
    } catch {
      // Gone already.
    }
  }
}
