/**
 * The mounts a confined terminal must keep for its whole life (issue 24). bubblewrap pins the
 * repository's configuration read-only and hides sockets and secrets by mounting over them, but
 * a mount sits on one file: when that file is renamed over or removed on the host, the kernel
 * detaches the mount in every other mount namespace (Linux 3.18, "lazily remove mounts on
 * unlinked files"). The person's own `git config`, `git remote add` or a checkout writes
 * `.git/config` that way (config.lock renamed over it), and a restarted service re-creates its
 * socket: from then on the agent could write the config the person's next unconfined `git
 * status` obeys (`core.fsmonitor` runs a program), or reach the socket.
 *
 * The guard watches the folders of those paths (inotify through fs.watch, and a slow look at the
 * sandbox's mount table as a backstop for events the kernel dropped) and, the moment a mount is
 * missing, puts it back from inside the sandbox's mount namespace (resources/sandbox/remount.pl,
 * started and entered with the guard, kept until the terminal closes).
 * What cannot be put back (the path is now a symbolic link, a protected file is gone, the helper
 * cannot enter) ends the confinement: a confined terminal never runs on without a protection it
 * was opened with.
 *
 * Left: the moment between the host's rename and the mount being back (an inotify event, a pipe
 * round trip to the kept helper and two mount calls: 12 to 19 ms measured on the 2-core test
 * machine under load) is not closed; an agent appending to the file in a loop got 60 to 380
 * appends into it (with a perl start per look it was 100 ms and more).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, constants, type FSWatcher, lstatSync, openSync, readFileSync, realpathSync, statSync, watch, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { plainLine } from '../../shared/control-chars.js';
import { resourcesDir } from '../resources.js';

/** How a path is mounted: onto itself read-only, hidden under /dev/null, or under an empty read-only tmpfs. */
export type GuardKind = 'self' | 'null' | 'tmpfs';

export interface GuardedMount {
  /** Where the mount is inside the sandbox. */
  path: string;
  kind: GuardKind;
  /**
   * The host's path of the file under it, where that differs (a hidden path's copy inside the
   * agent's home lies on the read entry's source): its folder is watched. Default: `path`.
   */
  source?: string;
}

export interface MountGuardOptions {
  /** A process inside the sandbox (bubblewrap's init): its mount table is the sandbox's. */
  init: number;
  mounts: readonly GuardedMount[];
  /** The helper's command line before its arguments: `perl remount.pl` by default. */
  helper: readonly string[];
  /** A mount could not be put back: the confinement must end now. */
  onLost(message: string): void;
  /** The backstop's period. */
  pollMs?: number;
  /** Files to protect (read-only onto themselves) once they appear: their folders are watched. */
  adopt?: readonly string[];
}

const defaultPollMs = 5000;
/** Looks at the mount table at most this often on events (another user touching a watched socket in a loop is a flood). */
const minCheckGapMs = 25;
/** Times another user's hidden path is hidden again before it is given up. */
const maxRestoresOfTheirs = 4;
/** Folders watched at most per terminal (each also watched through its parent); past it only the periodic look covers a path. */
const maxWatchedDirs = 128;
/** The helper's start and each of its answers take at most this long (a hang, not a pace). */
const helperTimeoutMs = 10_000;

/** Mount points of the process's namespace, as mountinfo escapes them (`\040` for a space), decoded; null once it is gone. */
function mountPoints(pid: number): Set<string> | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/mountinfo`, 'utf8');
  } catch {
    return null;
  }
  const points = new Set<string>();
  for (const line of text.split('\n')) {
    const field = line.split(' ')[4];
    if (field) points.add(field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))));
  }
  return points;
}

export class MountGuard {
  private opts: MountGuardOptions;
  private readonly watchers: Array<{ close(): void }> = [];
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  private again = false;
  private done = false;
  private helper: Remounter | null = null;
  private scheduled: NodeJS.Timeout | null = null;
  /** How often each path was put back (other users' paths have a budget). */
  private readonly times = new Map<string, number>();
  /** Files not there yet that become guarded when they appear. */
  private adopt: string[];
  private lastCheckAt = 0;
  /** The sandbox's mount namespace (its inode) when the guard started: a reused pid is not the sandbox. */
  private readonly namespace: number | null;

  constructor(opts: MountGuardOptions) {
    // Only what bubblewrap did mount, as the mount table names it (a path through a symbolic
    // link is mounted at its target): a path never in the table would be "restored" forever.
    const points = mountPoints(opts.init) ?? new Set<string>();
    const mounts = opts.mounts.map((m) => ({ ...m, path: realOrSame(m.path) })).filter((m) => points.has(m.path));
    this.opts = { ...opts, mounts };
    this.namespace = namespaceOf(opts.init);
    // Entered now, so that a lost mount waits for no perl start.
    if (mounts.length > 0 && this.namespace !== null) this.helper = new Remounter(opts.helper, opts.init, this.namespace);
    this.adopt = (opts.adopt ?? []).map(realOrSame).filter((path) => !mounts.some((m) => m.path === path));
    const byDir = new Map<string, Set<string>>();
    for (const host of [...this.adopt, ...mounts.map((m) => m.source ?? m.path)]) {
      const names = byDir.get(dirname(host)) ?? new Set<string>();
      names.add(basename(host));
      byDir.set(dirname(host), names);
    }
    for (const [dir, names] of [...byDir].slice(0, maxWatchedDirs)) this.watchDir(dir, names);
    this.timer = setInterval(() => void this.check(), opts.pollMs ?? defaultPollMs);
    this.timer.unref();
  }

  /**
   * Renames and removals in `dir` of the guarded names (a change of contents or times drops no
   * mount), and `dir` itself removed and made again (a service's runtime folder re-created):
   * its parent is watched for its name, and the folder watched anew.
   */
  private watchDir(dir: string, names: Set<string>): void {
    let inner: FSWatcher | null = null;
    const watchInner = () => {
      inner?.close();
      inner = this.watch(dir, (event, name) => event === 'rename' && (name === null || names.has(name)));
    };
    watchInner();
    const parent = this.watch(dirname(dir), (event, name) => {
      if (event !== 'rename' || (name !== null && name !== basename(dir))) return false;
      watchInner();
      return true;
    });
    this.watchers.push({ close: () => (inner?.close(), parent?.close()) });
  }

  /** An fs.watch whose matching events start a look; null where the folder cannot be watched (gone, or no inotify watches left: the periodic look covers it). */
  private watch(dir: string, matches: (event: string, name: string | null) => boolean): FSWatcher | null {
    try {
      const watcher = watch(dir, { persistent: false }, (event, name) => {
        if (matches(event, name === null ? null : name.toString())) this.soon();
      });
      watcher.on('error', () => watcher.close());
      return watcher;
    } catch {
      return null;
    }
  }

  /** A look on an event, at most one per `minCheckGapMs`: events coalesce into the next look. */
  private soon(): void {
    if (this.scheduled || this.done) return;
    const wait = Math.max(0, this.lastCheckAt + minCheckGapMs - Date.now());
    if (wait === 0) return void this.check();
    this.scheduled = setTimeout(() => {
      this.scheduled = null;
      void this.check();
    }, wait);
  }

  /** Looks now; resolves once every missing mount is back, or the loss was reported. */
  check(): Promise<void> {
    if (this.done) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.lastCheckAt = Date.now();
    this.running = this.restore().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.soon();
      }
    });
    return this.running;
  }

  dispose(): void {
    this.done = true;
    this.helper?.close();
    this.helper = null;
    clearInterval(this.timer);
    if (this.scheduled) clearTimeout(this.scheduled);
    for (const watcher of this.watchers.splice(0)) watcher.close();
  }

  /** Guarded mounts not in the sandbox's table now (a hidden path that is gone needs none); null once the sandbox is gone. */
  private missing(): GuardedMount[] | null {
    if (this.namespace === null || namespaceOf(this.opts.init) !== this.namespace) return null;
    // A file that appeared is guarded from now on (the mount table then says it is missing).
    const appeared = this.adopt.filter(exists);
    if (appeared.length > 0) {
      this.adopt = this.adopt.filter((path) => !appeared.includes(path));
      this.opts = { ...this.opts, mounts: [...this.opts.mounts, ...appeared.map((path): GuardedMount => ({ path, kind: 'self' }))] };
    }
    const points = mountPoints(this.opts.init);
    if (!points) return null;
    return this.opts.mounts.filter((m) => !points.has(m.path) && (m.kind === 'self' || exists(m.source ?? m.path)));
  }

  /** No longer guarded: another user's paths, theirs to replace. */
  private giveUp(mounts: readonly GuardedMount[]): void {
    this.opts = { ...this.opts, mounts: this.opts.mounts.filter((m) => !mounts.includes(m)) };
    for (const m of mounts) this.times.delete(m.path);
  }

  private async restore(): Promise<void> {
    const found = this.missing();
    if (!found?.length) return;
    // Another user's hidden path is hidden again a few times, then given up: each time adds a
    // mount, and a folder of theirs swapped in a loop grew the table by thousands (black-box
    // round 2: 82,000 mounts in 4 minutes, each look reading them all).
    const spent = found.filter((m) => m.kind !== 'self' && (this.times.get(m.path) ?? 0) >= maxRestoresOfTheirs && underAnotherUser(m.source ?? m.path));
    if (spent.length > 0) this.giveUp(spent);
    const missing = found.filter((m) => !spent.includes(m));
    if (missing.length === 0) return;
    for (const m of missing) this.times.set(m.path, (this.times.get(m.path) ?? 0) + 1);
    // A helper that died (or never started) gets one fresh start per look.
    if (!this.helper || this.helper.gone) {
      this.helper?.close();
      this.helper = new Remounter(this.opts.helper, this.opts.init, this.namespace ?? 0);
    }
    const answers = await this.helper.restore(missing);
    if (this.done) return;
    const still = this.missing();
    if (still === null) return;
    // A hidden path another user controls (their socket in /var/tmp, a folder of theirs on the
    // way) is theirs to replace with a folder or a link: what is there now is theirs, as a socket
    // they make after the open would be. It is no longer guarded, and the terminal goes on.
    const theirs = still.filter((m) => m.kind !== 'self' && underAnotherUser(m.source ?? m.path));
    if (theirs.length > 0) {
      this.giveUp(theirs);
      still.splice(0, still.length, ...still.filter((m) => !theirs.includes(m)));
    }
    if (still.length === 0) return;
    const why = typeof answers === 'string' ? answers : still.map((m) => `${m.path}: ${answers[missing.indexOf(m)] ?? 'no answer'}`).join('; ');
    this.dispose();
    this.opts.onLost(`${still.map((m) => m.path).join(', ')} could not be protected again after a change on this computer (${why})`);
  }
}

/**
 * The kept helper (resources/sandbox/remount.pl), entered into the sandbox's namespaces once:
 * a mount comes back in a pipe round trip (a perl start took 100 ms and more on a busy machine,
 * and an agent writing in a loop got a thousand writes into that). One request at a time: the
 * guard runs one look at a time.
 */
class Remounter {
  private readonly child: ChildProcess;
  private readonly lines: string[] = [];
  private wake: (() => void) | null = null;
  private exited = false;
  private readonly ready: Promise<string | null>;

  constructor(helper: readonly string[], init: number, namespace: number) {
    const [command, ...args] = helper;
    this.child = spawn(command!, [...args, process.arch, String(init), String(namespace)], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.child.on('error', () => this.end());
    this.child.on('exit', () => this.end());
    this.child.stdin!.on('error', () => {});
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      this.lines.push(line);
      this.poke();
    });
    // "ready", or why not ("enter: ..."); null when it ended first.
    this.ready = this.next(helperTimeoutMs).then((line) => (line === 'ready' ? null : (line ?? 'the helper could not be started (is perl installed?)')));
  }

  get gone(): boolean {
    return this.exited;
  }

  /** One answer per mount, in order, or why the helper could not answer. */
  async restore(mounts: readonly GuardedMount[]): Promise<string[] | string> {
    const notReady = await this.ready;
    if (notReady !== null) return notReady;
    this.child.stdin!.write(mounts.map((m) => `${m.kind} ${Buffer.from(m.path).toString('hex')}\n`).join('') + '\n');
    const answers: string[] = [];
    for (;;) {
      const line = await this.next(helperTimeoutMs);
      if (line === null) {
        this.close();
        return answers.length > 0 ? answers : 'the helper stopped answering';
      }
      if (line === 'done') return answers;
      answers.push(line);
    }
  }

  close(): void {
    this.end();
    this.child.kill('SIGKILL');
  }

  private end(): void {
    this.exited = true;
    this.poke();
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** The next line, or null once the helper ended or `ms` passed without one. */
  private async next(ms: number): Promise<string | null> {
    const deadline = Date.now() + ms;
    while (this.lines.length === 0) {
      if (this.exited || Date.now() >= deadline) return null;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        timer = setTimeout(resolve, deadline - Date.now());
      });
      clearTimeout(timer);
    }
    return this.lines.shift()!;
  }
}

function namespaceOf(pid: number): number | null {
  try {
    return statSync(`/proc/${pid}/ns/mnt`).ino;
  } catch {
    return null;
  }
}

function realOrSame(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Some part of the path, from its end up, belongs to a user who is neither this one nor root. */
function underAnotherUser(path: string): boolean {
  const me = process.getuid?.() ?? 0;
  for (let at = path; ; at = dirname(at)) {
    try {
      const uid = lstatSync(at).uid;
      if (uid !== me && uid !== 0) return true;
    } catch {
      // Gone: its folder decides.
    }
    if (at === dirname(at)) return false;
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Guards a bubblewrap sandbox's mounts: one that cannot be put back kills bubblewrap (the PTY's
 * child), and with it everything inside (`--die-with-parent`). The reason is printed into the
 * terminal first (written to its device, as `write(1)` does), so the person's tab, its
 * transcript and the agent's result show why the shell ended.
 */
export function endOnLostMount(opts: {
  init: number;
  ptyPid: number;
  tty: string | null;
  mounts: readonly GuardedMount[];
  adopt: readonly string[];
}): MountGuard {
  return new MountGuard({
    init: opts.init,
    mounts: opts.mounts,
    adopt: opts.adopt,
    helper: ['perl', join(resourcesDir(), 'sandbox', 'remount.pl')],
    onLost: (message) => {
      // Paths inside the workspace are the agent's to name: no control or bidi character of
      // theirs reaches the person's terminal (or the one running Tandem) as a sequence.
      const said = plainLine(`The confined terminal was ended: ${message}.`);
      console.error(`[tandem] ${said}`);
      if (opts.tty) tell(opts.tty, `\r\n[Tandem] ${said}\r\n`);
      try {
        process.kill(opts.ptyPid, 'SIGKILL');
      } catch {
        // bubblewrap is gone already.
      }
    },
  });
}

/** Writes to a terminal's device without making it this process's controlling terminal, and without waiting on a full one. */
function tell(tty: string, text: string): void {
  try {
    const fd = openSync(tty, constants.O_WRONLY | constants.O_NOCTTY | constants.O_NONBLOCK);
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
  } catch {
    // The terminal is gone or full: stderr and the exit still say it.
  }
}
