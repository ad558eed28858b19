/**
 * Removing a tree an agent wrote, with directories it made unreadable or read-only (a chmod 000
 * folder, a Go module cache): unlocked without following links, then removed.
 */
import { chmodSync, closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Removes a tree a confined agent wrote, which may hold directories it made unreadable (mode
 * 000: a plain recursive removal gave up and left them in the person's state directory). Each
 * directory is opened without following a link and unlocked through its descriptor, and its
 * entries are reached through that descriptor (`/proc/self/fd`), so a link swapped in on the way
 * unlocks nothing outside the tree.
 */
export function removeLockedTree(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
    return;
  } catch {
    // A directory the agent locked: unlock, then remove again.
  }
  if (process.platform === 'linux') unlockDirectory(path, 0);
  else unlockByPath(path);
  rmSync(path, { recursive: true, force: true });
}

/** Deep enough for any tree an agent makes on purpose; deeper directories stay as they are. */
const maxUnlockDepth = 64;

/** Linux's O_PATH (not among Node's constants): a handle to the entry itself, whatever its mode or kind. */
export const O_PATH = 0o10000000;

/**
 * Makes the directory at `path` (a /proc/self/fd path below the first level) and those under it
 * searchable by their owner. Each entry is opened as itself (O_PATH, no link followed), changed
 * through its descriptor's /proc path only if it is a directory, and listed through that.
 */
function unlockDirectory(path: string, depth: number): void {
  let handle: number;
  try {
    handle = openSync(path, O_PATH | constants.O_NOFOLLOW);
  } catch {
    return;
  }
  try {
    const st = fstatSync(handle);
    if (!st.isDirectory()) return;
    const self = `/proc/self/fd/${handle}`;
    if ((st.mode & 0o700) !== 0o700) chmodSync(self, 0o700);
    if (depth >= maxUnlockDepth) return;
    for (const entry of readdirSync(self, { withFileTypes: true })) {
      if (entry.isDirectory()) unlockDirectory(`${self}/${entry.name}`, depth + 1);
    }
  } catch {
    // Gone meanwhile, or not the person's: the removal after this says what is left.
  } finally {
    closeSync(handle);
  }
}

/**
 * Where there is no O_PATH or /proc (macOS): by path, not following links. A removal of an
 * agent's files runs only with none of its terminals open, so nothing swaps links meanwhile.
 */
function unlockByPath(dir: string): void {
  try {
    chmodSync(dir, 0o700);
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (lstatSync(path).isDirectory()) unlockByPath(path);
    }
  } catch {
    // What cannot be changed fails the removal after this, which says so.
  }
}
