/**
 * Files in the workspace that the person's own tools run by themselves when the person opens
 * or enters it, or read to decide what to run (direnv's `.envrc`, VS Code's `.vscode/` tasks and
 * settings, JetBrains' `.idea/`, a dev container's `.devcontainer/`, mise, npm and yarn settings,
 * cargo's config, husky's and pre-commit's hooks, git's attributes and modules): a confined agent may write them (they are workspace
 * files), so each change is told to the person once, as "changed files your tools may run".
 * `Makefile` is not one: nothing runs it unasked. So is a repository the agent made and added to
 * the index: the person's `git status` runs git inside it (gitlinkRepos); and one it made anywhere
 * below the root (NestedRepos): the person's git run in that folder runs its configuration.
 */
import { spawnSync } from 'node:child_process';
import { lstatSync, opendirSync, readlinkSync, statSync } from 'node:fs';
import { posix } from 'node:path';

// prettier-ignore
export const toolRunFiles: readonly string[] = [
  // editors and environments that run what they find on entering the folder
  '.envrc', '.vscode', '.idea', '.devcontainer', '.nvim.lua', '.exrc', '.lvimrc', '.zed', '.dir-locals.el',
  // version managers and their hooks (mise's hooks and env sources; the version files pick what runs)
  'mise.toml', '.mise.toml', '.tool-versions', '.nvmrc', '.node-version', '.python-version',
  // package managers' and build tools' own configuration: a script shell, a wrapper, a yarn binary
  '.npmrc', '.yarnrc', '.yarnrc.yml', '.cargo', '.bazelrc', '.bazelversion', '.mvn', 'gradle/wrapper',
  // yarn runs the release its yarnPath names and loads its plugins; node loads Plug'n'Play's loaders (round 13)
  '.yarn/releases', '.yarn/plugins', '.pnp.cjs', '.pnp.loader.mjs',
  'rust-toolchain', 'rust-toolchain.toml', '.sdkmanrc', '.ruby-version', '.java-version', '.terraform-version', '.envrc.local', '.env',
  // what git and its hook managers run or read as they go (the person's commit runs .husky's hooks)
  '.husky', '.pre-commit-config.yaml', 'lefthook.yml', '.lefthook.yml', 'lefthook-local.yml', '.overcommit.yml',
  '.simple-git-hooks.json', '.simple-git-hooks.js', '.simple-git-hooks.cjs', '.gitattributes', '.gitmodules', '.lfsconfig',
  // a virtual environment's activation scripts, which the person sources (last: the bound is shared)
  '.venv/bin',
];
/** Bounded: a huge `.idea` is looked at this far and no further. */
const maxEntries = 500;
const maxDepth = 4;

/** Path (relative to the workspace) to a fingerprint of what it holds. */
export type ToolFilesSnapshot = Map<string, string>;

/**
 * What each tool file holds now, read without following a link anywhere: a link is one entry,
 * fingerprinted by its text (the agent may point one at a folder the sandbox hides, and the
 * host, unconfined, would list it: black-box round s39). A folder is read only as far as the
 * bound, so a huge one costs no more than a small one.
 */
export function snapshotToolFiles(workspace: string): ToolFilesSnapshot {
  const out: ToolFilesSnapshot = new Map();
  const visit = (rel: string, depth: number) => {
    if (out.size >= maxEntries) return;
    const path = posix.join(workspace, rel);
    let st;
    try {
      st = lstatSync(path, { throwIfNoEntry: false });
    } catch {
      return;
    }
    if (!st) return;
    if (st.isSymbolicLink()) {
      let target = '';
      try {
        target = readlinkSync(path);
      } catch {
        // Gone since: the fingerprint says so.
      }
      out.set(rel, `link:${target}:${st.ino}`);
      return;
    }
    if (!st.isDirectory()) {
      out.set(rel, `${st.size}:${st.mtimeMs}:${st.ino}`);
      return;
    }
    if (depth >= maxDepth) return;
    const names: string[] = [];
    let dir;
    try {
      dir = opendirSync(path);
    } catch {
      return;
    }
    try {
      for (let entry = dir.readSync(); entry !== null && names.length < maxEntries - out.size; entry = dir.readSync()) names.push(entry.name);
    } catch {
      // Unreadable midway: what was read counts.
    } finally {
      dir.closeSync();
    }
    for (const name of names.sort()) visit(posix.join(rel, name), depth + 1);
  };
  for (const rel of toolRunFiles) {
    // A folder above the entry that is a link (`.venv` for `.venv/bin`) is the entry: not followed.
    const parts = rel.split('/');
    const linked = parts.slice(0, -1).findIndex((_, i) => isLink(posix.join(workspace, ...parts.slice(0, i + 1))));
    visit(linked >= 0 ? parts.slice(0, linked + 1).join('/') : rel, 0);
  }
  return out;
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  } catch {
    return false;
  }
}

/** Files created, changed or removed between two snapshots, sorted. */
export function changedToolFiles(before: ToolFilesSnapshot, after: ToolFilesSnapshot): string[] {
  const changed = new Set<string>();
  for (const [rel, print] of after) if (before.get(rel) !== print) changed.add(rel);
  for (const rel of before.keys()) if (!after.has(rel)) changed.add(rel);
  return [...changed].sort();
}

/**
 * Repositories inside the workspace that the person's `git status` at the workspace's root would
 * run git in: the submodules the index names (gitlinks, mode 160000) that hold a `.git` of
 * their own. A repository the agent makes and adds to the index is one; its own config (a
 * `core.fsmonitor`) then runs in the person's `git status`. Read with the index's own git,
 * with nothing of the repository's that runs a program, and only when the index changed.
 */
export function gitlinkRepos(workspace: string): string[] {
  const run = spawnSync('git', ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', 'ls-files', '--stage', '-z'], {
    cwd: workspace,
    encoding: 'utf8',
    timeout: 5000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_OPTIONAL_LOCKS: '0' },
  });
  if (run.status !== 0) return [];
  const out: string[] = [];
  for (const record of run.stdout.split('\0')) {
    if (!record.startsWith('160000 ')) continue;
    const rel = record.slice(record.indexOf('\t') + 1);
    if (statSync(posix.join(workspace, rel, '.git'), { throwIfNoEntry: false })) out.push(posix.join(rel, '.git'));
  }
  return out.sort();
}

function indexStamp(workspace: string): string {
  let st;
  try {
    st = statSync(posix.join(workspace, '.git', 'index'), { throwIfNoEntry: false });
  } catch {
    // `.git` is a file (a linked worktree or a submodule): ENOTDIR, no index of its own here.
    return '';
  }
  return st ? `${st.size}:${st.mtimeMs}:${st.ino}` : '';
}

/** How far the look for nested repositories goes: folders below the root, and folders in all. */
const nestedDepth = 4;
const nestedFolders = 2000;
/** Folders that hold installed packages, not repositories anyone enters (build output is entered: round 12 planted one in build/). */
const notEntered = new Set(['.git', 'node_modules', '__pycache__']);

/**
 * Repositories below the workspace's root that the agent made (`git init` in a folder, then its
 * `core.fsmonitor` set): the person's git run in that folder, or a prompt that shows git's
 * state there, runs their configuration (black-box round 11; one added to the index is also a
 * gitlink). A bounded walk that reads again only the folders whose modification time moved (an
 * entry made or removed in them), so a look after each command costs a stat per folder.
 */
class NestedRepos {
  private readonly folders = new Map<string, { mtimeMs: number; children: string[]; repo: boolean }>();

  constructor(private readonly workspace: string) {}

  /** Workspace-relative `.git` paths of the repositories below the root now. */
  look(): Set<string> {
    const repos = new Set<string>();
    const seen = new Set<string>();
    const queue: Array<{ rel: string; depth: number }> = [{ rel: '', depth: 0 }];
    while (queue.length > 0 && seen.size < nestedFolders) {
      const { rel, depth } = queue.shift()!;
      seen.add(rel);
      const folder = this.read(rel);
      if (!folder) continue;
      if (folder.repo && rel !== '') repos.add(posix.join(rel, '.git'));
      if (depth < nestedDepth) for (const child of folder.children) queue.push({ rel: posix.join(rel, child), depth: depth + 1 });
    }
    for (const rel of this.folders.keys()) if (!seen.has(rel)) this.folders.delete(rel);
    return repos;
  }

  private read(rel: string): { children: string[]; repo: boolean } | null {
    const path = posix.join(this.workspace, rel);
    let st;
    try {
      st = lstatSync(path, { throwIfNoEntry: false });
    } catch {
      return null;
    }
    // Links are not followed: a folder elsewhere is no repository of this workspace's.
    if (!st?.isDirectory()) return null;
    const known = this.folders.get(rel);
    if (known && known.mtimeMs === st.mtimeMs) return known;
    const children: string[] = [];
    let repo = false;
    let dir;
    try {
      dir = opendirSync(path);
    } catch {
      return null;
    }
    try {
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        if (entry.name === '.git') repo = true;
        else if (entry.isDirectory() && !notEntered.has(entry.name) && children.length < nestedFolders) children.push(entry.name);
      }
    } catch {
      // Unreadable midway: what was read counts.
    } finally {
      dir.closeSync();
    }
    const folder = { mtimeMs: st.mtimeMs, children: children.sort(), repo };
    this.folders.set(rel, folder);
    return folder;
  }
}

/** Reports each change once: what changed since the last report. */
export class ToolFilesWatch {
  private last: ToolFilesSnapshot;
  private index: string;
  private repos: Set<string>;
  private readonly nested: NestedRepos;
  private nestedRepos: Set<string>;
  constructor(private readonly workspace: string) {
    this.last = snapshotToolFiles(workspace);
    this.index = indexStamp(workspace);
    this.repos = new Set(this.index === '' ? [] : gitlinkRepos(workspace));
    // Repositories already there at the open are the person's: the protection covers them (git-protect.ts).
    this.nested = new NestedRepos(workspace);
    this.nestedRepos = this.nested.look();
  }

  /** Workspace-relative paths changed since the previous call (or since the terminal opened). */
  changes(): string[] {
    const now = snapshotToolFiles(this.workspace);
    const changed = changedToolFiles(this.last, now);
    this.last = now;
    const index = indexStamp(this.workspace);
    if (index !== this.index && index !== '') {
      const repos = gitlinkRepos(this.workspace);
      for (const repo of repos) if (!this.repos.has(repo)) changed.push(repo);
      this.repos = new Set([...this.repos, ...repos]);
    }
    this.index = index;
    const nested = this.nested.look();
    for (const repo of nested) if (!this.nestedRepos.has(repo) && !changed.includes(repo)) changed.push(repo);
    this.nestedRepos = new Set([...this.nestedRepos, ...nested]);
    return changed;
  }
}
