import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { holdsSensitivePath, isSensitivePath, type SensitiveRoots } from '../../sandbox/sensitive-paths.js';
import { toolRunFiles } from '../../sandbox/tool-files.js';

export interface OperandContext {
  /** The shell's working directory now: relative operands start here. */
  cwd: string;
  /**
   * The terminal's workspace: the real path of its cwd at open, taken as is. Resolving it again
   * here would let a folder replaced by a link later (to the home, or /) widen it.
   */
  workspace: string;
  roots: SensitiveRoots;
}

/**
 * `operand` from `cwd` as the kernel walks it, one component after another: never normalized
 * here, so `link/..` is the parent of the link's target, not the folder holding the link
 * (path.resolve would drop `link/..` before any link is followed: black-box round s41).
 */
export function physicalPath(cwd: string, operand: string): string {
  return isAbsolute(operand) ? operand : `${cwd.replace(/\/+$/, '')}/${operand}`;
}

/**
 * Places where the kernel resolves a link for the process that reads it (`/proc/self`,
 * `/proc/<pid>/cwd`, `/dev/fd/N`, `/dev/stdin`): a path through them means one thing to the
 * judge, resolving in Tandem's process, and another to the command (black-box round 7:
 * `cat /proc/self/cwd/x` was judged as Tandem's cwd and read the command's).
 */
const processViews: readonly string[] = ['/proc', '/dev'];
/** Links followed before a path is taken as a loop (the kernel's own limit is 40). */
const maxLinks = 40;

export type Resolved = { real: string; through: string | null } | { real: null; through: string | null };

/**
 * `path` (absolute) walked as the kernel walks it, one component after another: each link
 * followed where it is met (so `..` after a link is the parent of its target), the part that
 * does not exist kept as written. `real` is null when that tail goes up (`..`: where it leads
 * depends on what a later command creates) or the links loop; `through` names the first place
 * met in /proc or /dev, whose links are each process's own.
 */
export function resolvePath(path: string): Resolved {
  // Windows has neither /proc nor POSIX paths: its own realpath, component by component.
  if (process.platform === 'win32') return { real: windowsReal(path), through: null };
  let rest = path.split('/').filter((part) => part !== '');
  let current = '/';
  let links = 0;
  let through: string | null = null;
  while (rest.length > 0) {
    const name = rest.shift()!;
    if (name === '.') continue;
    if (name === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, name);
    if (through === null && processViews.some((view) => next !== view && inside(next, view))) through = next;
    let link: string | null = null;
    try {
      if (lstatSync(next).isSymbolicLink()) link = readlinkSync(next);
    } catch {
      // Missing from here on: kept as written, unless it goes up.
      const tail = [name, ...rest];
      return tail.includes('..') ? { real: null, through } : { real: join(current, ...tail.filter((part) => part !== '.')), through };
    }
    if (link === null) {
      current = next;
      continue;
    }
    if (++links > maxLinks) return { real: null, through };
    rest = [...link.split('/').filter((part) => part !== ''), ...rest];
    if (isAbsolute(link)) current = '/';
  }
  return { real: current, through };
}

function windowsReal(path: string): string | null {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = realpathSync.native(current);
      return missing.includes('..') ? null : join(real, ...missing.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return missing.includes('..') ? null : join(current, ...missing.reverse());
      missing.push(basename(current));
      current = parent;
    }
  }
}

/** `resolvePath`'s real path alone (null: it goes up from a folder that does not exist, or loops). */
export function resolveReal(path: string): string | null {
  return resolvePath(path).real;
}

function inside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Why reading `operand` asks (outside the workspace, or a sensitive place), or null when it may run. */
export function operandProblem(operand: string, context: OperandContext): string | null {
  const { real, through } = resolvePath(physicalPath(context.cwd, operand));
  if (through !== null) return `${operand} passes through ${through}, which each program reads as its own`;
  if (real === null) return `${operand} goes up (..) from a folder that does not exist yet, or its links loop`;
  if (isSensitivePath(real, context.roots)) return `${operand} is in a protected location (${real})`;
  // The workspace named, and where the operand leads when that is another path (black-box round
  // 16: the resolved path alone in parentheses read as the workspace).
  if (!inside(real, context.workspace)) {
    const leads = real === operand ? '' : `; it leads to ${real}`;
    return `${operand} is outside the terminal's workspace (${context.workspace})${leads}`;
  }
  return null;
}

/**
 * Why reading `operand` could change under the agent (a read-only command that may later read
 * something else, attack 8 of issue 23): it does not exist yet (a later command can make it a
 * symlink to anything while `tail --retry` waits for it), or it is a FIFO, a device or a socket
 * (a read that blocks, or reads another program's data). Null for a regular file or directory.
 */
export function changeableProblem(operand: string, context: Pick<OperandContext, 'cwd'>): string | null {
  let stat;
  try {
    stat = statSync(physicalPath(context.cwd, operand));
  } catch {
    return `${operand} does not exist yet (a later command could make it a link to anything)`;
  }
  if (stat.isFIFO()) return `${operand} is a FIFO`;
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return `${operand} is a device`;
  if (stat.isSocket()) return `${operand} is a socket`;
  return null;
}

/** Why searching the tree at `operand` asks: operandProblem, or a protected place inside it. */
export function treeProblem(operand: string, context: OperandContext): string | null {
  const problem = operandProblem(operand, context);
  if (problem) return problem;
  const real = resolveReal(physicalPath(context.cwd, operand));
  if (real === null) return `${operand} goes up (..) from a folder that does not exist yet`;
  return holdsSensitivePath(real, context.roots) ? `${operand === '.' ? 'the current directory' : operand} holds a protected location (${real})` : null;
}

/** Names in a path that the person's own tools run or read to decide what to run (tool-files.ts), and git's directory. */
const toolRunNames = new Set(['.git', ...toolRunFiles.filter((entry) => !entry.includes('/'))]);
const toolRunPairs = toolRunFiles.filter((entry) => entry.includes('/'));

/**
 * Why an operand of a program not known to only read (`uniq IN OUT`, `xxd IN OUT` write their
 * second) asks: it lies in a git directory (`.git/config`, hooks: the person's next `git status`
 * runs what is there), or is a file the person's tools run by themselves (`.envrc`, `.vscode/`,
 * ...), by its words or by where it leads (black-box round 11: an allowed `uniq notes.txt
 * .git/config` planted a `core.fsmonitor`). Checked whether or not it exists yet.
 */
export function toolFileProblem(operand: string, context: Pick<OperandContext, 'cwd' | 'workspace'>): string | null {
  const lexical = physicalPath(context.cwd, operand);
  for (const path of [lexical, resolvePath(lexical).real ?? lexical]) {
    // Below the workspace (what lies outside it asks anyway): the workspace's own path may hold such a name.
    const rel = relative(context.workspace, path);
    const parts = (isAbsolute(rel) ? path : rel).split('/');
    const hit = parts.find((part) => toolRunNames.has(part)) ?? toolRunPairs.find((pair) => `/${parts.join('/')}/`.includes(`/${pair}/`));
    if (hit !== undefined)
      return hit === '.git'
        ? `${operand} is in a git directory, whose configuration and hooks your own git runs`
        : `${operand} is a file your own tools run or read by themselves (${hit})`;
  }
  return null;
}

/** Operands that look like files: with a `/`, or naming something that exists. */
export function looksLikePath(operand: string, cwd: string): boolean {
  return operand.includes('/') || existsSync(physicalPath(cwd, operand));
}
