/**
 * Files in the workspace that the person's own tools run by themselves when the person opens
 * or enters it (direnv's `.envrc`, VS Code's `.vscode/` tasks and settings, JetBrains' `.idea/`,
 * a dev container's `.devcontainer/`): a confined agent may write them (they are workspace
 * files), so each change is told to the person once, as "changed files your tools may run".
 * `Makefile` is not one: nothing runs it unasked.
 */
import { readdirSync, statSync } from 'node:fs';
import { posix } from 'node:path';

export const toolRunFiles: readonly string[] = ['.envrc', '.vscode', '.idea', '.devcontainer', '.nvim.lua', '.exrc', '.lvimrc'];
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

/** Reports each change once: what changed since the last report. */
export class ToolFilesWatch {
  private last: ToolFilesSnapshot;
  constructor(private readonly workspace: string) {
    this.last = snapshotToolFiles(workspace);
  }

  /** Workspace-relative paths changed since the previous call (or since the terminal opened). */
  changes(): string[] {
    const now = snapshotToolFiles(this.workspace);
    const changed = changedToolFiles(this.last, now);
    this.last = now;
    return changed;
  }
}
