/**
 * The bubblewrap command line of a confined terminal (Linux). Pure: the caller resolves the
 * paths and passes the descriptors. Mounts apply in argument order, so the order below is the
 * design: the whole filesystem read-only, a private /dev holding only this terminal, a private
 * /proc and /tmp, then the workspace, then what is hidden, then what stays read-only inside
 * the workspace, then the agent's caches and the shell's rc files.
 *
 * Deliberately absent: `--new-session`. The shell must keep its controlling terminal for job
 * control, Ctrl+C and readiness; the injection risk `--new-session` guards against (TIOCSTI)
 * is closed by the seccomp filter instead.
 */
import { type SandboxSpec, within } from './types.js';

export const bwrapPath = '/usr/bin/bwrap';
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

export function bwrapArgs({ spec, pty, infoFd, seccompFd, unsetEnv, setEnv, command }: BwrapLaunch): string[] {
  const write = spec.mode === 'workspace-write';
  const bind = write ? '--bind' : '--ro-bind';
  const args: string[] = ['--ro-bind', '/', '/', '--dev', '/dev', '--tmpfs', '/dev/pts', '--dev-bind', pty, pty, '--proc', '/proc'];
  args.push(...(write ? ['--bind', spec.tmpDir, '/tmp'] : ['--tmpfs', '/tmp']));
  // Under a private root a path is gone already, unless a bind (the workspace) brings it back.
  const binds = [spec.workspace, ...spec.writable, ...spec.readable];
  const hidden = spec.hidden.filter((entry) => !privateRoots.some((root) => within(entry.path, root)) || binds.some((dir) => within(entry.path, dir)));
  // A hidden directory holding the workspace is hidden first, so the workspace shows through it.
  const holders = hidden.filter((entry) => within(spec.workspace, entry.path));
  const others = hidden.filter((entry) => !within(spec.workspace, entry.path));
  const hide = (entry: { path: string; dir: boolean }) => (entry.dir ? ['--tmpfs', entry.path] : ['--ro-bind', '/dev/null', entry.path]);
  for (const entry of holders) args.push(...hide(entry));
  args.push(bind, spec.workspace, spec.workspace);
  for (const entry of others) args.push(...hide(entry));
  for (const entry of spec.protectedPaths) args.push('--ro-bind', entry.path, entry.path);
  for (const dir of spec.writable) args.push(bind, dir, dir);
  for (const path of spec.readable) args.push('--ro-bind', path, path);
  // Empty directories standing in for hidden ones are not a place to write either.
  for (const entry of hidden) if (entry.dir) args.push('--remount-ro', entry.path);
  if (!write) args.push('--remount-ro', '/tmp');
  args.push('--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!spec.network) args.push('--unshare-net');
  args.push('--die-with-parent', '--info-fd', String(infoFd), '--seccomp', String(seccompFd), '--chdir', spec.workspace);
  for (const name of unsetEnv) args.push('--unsetenv', name);
  for (const [name, value] of Object.entries(setEnv)) args.push('--setenv', name, value);
  args.push('--', ...command);
  return args;
}
