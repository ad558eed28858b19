import { accessSync, constants, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute } from 'node:path';

/**
 * Where a terminal's rc directory is made: a folder in memory where the machine has one, since
 * bash writes its prompt's scratch file there after every command (tandem.bash
 * `__tandem_capture`; on this VM a truncate and write on the ext4 /tmp cost about 140 µs, on
 * tmpfs 23). First XDG_RUNTIME_DIR (the user's own, 0700, in memory on systemd systems), then
 * /dev/shm (Linux; sticky like /tmp, so mkdtemp's 0700 directory is as private there), else the
 * temp folder.
 */
export function rcParent(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && isAbsolute(runtime) && ownPrivateDir(runtime)) return runtime;
  if (platform === 'linux' && stickyWritableDir('/dev/shm')) return '/dev/shm';
  return tmpdir();
}

function ownPrivateDir(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0 && writable(path);
  } catch {
    return false;
  }
}

function stickyWritableDir(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isDirectory() && (st.mode & 0o1000) !== 0 && writable(path);
  } catch {
    return false;
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
