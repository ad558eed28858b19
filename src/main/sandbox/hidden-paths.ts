/**
 * What a confined terminal must not see, beyond what bubblewrap's own layout already hides
 * (a private /tmp hides the X11 sockets, ssh-agent sockets and tmux servers under /tmp; a
 * private /dev hides every other terminal). Paths that do not exist are skipped when the
 * sandbox is built; the person adds their own through `TANDEM_SANDBOX_HIDE` (colon-separated
 * absolute or `~/` paths).
 */
import { type Dirent, type Stats, lstatSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
import { userInfo } from 'node:os';
import { posix } from 'node:path';
import { credentialPaths } from './sensitive-paths.js';
import { ownShortSocketDirs } from '../launch/socket-path.js';
import { defaultStateDirs, knownStateDirs } from '../state-dir.js';

/**
 * Credential locations under the home directory: the one documented list the approval judge
 * also refuses to read (./sensitive-paths.ts). An entry ending in `*` names
 * the bare name and every entry of the home directory with that prefix (`.claude*`: `.claude`,
 * `.claude.json`).
 */
export function homeCredentialPaths(home: string): string[] {
  let names: string[] | null = null;
  return credentialPaths.flatMap((entry) => {
    if (!entry.endsWith('*')) return [posix.join(home, entry)];
    names ??= listHome(home);
    const prefix = entry.slice(0, -1);
    return [prefix, ...names.filter((name) => name.startsWith(prefix))].map((name) => posix.join(home, name));
  });
}

function listHome(home: string): string[] {
  try {
    return readdirSync(home);
  } catch {
    return [];
  }
}

/**
 * Sockets and runtime directories that grant more than the sandbox: the session bus (through
 * which `systemd-run --user` escapes), the system bus and systemd's private socket (as root,
 * `systemd-run` would start anything), container engines, Wayland and X11.
 */
export const systemSocketPaths = [
  '/run/user',
  '/run/dbus',
  '/var/run/dbus',
  '/run/systemd/private',
  '/run/systemd/userdb',
  '/run/docker.sock',
  '/var/run/docker.sock',
  '/run/containerd',
  '/run/podman',
  '/run/snapd.socket',
  '/run/snapd-snap.socket',
  '/tmp/.X11-unix',
  '/tmp/.ICE-unix',
] as const;

export interface HiddenPathInput {
  home: string;
  env: NodeJS.ProcessEnv;
  /** Tandem's state directory (tokens, settings, agents' caches). */
  stateDir: string;
  /** Where instance.json is published. */
  discoveryDir: string;
}

/** Every path to hide, absolute and deduplicated, before checking which exist. */
export function hiddenPathCandidates({ home, env, stateDir, discoveryDir }: HiddenPathInput): string[] {
  const fromHome = (path: string) => (path === '~' ? home : path.startsWith('~/') ? posix.join(home, path.slice(2)) : path);
  // The bridge channel's short directory, where a long discovery path moved it (macOS has no private /tmp).
  const own = [
    stateDir,
    discoveryDir,
    ...ownShortSocketDirs(discoveryDir),
    ...defaultStateDirs(home, process.platform === 'darwin' ? 'darwin' : 'linux', env),
    ...knownStateDirs(home, process.platform === 'darwin' ? 'darwin' : 'linux', env),
  ];
  const runtime = [
    env.XDG_RUNTIME_DIR,
    env.SSH_AUTH_SOCK,
    env.WAYLAND_DISPLAY && env.XDG_RUNTIME_DIR ? posix.join(env.XDG_RUNTIME_DIR, env.WAYLAND_DISPLAY) : undefined,
  ];
  const dockerHost = env.DOCKER_HOST?.startsWith('unix://') ? env.DOCKER_HOST.slice('unix://'.length) : undefined;
  const extra = (env.TANDEM_SANDBOX_HIDE ?? '').split(':').map((entry) => fromHome(entry.trim()));
  const all = [...own, ...homeCredentialPaths(home), posix.join(home, '.docker/run'), ...systemSocketPaths, ...runtime, dockerHost, ...extra];
  return [...new Set(all.filter((path): path is string => typeof path === 'string' && posix.isAbsolute(path)).map((path) => posix.normalize(path)))];
}

/**
 * The account's home in the password database where HOME names another folder (a scratch HOME,
 * `sudo -E`, a service's environment): its credentials and Tandem's state there are hidden as
 * HOME's are (black-box round 13 read the account's home through a confined terminal). The rest
 * of it stays readable: toolchains installed there (pwsh in ~/.dotnet/tools) are on PATH.
 */
export function accountHomePaths(personHome: string, accountHome: string = passwdHome()): string[] {
  if (!posix.isAbsolute(accountHome)) return [];
  let real: string;
  try {
    real = realpathSync(accountHome);
  } catch {
    return [];
  }
  if (real === '/' || real === personHome) return [];
  const os = process.platform === 'darwin' ? 'darwin' : 'linux';
  return [...homeCredentialPaths(real), ...defaultStateDirs(real, os, {}), ...knownStateDirs(real, os, {})];
}

function passwdHome(): string {
  try {
    return userInfo().homedir;
  } catch {
    return '';
  }
}

/** At most this many bound sockets are taken from /proc/net/unix (each is one mount of /dev/null). */
const maxBoundSockets = 2_000;

/**
 * Every path socket the kernel lists as bound (/proc/net/unix), wherever it is: a service's
 * socket under /srv, /opt, /var/lib (LXD's, root-equivalent) or any other directory, which a
 * scan of the usual roots does not reach. The path is the one given at bind time: a socket
 * bound by a relative path, moved, or reached through a hard link is not found this way (README,
 * Known limitations). Only paths that are sockets now are returned; bounded.
 */
export function boundSockets(table = '/proc/net/unix'): string[] {
  let text: string;
  try {
    text = readFileSync(table, 'utf8');
  } catch {
    return [];
  }
  const found = new Set<string>();
  for (const line of text.split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path: the path is the rest after seven fields.
    const path = /^\s*\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\/.*)$/.exec(line)?.[1];
    if (!path || found.has(path)) continue;
    if (!lstatOrNull(path)?.isSocket() || !searchable(path)) continue;
    found.add(path);
    if (found.size >= maxBoundSockets) break;
  }
  return [...found];
}

/**
 * Whether this process can pass through every directory above `path` (the confined shell runs as
 * the same user with less): a socket behind another user's private directory is out of its
 * reach already, and bubblewrap could not mount over it (the open would fail for it).
 */
function searchable(path: string): boolean {
  const uid = process.getuid?.() ?? -1;
  const groups = new Set(process.getgroups?.() ?? []);
  for (let dir = posix.dirname(path); ; dir = posix.dirname(dir)) {
    const st = lstatOrNull(dir);
    if (!st) return false;
    const mode = st.mode;
    const ok = st.uid === uid ? (mode & 0o100) !== 0 : groups.has(st.gid) ? (mode & 0o010) !== 0 : (mode & 0o001) !== 0;
    if (!ok) return false;
    if (dir === '/') return true;
  }
}

/** lstat, or null where the entry is gone or out of this user's reach (EACCES: another user's socket in /proc/net/unix). */
function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/** Where the machine's path sockets live, outside the person's home (hidden) and /tmp (private). */
export const socketRoots: readonly string[] = ['/run', '/var/run', '/var/tmp', '/dev/shm'];
const socketScanDepth = 6;
const socketScanEntries = 20_000;

/**
 * Every path socket under `roots` (the directory entries' own types: nothing is stat'ed, no
 * symlink followed), skipping directories in `skip` (hidden whole already). Bounded in depth
 * and in entries read: a socket deeper or further is not found, and stays reachable.
 */
export function scanSockets(roots: readonly string[] = socketRoots, skip: readonly string[] = systemSocketPaths): string[] {
  const found: string[] = [];
  let budget = socketScanEntries;
  const visit = (dir: string, depth: number) => {
    if (budget <= 0 || skip.includes(dir)) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    budget -= entries.length;
    for (const entry of entries) {
      const path = posix.join(dir, entry.name);
      if (entry.isSocket()) found.push(path);
      else if (entry.isDirectory() && depth < socketScanDepth) visit(path, depth + 1);
    }
  };
  const real = new Set<string>();
  for (const root of roots) {
    let at: string;
    try {
      at = realpathSync(root);
    } catch {
      continue;
    }
    // /var/run is usually /run.
    if (real.has(at)) continue;
    real.add(at);
    visit(at, 1);
  }
  return found;
}
