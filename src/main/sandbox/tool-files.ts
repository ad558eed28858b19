/**
 * Files in the workspace that the person's own tools run by themselves when the person opens
 * or enters it, or read to decide what to run (direnv's `.envrc`, VS Code's `.vscode/` tasks and
 * settings, JetBrains' `.idea/`, a dev container's `.devcontainer/`, mise, npm and yarn settings,
 * cargo's config, husky's and pre-commit's hooks, git's attributes and modules): a confined agent may write them (they are workspace
 * files), so each change is told to the person once, as "changed files your tools may run".
 * `Makefile` is not one: nothing runs it unasked. So is a repository the agent made and added to
 * the index: the person's `git status` runs git inside it (gitlinkRepos).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { posix } from 'node:path';

// prettier-ignore
export const toolRunFiles: readonly string[] = [
  // editors and environments that run what they find on entering the folder
  '.envrc', '.vscode', '.idea', '.devcontainer', '.nvim.lua', '.exrc', '.lvimrc', '.zed', '.dir-locals.el',
  // version managers and their hooks (mise's hooks and env sources; the version files pick what runs)
  'mise.toml', '.mise.toml', '.tool-versions', '.nvmrc', '.node-version', '.python-version',
  // package managers' and build tools' own configuration: a script shell, a wrapper, a yarn binary
  '.npmrc', '.yarnrc', '.yarnrc.yml', '.cargo', '.bazelrc',
  // what git and its hook managers run or read as they go (the person's commit runs .husky's hooks)
  '.husky', '.pre-commit-config.yaml', '.gitattributes', '.gitmodules', '.lfsconfig',
  // a virtual environment's activation scripts, which the person sources (last: the bound is shared)
  '.venv/bin',
];
/** Bounded: a huge `.idea` is looked at this far and no further. */
const maxEntries = 500;
const maxDepth = 4;

/** Path (relative to the workspace) to a fingerprint of what it holds. */
export type ToolFilesSnapshot = Map<string, string>;

export function snapshotToolFiles(workspace: string): ToolFilesSnapshot {
  const out: ToolFilesSnapshot = new Map();
  const visit = (rel: string, depth: number) => {
    if (out.size >= maxEntries) return;
    const st = statSync(posix.join(workspace, rel), { throwIfNoEntry: false });
    if (!st) return;
    if (!st.isDirectory()) {
      out.set(rel, `${st.size}:${st.mtimeMs}:${st.ino}`);
      return;
    }
    if (depth >= maxDepth) return;
    let names: string[] = [];
    try {
      names = readdirSync(posix.join(workspace, rel));
    } catch {
      return;
    }
    for (const name of names.sort()) visit(posix.join(rel, name), depth + 1);
  };
  for (const rel of toolRunFiles) visit(rel, 0);
  return out;
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

/** Reports each change once: what changed since the last report. */
export class ToolFilesWatch {
  private last: ToolFilesSnapshot;
  private index: string;
  private repos: Set<string>;
  constructor(private readonly workspace: string) {
    this.last = snapshotToolFiles(workspace);
    this.index = indexStamp(workspace);
    this.repos = new Set(this.index === '' ? [] : gitlinkRepos(workspace));
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
    return changed;
  }
}
