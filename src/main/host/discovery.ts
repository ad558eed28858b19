/**
 * Finding the running instance from the bridge's side, whatever environment its agent started
 * it with. The host writes instance.json where discoveryDir() says (instance.ts): $TANDEM_HOME,
 * else $XDG_RUNTIME_DIR/tandem, else the state directory. Agents often start the bridge with a
 * small environment (the MCP SDK's default: HOME, LOGNAME, PATH, SHELL, TERM, USER), so the
 * bridge cannot rely on $XDG_RUNTIME_DIR: it also looks in /run/user/<uid> and follows a pointer
 * the host leaves in the state directory when instance.json lives elsewhere.
 *
 * The discovery files are a security boundary: instance.json names the socket and URLs the
 * bridge hands its agent's token to. Nothing is trusted unless it is a regular file (never a
 * symlink) owned by this uid with no group or other permission, in a real directory owned by
 * this uid that nobody else can write to.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { localStateDir } from '../state-dir.js';

/** The pointer's name in the state directory: `{"instance": "<absolute path of instance.json>"}`. */
export const pointerName = 'instance-location.json';
const maxDiscoveryBytes = 64 * 1024;

export interface DiscoveryEnv {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** This process's uid (POSIX); null on Windows, where the per-user profile's ACLs guard the files. */
  uid: number | null;
  home: string;
  /** Where per-uid runtime directories live (`/run/user`); injectable for tests. */
  runUserRoot?: string;
}

export function processDiscoveryEnv(env: NodeJS.ProcessEnv = process.env): DiscoveryEnv {
  return { env, platform: process.platform, uid: process.getuid?.() ?? null, home: env.HOME || homedir() };
}

/** Text of a trusted discovery file, or why it is not trusted (`missing` when it is simply not there). */
export type TrustedRead = { text: string } | { refused: string };

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

/** Why a directory may not hold discovery files, or null when it may. */
export function untrustedDir(dir: string, uid: number | null): string | null {
  if (uid === null) return null;
  let stat;
  try {
    stat = lstatSync(dir);
  } catch {
    return 'missing';
  }
  if (stat.isSymbolicLink()) return `${dir} is a symlink`;
  if (!stat.isDirectory()) return `${dir} is not a directory`;
  if (stat.uid !== uid) return `${dir} belongs to uid ${stat.uid}`;
  if (stat.mode & 0o022) return `${dir} is writable by others (mode ${octal(stat.mode)})`;
  return null;
}

/**
 * Reads a discovery file only when it is trusted. The file is opened without following a
 * symlink and checked on the open descriptor, so it cannot be swapped between check and read.
 */
export function readTrusted(path: string, uid: number | null): TrustedRead {
  const dirProblem = untrustedDir(dirname(path), uid);
  if (dirProblem) return { refused: dirProblem };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (uid === null ? 0 : constants.O_NOFOLLOW | constants.O_NONBLOCK));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { refused: 'missing' };
    return { refused: code === 'ELOOP' ? `${path} is a symlink` : `${path} cannot be read (${code})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { refused: `${path} is not a regular file` };
    if (uid !== null && stat.uid !== uid) return { refused: `${path} belongs to uid ${stat.uid}` };
    if (uid !== null && stat.mode & 0o077) return { refused: `${path} is readable or writable by others (mode ${octal(stat.mode)})` };
    if (stat.size > maxDiscoveryBytes) return { refused: `${path} is larger than ${maxDiscoveryBytes} bytes` };
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return { text: buffer.subarray(0, read).toString('utf8') };
  } finally {
    closeSync(fd);
  }
}

/**
 * Why the bridge may not hand its token to the Unix socket instance.json names, or null. The
 * socket must be this uid's, in a directory of this uid that nobody else can write: then no
 * other user can have bound it or swapped it. A Windows named pipe has a random name per run.
 */
export function untrustedSocket(path: string, uid: number | null, platform: NodeJS.Platform = process.platform): string | null {
  if (uid === null || platform === 'win32') return null;
  if (!isAbsolute(path)) return `${path} is not an absolute path`;
  const dirProblem = untrustedDir(dirname(path), uid);
  if (dirProblem) return dirProblem === 'missing' ? `${dirname(path)} is missing` : dirProblem;
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return `${path} is missing`;
  }
  if (!stat.isSocket()) return `${path} is not a socket`;
  if (stat.uid !== uid) return `${path} belongs to uid ${stat.uid}`;
  return null;
}

/** /run/user/<uid> when it is this uid's own 0700 directory (systemd-logind's runtime directory). */
function runUserDir(from: DiscoveryEnv): string | null {
  if (from.uid === null || from.platform === 'win32') return null;
  const dir = join(from.runUserRoot ?? '/run/user', String(from.uid));
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() && stat.uid === from.uid && (stat.mode & 0o777) === 0o700 ? dir : null;
  } catch {
    return null;
  }
}

/** One place the bridge looks: instance.json itself, or the pointer to it. */
export interface DiscoveryPlace {
  path: string;
  kind: 'instance' | 'pointer';
}

/**
 * Where an instance of this user can be, in order. An explicit TANDEM_INSTANCE (set in Tandem's
 * own terminals) or TANDEM_HOME (an isolated instance) is the only place looked at.
 */
export function discoveryPlaces(from: DiscoveryEnv): DiscoveryPlace[] {
  const { env } = from;
  if (env.TANDEM_INSTANCE) return [{ path: env.TANDEM_INSTANCE, kind: 'instance' }];
  const state = localStateDir({ platform: from.platform, env, home: from.home });
  if (env.TANDEM_HOME) return [{ path: join(state, 'instance.json'), kind: 'instance' }];
  const places: DiscoveryPlace[] = [];
  const add = (place: DiscoveryPlace) => {
    if (!places.some((known) => known.path === place.path)) places.push(place);
  };
  if (env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR)) add({ path: join(env.XDG_RUNTIME_DIR, 'tandem', 'instance.json'), kind: 'instance' });
  const runUser = runUserDir(from);
  if (runUser) add({ path: join(runUser, 'tandem', 'instance.json'), kind: 'instance' });
  add({ path: join(state, 'instance.json'), kind: 'instance' });
  add({ path: join(state, pointerName), kind: 'pointer' });
  return places;
}

/** The instance.json a pointer names, when the pointer is trusted and well formed. */
function followPointer(text: string): string | null {
  try {
    const target = (JSON.parse(text) as { instance?: unknown }).instance;
    return typeof target === 'string' && isAbsolute(target) && basename(target) === 'instance.json' ? target : null;
  } catch {
    return null;
  }
}

export interface FoundInstance<T> {
  info: T;
  path: string;
}

/** Where the search looked, what it would not trust, and files left by a Tandem that is gone. */
export interface DiscoverySearch {
  looked: string[];
  refused: string[];
  stale: string[];
}

/**
 * The first live instance in discoveryPlaces(), or where the search looked and what it refused
 * (for the `not_running` message). `parse` turns trusted text into an instance, or null;
 * `live` says whether the process it names is still that Tandem (instance.ts isRunOf: this
 * user's process, started when the host did).
 */
export function findInstance<T extends { pid: number }>(
  from: DiscoveryEnv,
  parse: (text: string) => T | null,
  live: (info: T) => boolean,
): FoundInstance<T> | DiscoverySearch {
  const looked: string[] = [];
  const refused: string[] = [];
  const stale: string[] = [];
  const tryInstance = (path: string): FoundInstance<T> | null => {
    const read = readTrusted(path, from.uid);
    if ('refused' in read) {
      if (read.refused !== 'missing') refused.push(read.refused);
      return null;
    }
    const info = parse(read.text);
    if (!info) return null;
    if (live(info)) return { info, path };
    stale.push(`${path} (pid ${info.pid})`);
    return null;
  };
  for (const place of discoveryPlaces(from)) {
    looked.push(place.path);
    if (place.kind === 'instance') {
      const found = tryInstance(place.path);
      if (found) return found;
      continue;
    }
    const read = readTrusted(place.path, from.uid);
    if ('refused' in read) {
      if (read.refused !== 'missing') refused.push(read.refused);
      continue;
    }
    const target = followPointer(read.text);
    if (!target) {
      refused.push(`${place.path} does not name an instance.json`);
      continue;
    }
    if (looked.includes(target)) continue;
    looked.push(target);
    const found = tryInstance(target);
    if (found) return found;
  }
  return { looked, refused, stale };
}

/**
 * The host's side: where its pointer goes (the state directory), or null when instance.json is
 * in the state directory already (no runtime directory, or TANDEM_HOME) or on Windows.
 */
export function pointerPathFor(env: NodeJS.ProcessEnv, discoveryDir: string, platform: NodeJS.Platform = process.platform): string | null {
  if (platform === 'win32' || env.TANDEM_HOME) return null;
  const state = localStateDir({ platform, env, home: env.HOME || homedir() });
  return state === discoveryDir ? null : join(state, pointerName);
}

/**
 * Writes the pointer atomically, 0600 in a 0700 state directory. A pointer that cannot be
 * written (a read-only home) costs only the small-environment bridges, so it never stops the host.
 */
export function writePointer(pointer: string, instancePath: string): boolean {
  const tmp = `${pointer}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(pointer), { recursive: true, mode: 0o700 });
    rmSync(tmp, { force: true });
    writeFileSync(tmp, `${JSON.stringify({ instance: instancePath })}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, pointer);
    return true;
  } catch (error) {
    rmSync(tmp, { force: true });
    process.stderr.write(
      `tandem: could not write ${pointer} (${(error as Error).message}); agents started without XDG_RUNTIME_DIR may not find this instance.\n`,
    );
    return false;
  }
}

/** Removes the pointer if it still names this instance (another host may have replaced it). */
export function removePointer(pointer: string, instancePath: string, uid: number | null = process.getuid?.() ?? null): void {
  const read = readTrusted(pointer, uid);
  if ('text' in read && followPointer(read.text) === instancePath) rmSync(pointer, { force: true });
}

/** The `not_running` message: where the bridge looked, and what it would not trust. */
export function notRunningMessage(search: { looked: string[]; refused: string[]; stale?: string[] }): string {
  const bounded = (items: string[]) => items.slice(0, 6).join(', ') + (items.length > 6 ? ', …' : '');
  const refused = search.refused.length
    ? ` Not trusted (a discovery file must be yours, mode 0600, in a directory only you can write): ${bounded(search.refused)}.`
    : '';
  const stale = search.stale?.length
    ? ` Stale, left by a Tandem that is gone (its pid is no process of yours that started when that Tandem did): ${bounded(search.stale)}.`
    : '';
  return `Tandem is not running (no live instance.json in ${bounded(search.looked)}).${refused}${stale} Start the Tandem app (or \`tandem serve\`) and call the tool again; a Tandem started with its own TANDEM_HOME needs the same TANDEM_HOME here.`;
}
