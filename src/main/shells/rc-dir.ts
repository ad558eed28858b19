import { accessSync, constants, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { isAlive } from '../pty/proc.js';

/**
 * Where a terminal's rc directory is made: a folder in memory where the machine has one, since
 * bash writes its prompt's scratch file there after every command (tandem.bash
 * `__tandem_capture`; on this VM a truncate and write on the ext4 /tmp cost about 140 µs, on
 * tmpfs 23). First XDG_RUNTIME_DIR (the user's own, 0700, in memory on systemd systems), then
 * /dev/shm (Linux; root's and sticky like /tmp, so mkdtemp's 0700 directory is as private
 * there), else the temp folder.
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
    return st.isDirectory() && st.uid === 0 && (st.mode & 0o1000) !== 0 && writable(path);
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

const prefix = 'tandem-rc-';
let swept = false;

/**
 * A fresh 0700 rc directory, named after this process (`tandem-rc-PID-XXXXXX`). The first call
 * of a process first removes what ended Tandems of its user left in its parent and in the temp
 * folder: bash keeps its directory while it runs, and an agent terminal's history file lives
 * until the terminal closes, so a Tandem that was killed leaves them behind (in memory, until a
 * reboot).
 */
export function makeRcDir(parent: string = rcParent()): string {
  if (!swept) {
    swept = true;
    sweepRcDirs(parent);
    if (parent !== tmpdir()) sweepRcDirs(tmpdir());
  }
  try {
    return mkdtempSync(join(parent, `${prefix}${process.pid}-`));
  } catch (error) {
    // A memory folder another user filled (or one gone since): the temp folder still serves.
    if (parent === tmpdir()) throw error;
    return mkdtempSync(join(tmpdir(), `${prefix}${process.pid}-`));
  }
}

/**
 * An unconfined agent terminal's own history file, in a 0700 folder of its own beside its rc
 * directory (`tandem-history-PID-ID/history`): zsh and pwsh write it with the umask's mode (0644
 * in a shared /dev/shm or /tmp), and zsh and pwsh remove their rc directory once they have read
 * it, while the shell writes its history until it exits. Named after this process so that the
 * sweep finds it if this process dies first. `makeHistoryDir` makes the folder before the shell
 * starts; `removeHistoryDir` removes it with the file.
 */
export function historyFileFor(rcDir: string, terminalId: string): string {
  return join(dirname(rcDir), `tandem-history-${process.pid}-${terminalId}`, 'history');
}

export function makeHistoryDir(historyFile: string): void {
  mkdirSync(dirname(historyFile), { mode: 0o700 });
}

export function removeHistoryDir(historyFile: string): void {
  rmSync(dirname(historyFile), { recursive: true, force: true });
}

/** What a Tandem process leaves in a parent folder: its rc directories and its agent terminals' history folders. */
const leftover = /^tandem-(?:rc-(\d+)-[A-Za-z0-9]{6}|history-(\d+)-[A-Za-z0-9_-]{1,64})$/;

/**
 * Removes the rc directories and history folders in `parent` of this user whose Tandem process
 * has ended (its pid is no live process of this user). Each must be what this module makes
 * there: a directory of this user's, not a link.
 */
export function sweepRcDirs(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const match = leftover.exec(name);
    if (!match) continue;
    const pid = Number(match[1] ?? match[2]);
    if (pid === process.pid || isAlive(pid)) continue;
    const path = join(parent, name);
    try {
      const st = lstatSync(path);
      if (!st.isDirectory() || st.uid !== process.getuid?.()) continue;
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}
