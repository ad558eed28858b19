import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { holdsSensitivePath, isSensitivePath, type SensitiveRoots } from '../../sandbox/sensitive-paths.js';

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
 * Follows every symlink of the part that exists (the kernel's realpath, which takes `..` after
 * a link physically); a missing tail is kept as written. Null when that tail goes up (`..`):
 * where it leads depends on what a later command creates.
 */
export function resolveReal(path: string): string | null {
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

function inside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Why reading `operand` asks (outside the workspace, or a sensitive place), or null when it may run. */
export function operandProblem(operand: string, context: OperandContext): string | null {
  const real = resolveReal(physicalPath(context.cwd, operand));
  if (real === null) return `${operand} goes up (..) from a folder that does not exist yet`;
  if (isSensitivePath(real, context.roots)) return `${operand} is in a protected location (${real})`;
  if (!inside(real, context.workspace)) return `${operand} is outside the terminal's workspace (${real})`;
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

/** Operands that look like files: with a `/`, or naming something that exists. */
export function looksLikePath(operand: string, cwd: string): boolean {
  return operand.includes('/') || existsSync(physicalPath(cwd, operand));
}
