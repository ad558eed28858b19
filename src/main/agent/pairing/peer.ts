import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { parseProcNetTcp, tcpClient } from '../../tcp-table.js';

/**
 * What the kernel says about the process at the other end of a pairing connection, as opposed
 * to what that process claims. `uid` null: unknown; `pid` null: not found, or several processes
 * share the connection (a fork); `exe` null: unreadable.
 */
export interface PeerFacts {
  uid: number | null;
  pid: number | null;
  exe: string | null;
  /** How the facts were found: the kernel's socket tables and /proc, or only the 0700 directory's permission (the uid), or nothing. */
  by: 'kernel' | 'directory' | 'none';
  via: 'unix-socket' | 'named-pipe' | 'tcp' | 'in-process';
}

/** The process table read for peers (/proc here; tests give another root). */
export interface ProcReader {
  readlink(path: string): string;
  readFile(path: string): string;
  readdir(path: string): string[];
}

const realProc: ProcReader = {
  readlink: (path) => readlinkSync(path),
  readFile: (path) => readFileSync(path, 'utf8'),
  readdir: (path) => readdirSync(path),
};

/** At most this many processes are looked through for a socket's holder (a bound on one pairing's cost). */
export const maxProcessesScanned = 8192;

function socketInode(link: string): number | null {
  const match = /^socket:\[(\d+)\]$/.exec(link);
  return match ? Number(match[1]) : null;
}

/** Effective uid from /proc/<pid>/status (`Uid: real effective saved fs`); null when real and effective differ or it is unreadable. */
export function processUid(pid: number, proc: ProcReader = realProc): number | null {
  try {
    const line = /^Uid:\s+(\d+)\s+(\d+)/m.exec(proc.readFile(`/proc/${pid}/status`));
    if (!line) return null;
    return line[1] === line[2] ? Number(line[2]) : null;
  } catch {
    return null;
  }
}

function holdsInode(pid: number, inode: number, proc: ProcReader): boolean {
  let fds: string[];
  try {
    fds = proc.readdir(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      if (socketInode(proc.readlink(`/proc/${pid}/fd/${fd}`)) === inode) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** The processes holding a socket inode, found through /proc/<pid>/fd (the candidates first, then every process). */
export function holders(inode: number, candidates: readonly number[], proc: ProcReader = realProc): number[] {
  const found = candidates.filter((pid) => holdsInode(pid, inode, proc));
  if (found.length > 0) return found;
  let pids: number[];
  try {
    pids = proc
      .readdir('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .slice(0, maxProcessesScanned);
  } catch {
    return [];
  }
  return pids.filter((pid) => holdsInode(pid, inode, proc));
}

/** Facts about the process(es) holding a socket inode: one holder gives uid, pid and executable; several agree on uid or give none. */
export function factsOfHolders(pids: readonly number[], via: PeerFacts['via'], proc: ProcReader = realProc): PeerFacts {
  if (pids.length === 0) return { uid: null, pid: null, exe: null, by: 'none', via };
  const uids = new Set(pids.map((pid) => processUid(pid, proc)));
  const uid = uids.size === 1 ? [...uids][0]! : null;
  if (pids.length > 1) return { uid, pid: null, exe: null, by: uid === null ? 'none' : 'kernel', via };
  let exe: string | null = null;
  try {
    exe = proc.readlink(`/proc/${pids[0]}/exe`);
  } catch {
    exe = null;
  }
  return { uid, pid: pids[0]!, exe, by: uid === null ? 'none' : 'kernel', via };
}

/**
 * `ss -xpnH` lines: for each Unix socket, its inode, its peer's inode and the processes `ss`
 * saw holding it. Parsed from the line's end (a socket path may hold spaces).
 */
export function parseSsUnix(output: string): Map<number, { peer: number; pids: number[] }> {
  const table = new Map<number, { peer: number; pids: number[] }>();
  for (const line of output.split('\n')) {
    const match = /\s(\d+)\s+\S+\s+(\d+)\s*(users:\(.*\))?\s*$/.exec(line);
    if (!match) continue;
    const pids = [...(match[3] ?? '').matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
    table.set(Number(match[1]), { peer: Number(match[2]), pids });
  }
  return table;
}

function run(command: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 5000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => resolve(error ? null : stdout));
  });
}

/** The descriptor under a connected Node socket (libuv's pipe handle exposes it on Unix). */
function descriptor(socket: Socket): number | null {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : null;
}

/**
 * The peer of an accepted Unix-socket connection, Linux: our end's inode from /proc/self/fd,
 * the peer's inode from the kernel's socket diagnostics (`ss -x`, sock_diag's UNIX_DIAG_PEER;
 * Node exposes no SO_PEERCRED), then the process holding that inode found in /proc/<pid>/fd
 * (checked there, not taken from ss), its uid from /proc/<pid>/status and its executable from
 * /proc/<pid>/exe. Where that fails, the uid is still proven by the socket's 0700 directory.
 */
export async function unixSocketPeer(
  socket: Socket,
  opts: { ownUid: number; proc?: ProcReader; ss?: () => Promise<string | null> } = { ownUid: process.getuid?.() ?? -1 },
): Promise<PeerFacts> {
  const byDirectory: PeerFacts = { uid: opts.ownUid, pid: null, exe: null, by: 'directory', via: 'unix-socket' };
  if (process.platform !== 'linux') return byDirectory;
  const proc = opts.proc ?? realProc;
  const fd = descriptor(socket);
  if (fd === null) return byDirectory;
  let own: number | null;
  try {
    own = socketInode(proc.readlink(`/proc/self/fd/${fd}`));
  } catch {
    own = null;
  }
  if (own === null) return byDirectory;
  const table = parseSsUnix((await (opts.ss ?? (() => run('ss', ['-xpnH'])))()) ?? '');
  const peer = table.get(own)?.peer;
  if (!peer) return byDirectory;
  const facts = factsOfHolders(holders(peer, table.get(peer)?.pids ?? [], proc), 'unix-socket', proc);
  return facts.by === 'kernel' ? facts : byDirectory;
}

export { parseProcNetTcp };

/**
 * The peer of a loopback TCP connection, Linux: the kernel's TCP table (/proc/net/tcp, tcp6)
 * names the client end (local port = our remote port, remote port = our local port) with its
 * uid and inode; the process holding that inode is found in /proc/<pid>/fd.
 */
export function tcpPeer(socket: { localPort?: number; remotePort?: number }, proc: ProcReader = realProc): PeerFacts {
  const none: PeerFacts = { uid: null, pid: null, exe: null, by: 'none', via: 'tcp' };
  const client = tcpClient(socket, (path) => proc.readFile(path));
  if (!client) return none;
  const facts = factsOfHolders(client.inode ? holders(client.inode, [], proc) : [], 'tcp', proc);
  // The table's uid is the kernel's even when no process is found (it exited).
  return { ...facts, uid: client.uid, by: 'kernel' };
}

/**
 * A Windows named pipe's client: GetNamedPipeClientProcessId needs the pipe's handle, which
 * Node does not expose, so nothing is verified beyond the pipe's default DACL (only this user,
 * administrators and SYSTEM may write to it). Kept as a function so the card says so plainly.
 */
export function namedPipePeer(): PeerFacts {
  return { uid: null, pid: null, exe: null, by: 'none', via: 'named-pipe' };
}
