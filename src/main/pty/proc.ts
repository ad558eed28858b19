/**
 * Linux /proc inspection for the foreground job of a terminal. Synchronous on purpose: the
 * files are tiny and generated on read, so sync reads beat the promise overhead on a probe
 * that runs every few tens of ms. Without /proc (macOS) everything returns null: unknown,
 * never "waiting".
 */
import fs from 'node:fs';
import { classifySyscall } from './syscalls';

export interface ProcStat {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  tpgid: number;
}

export interface ThreadSample {
  pid: number;
  tid: number;
  state: string;
  kind: 'read' | 'poll' | 'running' | 'other' | 'unknown';
  watchesTty: boolean;
  syscr: number | null;
}

export interface ForegroundSample {
  tpgid: number;
  members: number[];
  threads: ThreadSample[];
  inspectable: boolean;
}

/** A file's text, or null where it cannot be read (a process gone, a file denied). */
export function readText(path: string): string | null {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function readLink(path: string): string | null {
  try {
    return fs.readlinkSync(path);
  } catch {
    return null;
  }
}

function parseStat(text: string | null): ProcStat | null {
  if (!text) return null;
  // comm is "(...)" and may itself contain spaces and parens: only the last ')' is reliable.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const f = text.slice(close + 2).split(' ');
  if (f.length < 6) return null;
  return {
    pid: Number(text.slice(0, open)),
    comm: text.slice(open + 1, close),
    state: f[0]!,
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    session: Number(f[3]),
    tpgid: Number(f[5]),
  };
}

export function readStat(pid: number): ProcStat | null {
  return parseStat(readText(`/proc/${pid}/stat`));
}

/** The terminal's foreground process group as seen from the shell (-1 in /proc means none). */
export function foregroundPgid(shellPid: number): number | null {
  const tpgid = readStat(shellPid)?.tpgid;
  return tpgid !== undefined && tpgid > 0 ? tpgid : null;
}

/** Every pid under /proc with its stat; a /proc-wide scan, so keep it off hot paths. */
export function scanProcesses(): ProcStat[] {
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcStat[] = [];
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const st = readStat(Number(name));
    if (st) out.push(st);
  }
  return out;
}

let childrenFiles: boolean | undefined;

export function childrenOf(pid: number): number[] {
  // task/<tid>/children needs CONFIG_PROC_CHILDREN; probe once on ourselves.
  childrenFiles ??= fs.existsSync(`/proc/self/task/${process.pid}/children`);
  if (!childrenFiles)
    return scanProcesses()
      .filter((p) => p.ppid === pid)
      .map((p) => p.pid);
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const tid of tids) {
    const text = readText(`/proc/${pid}/task/${tid}/children`);
    if (!text) continue;
    for (const s of text.split(' ')) if (s.trim()) out.push(Number(s));
  }
  return out;
}

export function descendants(pid: number): number[] {
  const seen = new Set<number>([pid]);
  const out: number[] = [];
  for (let i = -1; i < out.length; i++) {
    for (const child of childrenOf(i < 0 ? pid : out[i]!)) {
      if (seen.has(child)) continue;
      seen.add(child);
      out.push(child);
    }
  }
  return out;
}

export function ttyOf(pid: number): string | null {
  return readLink(`/proc/${pid}/fd/0`);
}

const POLL_INPUT = 0x1 | 0x2 | 0x40; // POLLIN | POLLPRI | POLLRDNORM
const MAX_POLLFDS = 4096;
const MAX_SELECT_FDS = 65536;

/** Per-process state shared by its threads within one sample. */
class Member {
  private links = new Map<number, boolean>();
  private memFd: number | null | undefined;

  constructor(
    readonly pid: number,
    private ttyPath: string,
  ) {}

  isTty(fd: number): boolean {
    let hit = this.links.get(fd);
    if (hit === undefined) {
      const link = readLink(`/proc/${this.pid}/fd/${fd}`);
      // getpass, ssh and sudo open /dev/tty; for a foreground-group member that is our terminal.
      hit = link === this.ttyPath || link === '/dev/tty';
      this.links.set(fd, hit);
    }
    return hit;
  }

  readMem(addr: bigint, len: number): Buffer | null {
    if (this.memFd === undefined) {
      try {
        this.memFd = fs.openSync(`/proc/${this.pid}/mem`, 'r');
      } catch {
        this.memFd = null;
      }
    }
    if (this.memFd === null || addr === 0n) return null;
    const buf = Buffer.alloc(len);
    try {
      return fs.readSync(this.memFd, buf, 0, len, addr) === len ? buf : null;
    } catch {
      return null;
    }
  }

  close(): void {
    if (typeof this.memFd === 'number') fs.closeSync(this.memFd);
  }
}

/** Whether a thread blocked in a syscall of class `cls` watches the terminal; null = cannot tell. */
function watchesTty(m: Member, cls: ReturnType<typeof classifySyscall>, args: string[]): boolean | null {
  const arg = (i: number) => BigInt(args[i] ?? '0');
  switch (cls) {
    case 'read':
      return m.isTty(Number(arg(0)));
    case 'epoll': {
      const info = readText(`/proc/${m.pid}/fdinfo/${arg(0)}`);
      if (info === null) return null;
      for (const match of info.matchAll(/^tfd:\s*(\d+)/gm)) if (m.isTty(Number(match[1]))) return true;
      return false;
    }
    case 'poll': {
      // struct pollfd { int fd; short events; short revents; } (little-endian on x64 and arm64)
      const n = Math.min(Number(arg(1)), MAX_POLLFDS);
      if (n === 0) return false;
      const buf = m.readMem(arg(0), n * 8);
      if (!buf) return null;
      for (let i = 0; i < n; i++) {
        const fd = buf.readInt32LE(i * 8);
        if (fd >= 0 && buf.readInt16LE(i * 8 + 4) & POLL_INPUT && m.isTty(fd)) return true;
      }
      return false;
    }
    case 'select': {
      // readfds is an fd_set: an array of longs, bit fd%64 of long fd/64 (i.e. byte fd>>3 on LE).
      const nfds = Math.min(Number(arg(0)), MAX_SELECT_FDS);
      if (nfds === 0 || arg(1) === 0n) return false;
      const buf = m.readMem(arg(1), Math.ceil(nfds / 64) * 8);
      if (!buf) return null;
      for (let fd = 0; fd < nfds; fd++) if (buf[fd >> 3]! & (1 << (fd & 7)) && m.isTty(fd)) return true;
      return false;
    }
    default:
      return false;
  }
}

function sampleThread(m: Member, tid: number): ThreadSample | null {
  const base = `/proc/${m.pid}/task/${tid}`;
  const state = parseStat(readText(`${base}/stat`))?.state;
  if (state === undefined) return null; // exited since readdir
  const sample: ThreadSample = {
    pid: m.pid,
    tid,
    state,
    kind: 'other',
    watchesTty: false,
    syscr: readSyscr(base),
  };
  // Format: "running", "-1 sp pc" (blocked outside a syscall), or "nr a0..a5 sp pc" in hex.
  const text = readText(`${base}/syscall`)?.trim();
  if (!text) return { ...sample, kind: 'unknown' };
  if (text === 'running') return { ...sample, kind: 'running' };
  // A stopped (T) thread still reports the syscall it was in; only sleeping ones are waiting.
  if (state !== 'S') return { ...sample, kind: state === 'R' ? 'running' : 'other' };
  const [nr, ...args] = text.split(' ');
  const cls = classifySyscall(Number(nr));
  if (cls === 'other') return sample;
  let watches: boolean | null;
  try {
    watches = watchesTty(m, cls, args);
  } catch {
    watches = null; // unexpected format: unknown rather than a crashed probe
  }
  if (watches === null) return { ...sample, kind: 'unknown' };
  return { ...sample, kind: watches ? (cls === 'read' ? 'read' : 'poll') : 'other', watchesTty: watches };
}

/**
 * What the foreground job of the shell's terminal is doing, thread by thread. Members are the
 * shell and its descendants in the foreground process group. Null when the shell is gone or
 * there is no /proc.
 */
export function sampleForeground(shellPid: number, ttyPath: string): ForegroundSample | null {
  const group = foregroundGroup(shellPid);
  if (!group) return null;
  const sample: ForegroundSample = { tpgid: group.tpgid, members: group.members, threads: [], inspectable: true };
  for (const pid of sample.members) {
    const m = new Member(pid, ttyPath);
    try {
      for (const tid of threadIds(pid)) {
        const t = sampleThread(m, tid);
        if (!t) continue;
        if (t.kind === 'unknown') sample.inspectable = false;
        sample.threads.push(t);
      }
    } finally {
      m.close();
    }
  }
  return sample;
}

/** The terminal's foreground group (the shell's `tpgid`) and its members among the shell and its descendants. */
function foregroundGroup(shellPid: number): { tpgid: number; members: number[] } | null {
  const shell = readStat(shellPid);
  if (!shell) return null;
  const members: number[] = [];
  if (shell.tpgid <= 0) return { tpgid: shell.tpgid, members };
  if (shell.pgrp === shell.tpgid) members.push(shellPid);
  for (const pid of descendants(shellPid)) if (readStat(pid)?.pgrp === shell.tpgid) members.push(pid);
  return { tpgid: shell.tpgid, members };
}

/**
 * The read counters (`syscr`) of the foreground group's threads and nothing else: what a write's
 * baseline keeps. It is taken before every write, on the send path, so it skips what only a
 * look needs (each thread's state, its syscall, which descriptors are the terminal): about half
 * of `sampleForeground`'s reads, with the same threads.
 */
export function foregroundReads(shellPid: number): { tpgid: number; threads: { tid: number; syscr: number | null }[] } | null {
  const group = foregroundGroup(shellPid);
  if (!group) return null;
  const threads: { tid: number; syscr: number | null }[] = [];
  for (const pid of group.members) {
    for (const tid of threadIds(pid)) {
      const base = `/proc/${pid}/task/${tid}`;
      const syscr = readSyscr(base);
      // As in a full sample: a thread gone since the listing is left out (its stat is gone too);
      // one whose counters are denied (a setuid program) stays, with null.
      if (syscr === null && readText(`${base}/stat`) === null) continue;
      threads.push({ tid, syscr });
    }
  }
  return { tpgid: group.tpgid, threads };
}

/** The thread ids of a process; none once it has exited. */
function threadIds(pid: number): number[] {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    return []; // exited since the scan
  }
}

/** A thread's count of read syscalls (`/proc/PID/task/TID/io`), or null where it cannot be read. */
function readSyscr(base: string): number | null {
  const io = readText(`${base}/io`);
  const match = io ? /^syscr:\s*(\d+)/m.exec(io) : null;
  return match ? Number(match[1]) : null;
}

const shellNames = new Set(['bash', 'zsh', 'pwsh', 'powershell', 'sh', 'dash', 'ksh', 'mksh', 'fish']);

/** Whether a process name (a login shell's leading dash dropped) is a shell's. */
export function isShellName(comm: string | undefined): boolean {
  return comm !== undefined && shellNames.has(comm.replace(/^-/, ''));
}

/**
 * Whether a process is a shell: by its name, or pwsh run by `dotnet` (the dotnet global tool's
 * `pwsh` starts `dotnet …/pwsh.dll` as its child, and that child reads the terminal).
 */
export function isShellProcess(pid: number): boolean {
  const comm = readStat(pid)?.comm;
  if (isShellName(comm)) return true;
  if (comm !== 'dotnet') return false;
  const argv = (readText(`/proc/${pid}/cmdline`) ?? '').split('\0');
  return /(^|\/)pwsh\.dll$/.test(argv[1] ?? '');
}

/** The name of the terminal's foreground program, or null while the shell itself is in front (or unknown). */
export function foregroundProgram(shellPid: number): string | null {
  const shell = readStat(shellPid);
  if (!shell || shell.tpgid <= 0 || shell.tpgid === shell.pgrp) return null;
  return readStat(shell.tpgid)?.comm || null;
}

/**
 * Whether a process of this user exists. EPERM (a process of another user, or one this user
 * may not signal) is not ours, so not alive: after a crash another user can take the dead
 * process's pid, and must not make what it left look live.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The folder a process is in as the kernel holds it (Linux): where that folder is now, after a
 * rename of it or of a folder above it, which the path a shell last reported does not follow.
 * null where it cannot be read (no /proc, a process gone or not ours); `removed` when the
 * folder itself is gone.
 */
export function kernelCwd(pid: number): { path: string; removed: boolean } | null {
  try {
    const link = fs.readlinkSync(`/proc/${pid}/cwd`);
    const removed = link.endsWith(' (deleted)');
    return { path: removed ? link.slice(0, -' (deleted)'.length) : link, removed };
  } catch {
    return null;
  }
}
