/**
 * The bubblewrap command line of a confined terminal (Linux). Pure: the caller resolves the
 * paths and passes the descriptors. Mounts apply in argument order, so the order below is the
 * design: the whole filesystem read-only, a private /dev holding only this terminal, a private
 * /proc and /tmp, the person's home emptied and the workspace (in the order their nesting
 * needs), the read list of the person's home, then what is hidden, the agent's own home (inside
 * Tandem's hidden state), then what stays read-only inside the workspace, then the agent's
 * caches and the shell's rc files.
 *
 * Deliberately absent: `--new-session`. The shell must keep its controlling terminal for job
 * control, Ctrl+C and readiness; the injection risk `--new-session` guards against (TIOCSTI)
 * is closed by the seccomp filter instead.
 */
import { spawnSync } from 'node:child_process';
import type { GuardedMount } from './mount-guard.js';
import { type HiddenPath, inAgentHome, type SandboxSpec, within } from './types.js';

export const bwrapPath = '/usr/bin/bwrap';

let bindFdSupport: boolean | undefined;

/** bubblewrap binds an open descriptor (`--bind-fd`, 0.7 and later): asked once. */
export function bwrapBindsFds(): boolean {
  bindFdSupport ??= /--bind-fd/.test(spawnSync(bwrapPath, ['--help'], { encoding: 'utf8', timeout: 5000 }).stdout ?? '');
  return bindFdSupport;
}
/** Runs the launcher that starts bubblewrap (src/main/sandbox/launch.ts). */
export const launcherShell = '/bin/bash';

export interface BwrapLaunch {
  spec: SandboxSpec;
  /** The terminal's slave device (`/dev/pts/N`), bound into the private /dev. */
  pty: string;
  /** Descriptor bubblewrap writes `{"child-pid": N}` to (the sandbox's init, as the host sees it). */
  infoFd: number;
  /** Descriptor bubblewrap reads the seccomp program from. */
  seccompFd: number;
  /** Variables to remove: sockets and displays the sandbox hides. */
  unsetEnv: readonly string[];
  /** Variables to set: TMPDIR and the per-agent caches. */
  setEnv: Readonly<Record<string, string>>;
  command: readonly string[];
}

/** Paths bubblewrap makes private: what lies below them is not there inside. */
const privateRoots = ['/tmp', '/dev', '/proc'];

/**
 * The hidden paths that need a mount: under a private root (and the person's home, replaced by
 * an empty directory) a path is gone already, unless a bind (the workspace, a read entry) brings it back.
 */
function mountedHidden(spec: SandboxSpec): HiddenPath[] {
  const home = spec.home;
  const roots = home ? [...privateRoots, home.path] : privateRoots;
  const binds = [spec.workspace, ...spec.writable, ...spec.readable, ...(home?.read.filter((entry) => entry.dir).map((entry) => entry.dest) ?? [])];
  return spec.hidden.filter((entry) => !roots.some((root) => within(entry.path, root)) || binds.some((dir) => within(entry.path, dir)));
}

/**
 * The mounts over paths the host can replace, which the sandbox's mount guard keeps
 * (mount-guard.ts): the repository's read-only files and folders, and the hidden paths, also
 * where the agent's home shows a read entry holding one (the file under that mount is the read
 * entry's source's: a rename there drops both).
 */
export function guardedMounts(spec: SandboxSpec): GuardedMount[] {
  const home = spec.home;
  const hidden = mountedHidden(spec);
  const kind = (entry: HiddenPath) => (entry.dir ? 'tmpfs' : 'null');
  const copies = home
    ? hidden.flatMap((entry): GuardedMount[] => {
        const read = home.read.find((r) => r.dir && within(entry.path, r.dest));
        if (!read || within(spec.workspace, entry.path) || within(home.path, entry.path)) return [];
        return [{ path: inAgentHome(home, entry.path), kind: kind(entry), source: read.source + entry.path.slice(read.dest.length) }];
      })
    : [];
  return [
    ...hidden.map((entry): GuardedMount => ({ path: entry.path, kind: kind(entry) })),
    ...copies,
    ...spec.protectedPaths.map((entry): GuardedMount => ({ path: entry.path, kind: 'self' })),
  ];
}

/**
 * Files git starts to read once the person turns them on after the open, which the guard makes
 * read-only when they appear: each git directory's `config.worktree` (`extensions.worktreeConfig`,
 * which `git sparse-checkout` sets), where it was not there to protect at the open.
 */
export function adoptedFiles(spec: SandboxSpec): string[] {
  const protectedNow = new Set(spec.protectedPaths.map((entry) => entry.path));
  return (spec.gitAnchors ?? [])
    .filter((entry) => entry.dir)
    .map((entry) => `${entry.path}/config.worktree`)
    .filter((path) => !protectedNow.has(path));
}

export function bwrapArgs({ spec, pty, infoFd, seccompFd, unsetEnv, setEnv, command }: BwrapLaunch): string[] {
  const write = spec.mode === 'workspace-write';
  const bind = write ? '--bind' : '--ro-bind';
  const home = spec.home;
  const args: string[] = ['--ro-bind', '/', '/', '--dev', '/dev', '--tmpfs', '/dev/pts', '--dev-bind', pty, pty, '--proc', '/proc'];
  args.push(...(write ? ['--bind', spec.tmpDir, '/tmp'] : ['--tmpfs', '/tmp']));
  const hidden = mountedHidden(spec);
  // A hidden directory holding the workspace (or the home) is hidden first, so what is mounted there shows through it.
  const holds = (entry: { path: string }) => within(spec.workspace, entry.path) || (home !== undefined && within(home.path, entry.path));
  const holders = hidden.filter(holds);
  const others = hidden.filter((entry) => !holds(entry));
  const hide = (entry: { path: string; dir: boolean }) => (entry.dir ? ['--tmpfs', entry.path] : ['--ro-bind', '/dev/null', entry.path]);
  for (const entry of holders) args.push(...hide(entry));
  // The person's home empties before the workspace inside it, after a workspace holding it.
  const homeFirst = home !== undefined && !within(home.path, spec.workspace);
  if (home && homeFirst) args.push('--tmpfs', home.path);
  if (spec.workspaceFd !== undefined) args.push(write ? '--bind-fd' : '--ro-bind-fd', String(spec.workspaceFd), spec.workspace);
  else args.push(bind, spec.workspace, spec.workspace);
  if (home && !homeFirst) args.push('--tmpfs', home.path);
  for (const entry of home?.read ?? []) args.push('--ro-bind', entry.source, entry.dest);
  for (const entry of home?.writable ?? []) args.push(bind, entry.source, entry.dest);
  for (const entry of others) args.push(...hide(entry));
  if (home) {
    // After Tandem's state is hidden: the agent's home lives in it.
    args.push(bind, home.agentHome, home.agentHome);
    for (const entry of home.read) args.push('--ro-bind', entry.source, inAgentHome(home, entry.dest));
    for (const entry of home.writable) args.push(bind, entry.source, inAgentHome(home, entry.dest));
    // What is hidden inside a read entry stays hidden where the agent's home shows it too.
    for (const entry of others)
      if (home.read.some((r) => r.dir && within(entry.path, r.dest))) args.push(...hide({ ...entry, path: inAgentHome(home, entry.path) }));
  }
  // A mount point cannot be renamed or removed: the repository's `.git` stays where git looks.
  // By descriptor where bubblewrap can (`inWorkspaceFds`): the agent can write around these paths.
  const fds = spec.inWorkspaceFds;
  const inWorkspace = (flag: '--bind' | '--ro-bind', path: string, index: number) =>
    fds?.[index] !== undefined ? [`${flag}-fd`, String(fds[index]), path] : [flag, path, path];
  const ancestors = spec.gitAncestors ?? [];
  const anchors = spec.gitAnchors ?? [];
  const depth = (path: string) => path.split('/').length;
  // Folders and anchors onto themselves, outermost first: a bind must not cover one made inside it.
  [...ancestors.map((entry, i) => ({ entry, i })), ...anchors.map((entry, i) => ({ entry, i: ancestors.length + i }))]
    .sort((a, b) => depth(a.entry.path) - depth(b.entry.path))
    .forEach(({ entry, i }) => args.push(...inWorkspace(bind, entry.path, i)));
  const first = ancestors.length + anchors.length;
  spec.protectedPaths.forEach((entry, i) => args.push(...inWorkspace('--ro-bind', entry.path, first + i)));
  for (const dir of spec.writable) args.push(bind, dir, dir);
  for (const path of spec.readable) args.push('--ro-bind', path, path);
  // Empty directories standing in for hidden ones are not a place to write either.
  for (const entry of hidden) if (entry.dir) args.push('--remount-ro', entry.path);
  if (home) {
    args.push('--remount-ro', home.path);
    for (const entry of others)
      if (entry.dir && home.read.some((r) => r.dir && within(entry.path, r.dest))) args.push('--remount-ro', inAgentHome(home, entry.path));
  }
  if (!write) args.push('--remount-ro', '/tmp');
  args.push('--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  // Always its own network namespace: the machine's loopback services and abstract sockets
  // are out of reach with the network on too; "on" is the proxy, whose forwarder listens on this
  // namespace's loopback from outside (forwarder.ts).
  args.push('--unshare-net');
  args.push('--die-with-parent', '--info-fd', String(infoFd), '--seccomp', String(seccompFd), '--chdir', spec.workspace);
  for (const name of unsetEnv) args.push('--unsetenv', name);
  for (const [name, value] of Object.entries(setEnv)) args.push('--setenv', name, value);
  args.push('--', ...command);
  return args;
}
