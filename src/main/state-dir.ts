import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, posix, relative, resolve, win32 } from 'node:path';

const appDirName = 'Tandem';

/** Enough of a process to decide where state lives; injectable so tests need no real home. */
export interface StateDirEnv {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  home: string;
}

/**
 * Where Tandem keeps its state (settings, tokens, Electron's userData).
 * `$TANDEM_HOME` wins on every platform so tests and portable setups can isolate it.
 */
export function stateDir(from: StateDirEnv = { platform: process.platform, env: process.env, home: homedir() }): string {
  const { platform, env, home } = from;
  // Electron's app.setPath rejects relative paths.
  if (env.TANDEM_HOME) return resolve(env.TANDEM_HOME);
  switch (platform) {
    case 'darwin':
      return posix.join(home, 'Library', 'Application Support', appDirName);
    case 'win32':
      return win32.join(env.APPDATA || win32.join(home, 'AppData', 'Roaming'), appDirName);
    default:
      // XDG says a relative XDG_CONFIG_HOME is invalid and must be ignored.
      return posix.join(env.XDG_CONFIG_HOME && posix.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : posix.join(home, '.config'), appDirName);
  }
}

/**
 * Machine-local state: Electron's profile (caches), the instance lock and instance.json. On
 * Windows that is %LOCALAPPDATA%, which never roams to another machine with the profile; on
 * Linux and macOS it is the state directory.
 */
export function localStateDir(from: StateDirEnv = { platform: process.platform, env: process.env, home: homedir() }): string {
  const { platform, env, home } = from;
  if (env.TANDEM_HOME || platform !== 'win32') return stateDir(from);
  return win32.join(env.LOCALAPPDATA || win32.join(home, 'AppData', 'Local'), appDirName);
}

/**
 * Where Tandem keeps state when no TANDEM_HOME says otherwise, for a person whose home is
 * `home`: the state and the machine-local state directories (one on Linux and macOS).
 */
export function defaultStateDirs(home: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): string[] {
  const from = { platform, env: { ...env, TANDEM_HOME: undefined }, home };
  return [...new Set([stateDir(from), localStateDir(from)])];
}

/** Where instances kept in other state directories (`TANDEM_HOME`) record themselves: in the default one. */
const registryDirName = 'state-dirs';
/** At most this many other state directories are read (a registry filled with junk protects the first ones). */
const maxKnownStateDirs = 64;

function registryOf(home: string, platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string {
  return join(defaultStateDirs(home, platform, env)[0]!, registryDirName);
}

/**
 * Records `dir`, a state directory other than the default, in the default one's registry: one
 * 0600 file per directory (named by its hash, so two instances starting at once do not race a
 * shared list), so every other instance of this person's protects it from agents as its own.
 * Best effort: a registry that cannot be written leaves `dir` unprotected by the others.
 */
export function registerStateDir(dir: string, home: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!isAbsolute(dir) || defaultStateDirs(home, platform, env).includes(dir)) return false;
  const registry = registryOf(home, platform, env);
  try {
    mkdirSync(registry, { recursive: true, mode: 0o700 });
    const file = join(registry, createHash('sha256').update(dir).digest('hex').slice(0, 32));
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, dir, { mode: 0o600 });
    renameSync(temp, file);
    return true;
  } catch {
    return false;
  }
}

/**
 * The other state directories this person's instances recorded (`registerStateDir`) that still
 * exist. Entries of directories gone are removed as they are read.
 */
export function knownStateDirs(home: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): string[] {
  const registry = registryOf(home, platform, env);
  let mtime: number;
  try {
    mtime = statSync(registry).mtimeMs;
  } catch {
    return [];
  }
  // The judge asks for this on every send: the folder is read again only when it changed.
  let entries = registryCache.get(registry);
  if (entries?.mtime !== mtime) {
    entries = { mtime, dirs: readRegistry(registry, home) };
    registryCache.set(registry, entries);
    if (registryCache.size > maxKnownStateDirs) registryCache.delete(registryCache.keys().next().value!);
  }
  const dirs: string[] = [];
  for (const { file, dir } of entries.dirs) {
    if (existsSync(dir)) dirs.push(dir);
    else rmSync(file, { force: true });
  }
  return dirs;
}

const registryCache = new Map<string, { mtime: number; dirs: Array<{ file: string; dir: string }> }>();

function readRegistry(registry: string, home: string): Array<{ file: string; dir: string }> {
  let names: string[];
  try {
    names = readdirSync(registry).filter((name) => /^[0-9a-f]{32}$/.test(name));
  } catch {
    return [];
  }
  const dirs: Array<{ file: string; dir: string }> = [];
  for (const name of names.slice(0, maxKnownStateDirs)) {
    const file = join(registry, name);
    try {
      const dir = readFileSync(file, 'utf8');
      // Never the home or a folder above it (a planted entry must not hide everything).
      if (isAbsolute(dir) && !dir.includes('\0') && !within(home, dir)) dirs.push({ file, dir });
    } catch {
      // unreadable: skipped
    }
  }
  return dirs;
}

/** Whether `path` is `root` or inside it. */
function within(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}
