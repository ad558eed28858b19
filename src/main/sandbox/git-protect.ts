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
 *   and a `core.hooksPath` inside the workspace. Objects, refs, the index and logs stay
 *   writable, so the agent still commits.
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
 * A repository the agent creates inside the workspace is its own and not protected (adding it
 * to the index is told to the person: tool-files.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { posix } from 'node:path';
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
/** Nested repositories protected at most (each is a `git ls-files` at open); past it the tab's tool-files warning still tells. */
const maxNestedRepos = 32;

function stat(path: string) {
  return statSync(path, { throwIfNoEntry: false });
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The git directory a `.git` file points to (`gitdir: PATH`), resolved against the file's directory. */
function gitfileTarget(file: string): string | null {
  try {
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(file, 'utf8').slice(0, 4096));
    return match ? real(posix.resolve(posix.dirname(file), match[1]!)) : null;
  } catch {
    return null;
  }
}

/** One `git config --list` per config file version, per process: opens stay cheap. */
const configCache = new Map<string, { stamp: string; values: Map<string, string> }>();

function gitConfigValue(configFile: string, key: string): string | null {
  const st = stat(configFile);
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
    configCache.set(configFile, cached);
  }
  return cached.values.get(key.toLowerCase()) ?? null;
}

function looksLikeGitDir(dir: string): boolean {
  return existsSync(posix.join(dir, 'HEAD')) && (existsSync(posix.join(dir, 'objects')) || existsSync(posix.join(dir, 'commondir')));
}

/** Where a git directory's `core.hooksPath` and `core.worktree` point (config read without includes). */
function configPaths(gitDir: string): { hooksPath: string | null; worktree: string | null; worktreeConfig: boolean } {
  const config = posix.join(gitDir, 'config');
  const hooks = gitConfigValue(config, 'core.hooksPath');
  const worktree = gitConfigValue(config, 'core.worktree');
  return {
    hooksPath: hooks ? real(posix.resolve(gitDir, '..', hooks.replace(/^~(?=\/)/, process.env.HOME ?? '~'))) : null,
    worktree: worktree ? real(posix.resolve(gitDir, worktree)) : null,
    worktreeConfig: gitConfigValue(config, 'extensions.worktreeConfig') === 'true',
  };
}

/** Everything to protect for a confined terminal whose workspace is `workspace` (resolved). */
export function gitProtection(workspace: string): GitProtection {
  const out: GitProtection = { anchors: [], readOnly: [], written: [] };
  const seen = new Set<string>();
  const inside = (path: string) => within(path, workspace);
  const readOnly = (path: string) => {
    const st = stat(path);
    if (st && inside(path)) out.readOnly.push({ path, dir: st.isDirectory() });
  };

  const protectGitDir = (gitDir: string) => {
    if (seen.has(gitDir) || !inside(gitDir) || !stat(gitDir)?.isDirectory()) return;
    seen.add(gitDir);
    out.anchors.push({ path: gitDir, dir: true });
    const config = configPaths(gitDir);
    for (const dir of ['hooks', 'info']) if (!existsSync(posix.join(gitDir, dir))) mkdirSync(posix.join(gitDir, dir));
    if (existsSync(posix.join(gitDir, 'objects')) && !existsSync(posix.join(gitDir, 'objects', 'info'))) mkdirSync(posix.join(gitDir, 'objects', 'info'));
    const commondir = posix.join(gitDir, 'commondir');
    if (!existsSync(commondir) && existsSync(posix.join(gitDir, 'objects'))) {
      writeFileSync(commondir, neutralCommondir);
      heldCommondirs.set(commondir, 0);
    }
    if (heldCommondirs.has(commondir)) {
      heldCommondirs.set(commondir, heldCommondirs.get(commondir)! + 1);
      out.written.push(commondir);
    }
    const worktreeConfig = posix.join(gitDir, 'config.worktree');
    if (config.worktreeConfig && !existsSync(worktreeConfig)) writeFileSync(worktreeConfig, '');
    for (const name of ['config', 'config.worktree', 'hooks', 'info', 'commondir', 'gitdir', 'objects/info']) readOnly(posix.join(gitDir, name));
    if (config.hooksPath) readOnly(config.hooksPath);
    // A submodule's work tree holds a `.git` file naming this directory.
    if (config.worktree) protectDotGit(posix.join(config.worktree, '.git'));
    for (const group of ['modules', 'worktrees']) walkGitDirs(posix.join(gitDir, group), group === 'modules' ? 4 : 1);
    // A linked worktree's `gitdir` file names its `.git` file.
    const linked = posix.join(gitDir, 'gitdir');
    if (stat(linked)?.isFile()) {
      try {
        protectDotGit(real(posix.resolve(gitDir, readFileSync(linked, 'utf8').trim())));
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
      if (!stat(path)?.isDirectory()) continue;
      if (looksLikeGitDir(path)) protectGitDir(path);
      else if (depth > 1) walkGitDirs(path, depth - 1);
    }
  };

  const protectDotGit = (dotGit: string) => {
    if (seen.has(dotGit) || !inside(dotGit)) return;
    const st = stat(dotGit);
    if (!st) return;
    if (st.isDirectory()) {
      protectGitDir(dotGit);
      return;
    }
    seen.add(dotGit);
    out.anchors.push({ path: dotGit, dir: false });
    out.readOnly.push({ path: dotGit, dir: false });
    const target = gitfileTarget(dotGit);
    if (target) protectGitDir(target);
  };

  protectDotGit(posix.join(workspace, '.git'));
  // Nested repositories, breadth first: each one's own gitlinks are read from its own index.
  const roots = [workspace];
  let budget = maxNestedRepos;
  while (roots.length > 0 && budget > 0) {
    const root = roots.shift()!;
    for (const rel of gitlinkRepos(root)) {
      if (budget-- <= 0) break;
      const dotGit = posix.join(root, rel);
      protectDotGit(dotGit);
      roots.push(posix.dirname(dotGit));
    }
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
