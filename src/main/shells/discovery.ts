import { realpathSync } from 'node:fs';
import { userInfo } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { bashLegacyDialect } from './bash.js';
import { compareVersions, readShellVersions, shellVersion, trustedExecutable, type BashVersion } from './bash-version.js';
import { isWslLauncher } from './git-bash.js';
import { isExecutableFile, resolveShell, shellName, which, type ResolvedShell } from './resolve.js';
import { findWindowsPowerShell } from './windows-powershell.js';

/** Shells offered besides the default, in this order, when found on PATH. */
export const posixCandidates = ['zsh', 'bash', 'sh', 'fish', 'pwsh'] as const;
/** `bash` is Git Bash (git-bash.ts); `wsl` is offered without integration. */
export const windowsCandidates = ['pwsh', 'powershell', 'bash', 'cmd', 'wsl'] as const;
/** Shells that may be installed several times (the system's, Homebrew's, MacPorts'): every one is listed, newest first. */
export const versionedShells = ['bash', 'zsh'] as const;

/**
 * Where macOS keeps bash and zsh besides PATH: an app started from Finder gets launchd's PATH
 * (/usr/bin:/bin:/usr/sbin:/sbin), without Homebrew (docs.brew.sh/Installation: /opt/homebrew
 * on Apple silicon, /usr/local on Intel) or MacPorts (guide.macports.org: /opt/local). /bin
 * holds the system's own.
 */
export const macSearchDirs = ['/opt/homebrew/bin', '/usr/local/bin', '/opt/local/bin', '/bin'] as const;

/** A shell as discovery lists it; `label` says which is which when one name has several binaries. */
export interface DiscoveredShell extends ResolvedShell {
  label?: string;
}

export interface ShellDiscovery {
  defaultShell: DiscoveredShell | null;
  shells: DiscoveredShell[];
  /** Names found as several binaries, each with the one a bare name means (the newest bash ≥ 4.4). */
  preferred: ReadonlyMap<string, DiscoveredShell>;
}

/** Where discovery looks beyond PATH's first match, and which folders are the system's. */
export interface ShellLayout {
  searchDirs: readonly string[];
  systemDirs: readonly string[];
}

/**
 * macOS's places (above); none elsewhere, so Linux lists what PATH gives. TANDEM_SHELL_SEARCH_DIRS
 * (a PATH-style list), when set, replaces them: the browser tests show two bash binaries on Linux.
 */
export function shellLayout(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): ShellLayout {
  const injected = env.TANDEM_SHELL_SEARCH_DIRS;
  const searchDirs =
    platform === 'win32'
      ? []
      : injected !== undefined
        ? injected.split(delimiter).filter((dir) => isAbsolute(dir))
        : platform === 'darwin'
          ? [...macSearchDirs]
          : [];
  return { searchDirs, systemDirs: ['/bin', '/usr/bin'] };
}

/** The person's default shell: $SHELL (or the account's shell), then /bin/sh; pwsh, powershell, cmd on Windows. */
function defaultShellPath(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | null {
  if (platform === 'win32') {
    for (const name of ['pwsh', 'powershell', 'cmd']) {
      const found = which(name, env.PATH ?? env.Path ?? '') ?? (name === 'powershell' ? findWindowsPowerShell(env) : null);
      if (found) return found;
    }
    return env.COMSPEC ?? null;
  }
  let account: string | undefined;
  try {
    account = userInfo().shell ?? undefined;
  } catch {
    account = undefined;
  }
  return env.SHELL || account || '/bin/sh';
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Every binary of a versioned shell: the default (when it is one), PATH's first, then each
 * search folder's, once per real file (/usr/bin/bash and /bin/bash are one shell), each only
 * where nobody but root or this user can write it (`trustedExecutable`). Only file checks: no
 * binary runs here.
 */
function versionedPaths(name: string, env: NodeJS.ProcessEnv, defaultPath: string | null, layout: ShellLayout): string[] {
  const paths: string[] = [];
  const seen = new Set<string>();
  const add = (path: string | null) => {
    // Not even run for its version: a `bash` another account could have put there (bash-version.ts).
    if (!path || seen.has(realPath(path)) || !trustedExecutable(path)) return;
    seen.add(realPath(path));
    paths.push(path);
  };
  if (defaultPath && isAbsolute(defaultPath) && shellName(defaultPath) === name && isExecutableFile(defaultPath)) add(defaultPath);
  add(which(name, env.PATH ?? ''));
  for (const dir of layout.searchDirs) {
    const path = join(dir, name);
    if (isExecutableFile(path)) add(path);
  }
  return paths;
}

/**
 * Where a binary comes from, by its real path: `Homebrew` (its Cellar), `MacPorts`, `Nix`,
 * `system`; null for another folder, which the menu shows beside the label anyway.
 */
export function shellSource(path: string, real: string, systemDirs: readonly string[]): string | null {
  if (real.includes('/Cellar/') || [path, real].some((p) => p.startsWith('/opt/homebrew/') || p.startsWith('/home/linuxbrew/.linuxbrew/'))) return 'Homebrew';
  if ([path, real].some((p) => p.startsWith('/opt/local/'))) return 'MacPorts';
  if (real.startsWith('/nix/')) return 'Nix';
  return systemDirs.includes(dirname(path)) ? 'system' : null;
}

interface Ranked {
  shell: ResolvedShell;
  version: BashVersion | null;
  order: number;
}

/** A bash below 4.4 gets the legacy integration: it ranks after every bash with the full one. */
const limited = (shell: ResolvedShell) => shell.dialect === bashLegacyDialect;

/** Newest with the full integration first; a version that could not be read after the known ones; then search order. */
function rank(a: Ranked, b: Ranked): number {
  return (
    Number(limited(a.shell)) - Number(limited(b.shell)) ||
    (a.version && b.version ? compareVersions(a.version, b.version) : Number(!a.version) - Number(!b.version)) ||
    a.order - b.order
  );
}

function label(entry: Ranked, layout: ShellLayout): string {
  const version = entry.version ? ` ${entry.version.major}.${entry.version.minor}` : '';
  const notes = [shellSource(entry.shell.path, realPath(entry.shell.path), layout.systemDirs), limited(entry.shell) ? 'limited' : null].filter(
    (note) => note !== null,
  );
  return `${entry.shell.name}${version}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
}

/**
 * The binaries of one versioned shell, best first, labelled when there are several or when the
 * only one is a bash with the limited integration (macOS's /bin/bash 3.2 alone).
 */
function versionedGroup(paths: string[], pathEnv: string, layout: ShellLayout): DiscoveredShell[] {
  const ranked: Ranked[] = [];
  for (const [order, path] of paths.entries()) {
    try {
      ranked.push({ shell: resolveShell(path, pathEnv), version: null, order });
    } catch {
      // Gone between the check and now: not offered.
    }
  }
  if (ranked.length > 1) for (const entry of ranked) entry.version = shellVersion(entry.shell.path);
  else if (ranked[0] && limited(ranked[0].shell)) ranked[0].version = shellVersion(ranked[0].shell.path);
  ranked.sort(rank);
  const labelled = ranked.length > 1 || (ranked[0] !== undefined && limited(ranked[0].shell));
  return ranked.map((entry) => (labelled ? { ...entry.shell, label: label(entry, layout) } : entry.shell));
}

/**
 * The default shell first, then each candidate found on PATH, listed once per executable name
 * (ignoring case and `.exe`), earliest first. bash and zsh are listed once per binary, PATH's
 * and the layout's search folders', newest first and labelled; a default bash below 4.4 gives
 * way to the newest bash with the full integration.
 */
export function discoverShells(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  layout: ShellLayout = shellLayout(env, platform),
): ShellDiscovery {
  const pathEnv = env.PATH ?? env.Path ?? '';
  const tryResolve = (nameOrPath: string | null): DiscoveredShell | null => {
    if (!nameOrPath) return null;
    try {
      return resolveShell(nameOrPath, pathEnv);
    } catch {
      return null;
    }
  };
  const defaultPath = defaultShellPath(env, platform);
  const groups = new Map<string, DiscoveredShell[]>();
  if (platform !== 'win32') {
    for (const name of versionedShells) {
      const group = versionedGroup(versionedPaths(name, env, defaultPath, layout), pathEnv, layout);
      if (group.length > 0) groups.set(name, group);
    }
  }
  let defaultShell = tryResolve(defaultPath);
  if (defaultShell) {
    const group = groups.get(defaultShell.name);
    const same = group?.find((shell) => realPath(shell.path) === realPath(defaultShell!.path));
    // The person's shell keeps its place unless it is a bash that would get the limited integration.
    defaultShell = same && limited(same) && group![0] && !limited(group![0]) ? group![0] : (same ?? defaultShell);
  }

  const shells: DiscoveredShell[] = [];
  const add = (shell: DiscoveredShell | null, offered = false) => {
    // WSL's bash.exe is not bash for Tandem: it is offered as `wsl`, without integration.
    if (!shell || (shell.name === 'bash' && isWslLauncher(shell.path))) return;
    // The person's own shell stays; others are offered only from folders nobody else can write.
    if (!offered && !trustedExecutable(shell.path)) return;
    // Once per name, except bash and zsh: once per real file (where /bin/sh is bash, sh stays listed).
    const listed = shells.filter((other) => other.name === shell.name);
    if (groups.has(shell.name) ? listed.some((other) => realPath(other.path) === realPath(shell.path)) : listed.length > 0) return;
    shells.push(shell);
  };
  const addName = (name: string) => {
    const group = groups.get(name);
    if (group) group.forEach((shell) => add(shell));
    else if (!shells.some((listed) => listed.name === shellName(name))) add(tryResolve(name));
  };
  add(defaultShell, true);
  if (defaultShell) addName(defaultShell.name);
  for (const name of platform === 'win32' ? windowsCandidates : posixCandidates) addName(name);
  const preferred = new Map([...groups].filter(([, group]) => group.length > 1).map(([name, group]) => [name, group[0]!] as const));
  return { defaultShell, shells, preferred };
}

/**
 * Runs each bash and zsh binary discovery would list for its version, in the background: the
 * host calls it at start so that listing shells (the new-terminal menu) runs no process later.
 */
export async function readShellVersionsAhead(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  layout: ShellLayout = shellLayout(env, platform),
): Promise<void> {
  if (platform === 'win32') return;
  const defaultPath = defaultShellPath(env, platform);
  // What discovery reads: every binary of a name found more than once, and bash (its dialect depends on it).
  const paths = versionedShells.map((name) => versionedPaths(name, env, defaultPath, layout));
  await readShellVersions(paths.flatMap((group, index) => (group.length > 1 || versionedShells[index] === 'bash' ? group : [])));
}
