import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, win32 } from 'node:path';
import { TandemError } from '../../shared/errors.js';
import { bashDialect, bashDialectFor } from './bash.js';
import { cmdDialect } from './cmd.js';
import type { DialectName, ShellDialect } from './dialect.js';
import { findGitBash, isWslLauncher } from './git-bash.js';
import { powershellDialect, pwshDialect } from './pwsh.js';
import { findWindowsPowerShell } from './windows-powershell.js';
import { shDialect } from './sh.js';
import { zshDialect } from './zsh.js';

export interface ResolvedShell {
  path: string;
  /** The executable's name without `.exe`, lower case: what the person and agents see. */
  name: string;
  dialect: ShellDialect | null;
}

const dialects = new Map<string, ShellDialect>([
  ['bash', bashDialect],
  ['zsh', zshDialect],
  ['sh', shDialect],
  ['dash', shDialect],
  ['pwsh', pwshDialect],
  ['powershell', powershellDialect],
  ['cmd', cmdDialect],
]);

export function shellName(path: string): string {
  // Both separators: Windows paths are named the same on every host (and in tests).
  return win32
    .basename(path)
    .toLowerCase()
    .replace(/\.exe$/, '');
}

export function dialectFor(path: string): ShellDialect | null {
  if (isWslLauncher(path)) return null;
  const dialect = dialects.get(shellName(path)) ?? null;
  // A bash older than 4.4 (macOS's /bin/bash) gets the legacy integration (bash.ts).
  return dialect === bashDialect ? bashDialectFor(path) : dialect;
}

/** The dialect of a family (`ShellDialect.name`, as a terminal's judge context names it); null for none or an unknown name. */
export function dialectByName(name: DialectName | string | null): ShellDialect | null {
  if (name === null) return null;
  return [...dialects.values()].find((dialect) => dialect.name === name) ?? null;
}

/** The dialect of a running shell by its process name (login dashes dropped), without reading its version. */
export function dialectOfProcess(comm: string): ShellDialect | null {
  return dialects.get(comm.replace(/^-/, '')) ?? null;
}

export function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    if (process.platform !== 'win32') accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds an executable on PATH (with PATHEXT on Windows); null when absent. */
export function which(name: string, pathEnv = process.env.PATH ?? ''): string | null {
  const exts = process.platform === 'win32' ? ['', ...(process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = join(dir, name + ext);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return null;
}

/** `powershell` off PATH on Windows: it is at a fixed place (windows-powershell.ts). */
function windowsPowerShell(name: string): string | null {
  return process.platform === 'win32' && shellName(name) === 'powershell' ? findWindowsPowerShell(process.env, isExecutableFile) : null;
}

/** A shell by name (`bash`, `pwsh`) or path; `shell_not_found` with one sentence otherwise. */
export function resolveShell(nameOrPath: string, pathEnv = process.env.PATH ?? ''): ResolvedShell {
  const trimmed = nameOrPath.trim();
  if (!trimmed) throw new TandemError('invalid_argument', 'shell must name a shell such as bash, zsh or pwsh.');
  const gitBash =
    process.platform === 'win32' && shellName(trimmed) === 'bash' && !isAbsolute(trimmed)
      ? findGitBash(process.env, which('git', pathEnv), isExecutableFile)
      : null;
  const path = gitBash ?? (isAbsolute(trimmed) ? (isExecutableFile(trimmed) ? trimmed : null) : (which(trimmed, pathEnv) ?? windowsPowerShell(trimmed)));
  if (!path) throw new TandemError('shell_not_found', `No executable shell "${trimmed}" was found on this machine; install it or name another shell.`);
  return { path, name: shellName(path), dialect: dialectFor(path) };
}
