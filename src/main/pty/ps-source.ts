/**
 * The `ps` evidence source: what a terminal's foreground job is doing, read from ps(1) alone,
 * so it works without /proc (macOS, and Linux under TANDEM_EVIDENCE=ps). One ps process per
 * look: `ps -t <tty>` lists the terminal's processes with the terminal's foreground group
 * (`tpgid`), each one's group, state and wait channel.
 *
 * What each ps gives (checked in the sources, kept as fixtures in tests/unit/fixtures/ps):
 * - procps-ng (Linux): `wchan` is the kernel function the process's main thread sleeps in.
 *   Seen on Linux 6.18 here: a terminal read sleeps in `wait_woken` (older kernels name
 *   `n_tty_read`), select and poll in `poll_schedule_timeout.constprop.0` (older: `do_select`,
 *   `core_sys_select`, `do_sys_poll`), epoll in `do_epoll_wait` (older: `ep_poll`).
 * - macOS (adv_cmds ps/print.c `wchan()`): prints the wait message only when the kinfo_proc's
 *   `p_wchan` is set, else "-"; xnu's sysctl (bsd/kern/kern_sysctl.c, fill_user64_externproc:
 *   "bzeroed by our caller, so only set non-zero fields") never copies `p_wchan`/`p_wmesg`, so
 *   macOS ps prints "-" for every process. The messages xnu sleeps with exist (bsd/kern/tty.c
 *   ttread: "ttyin"; bsd/kern/sys_generic.c selprocess: "select"; kevent waits have none)
 *   but its ps never shows them; FreeBSD's ps does (ttyin, select, kqread), so they count. Its `stat` letters are xnu's thread states (ps/tasks.c `mach_state_table`
 *   " RUSITH?": S sleeping under 20 s, I sleeping longer, '?' when the task is unreadable) and
 *   `sess` is a kernel pointer it leaves 0 (ps/keyword.c KPTR, never filled by xnu).
 * So where the wait channel is "-", the look says only who sleeps; the terminal's modes then
 * carry the evidence (probe.ts).
 */
import { execFile, execFileSync } from 'node:child_process';

export type PsFlavour = 'procps' | 'bsd';

export const hostPsFlavour: PsFlavour = process.platform === 'linux' ? 'procps' : 'bsd';

/** What a sleeping thread waits in, from its wait channel. */
export type WchanClass = 'read' | 'poll' | 'other' | 'unknown';

// Kernel function names of a thread blocked in a terminal read, or in select/poll/epoll.
// wait_woken is also where a socket read sleeps: the look cannot tell which descriptor.
const READ_CHANNELS = new Set(['n_tty_read', 'wait_woken', 'ttyin']);
const POLL_CHANNELS = new Set(['do_select', 'core_sys_select', 'do_sys_poll', 'poll_schedule_timeout', 'ep_poll', 'do_epoll_wait', 'select', 'kqread']);

export function classifyWchan(wchan: string): WchanClass {
  if (wchan === '' || wchan === '-' || wchan === '?') return 'unknown';
  // Compiler clones carry suffixes (poll_schedule_timeout.constprop.0); procps may cut long names.
  const name = wchan.replace(/\..*$/, '');
  if (READ_CHANNELS.has(name)) return 'read';
  if (POLL_CHANNELS.has(name)) return 'poll';
  return 'other';
}

/** One line of a terminal's listing: a process, or with procps one of its threads. */
export interface PsTtyEntry {
  pid: number;
  /** The thread id (procps -L); the pid where ps lists processes only. */
  tid: number;
  ppid: number;
  pgid: number;
  /** The terminal's foreground group as this process sees it; -1 or 0 when none. */
  tpgid: number;
  /** The state letters: R running, S/I sleeping, T stopped, Z zombie, U/D uninterruptible. */
  stat: string;
  wchan: string;
  comm: string;
}

const STATE_SLEEPING = /^[SI]/;

export function isSleeping(stat: string): boolean {
  return STATE_SLEEPING.test(stat);
}

/**
 * ps arguments for one look at a terminal. The comm column comes last: it may hold spaces.
 * Processes, not threads: procps's -L doubled a look's cost (the bench's idle CPU), and the
 * wait channel of a process is its main thread's; a program whose main thread waits on a
 * futex while another reads the terminal (pwsh in front) shows no evidence here. The pid
 * column twice keeps one parser for both (procps -L would print the thread id there).
 */
export function ttyLookArgs(flavour: PsFlavour, tty: string): string[] {
  return flavour === 'procps'
    ? ['-t', tty, '-o', 'pid=,pid=,ppid=,pgid=,tpgid=,stat=,wchan:48=,comm=']
    : ['-t', tty, '-o', 'pid=,ppid=,pgid=,tpgid=,stat=,wchan=,comm='];
}

export function parseTtyLook(flavour: PsFlavour, text: string): PsTtyEntry[] {
  const out: PsTtyEntry[] = [];
  const re =
    flavour === 'procps'
      ? /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(-?\d+)\s+(\S+)\s+(\S+)\s*(.*)$/
      : /^\s*(\d+)\s+()(\d+)\s+(\d+)\s+(-?\d+)\s+(\S+)\s+(\S+)\s*(.*)$/;
  for (const line of text.split('\n')) {
    const m = re.exec(line);
    if (!m) continue;
    const pid = Number(m[1]);
    out.push({
      pid,
      tid: m[2] ? Number(m[2]) : pid,
      ppid: Number(m[3]),
      pgid: Number(m[4]),
      tpgid: Number(m[5]),
      stat: m[6]!,
      wchan: m[7]!,
      comm: basename(m[8]!.trim()),
    });
  }
  return out;
}

function basename(comm: string): string {
  const slash = comm.lastIndexOf('/');
  return slash >= 0 ? comm.slice(slash + 1) : comm;
}

/** A process of the whole table, for teardown and signals. */
export interface PsProcess {
  pid: number;
  ppid: number;
  pgid: number;
  /** The session id; 0 where ps cannot tell (macOS prints a kernel pointer it leaves 0). */
  sess: number;
  stat: string;
  /** The controlling terminal as ps names it ("pts/3", "ttys003"); "?" or "??" for none. */
  tty: string;
  /** The start time as ps prints it (`lstart`, C locale): with the pid, who the process is. */
  lstart: string;
  comm: string;
}

export const tableArgs = ['-A', '-o', 'pid=,ppid=,pgid=,sess=,stat=,tty=,lstart=,comm='];

export function parseTable(text: string): PsProcess[] {
  const out: PsProcess[] = [];
  // lstart is five fields in the C locale: "Wed Dec  2 14:59:09 2026".
  const re = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+\s+\S+\s+\d+\s+[\d:]+\s+\d+)\s*(.*)$/;
  for (const line of text.split('\n')) {
    const m = re.exec(line);
    if (!m) continue;
    const sess = /^\d+$/.test(m[4]!) ? Number(m[4]) : 0; // a hex pointer on macOS
    out.push({
      pid: Number(m[1]),
      ppid: Number(m[2]),
      pgid: Number(m[3]),
      sess,
      stat: m[5]!,
      tty: m[6]!,
      lstart: m[7]!.replace(/\s+/g, ' '),
      comm: basename(m[8]!.trim()),
    });
  }
  return out;
}

/** ps arguments listing each process's environment after its command (own processes only). */
export function environArgs(flavour: PsFlavour): string[] {
  return flavour === 'procps' ? ['-A', '-ww', 'e', '-o', 'pid=,args='] : ['-A', '-E', '-ww', '-o', 'pid=,command='];
}

/**
 * Each pid's value of `name` from an environment listing (`environArgs`). ps prints the
 * environment after the command line, space-separated: the last ` NAME=` word is the variable.
 */
export function terminalIds(text: string, name: string): Map<number, string> {
  const out = new Map<number, string>();
  const needle = ` ${name}=`;
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)(\s.*)$/.exec(line);
    if (!m) continue;
    const at = m[2]!.lastIndexOf(needle);
    if (at < 0) continue;
    const rest = m[2]!.slice(at + needle.length);
    const space = rest.indexOf(' ');
    out.set(Number(m[1]), space < 0 ? rest : rest.slice(0, space));
  }
  return out;
}

/** The C locale fixes lstart's format; a look that takes longer than this is unknown. */
const PS_ENV = { ...process.env, LC_ALL: 'C', LANG: 'C' };
const PS_TIMEOUT_MS = 2000;
/** Listings are small; the whole table with environments can be a few MiB. */
const PS_MAX_BUFFER = 32 * 1024 * 1024;

/** Runs ps; null when it fails. Exit 1 with no output is an empty selection (procps, BSD). */
export function runPsSync(args: string[]): string | null {
  try {
    return execFileSync('ps', args, { encoding: 'utf8', env: PS_ENV, timeout: PS_TIMEOUT_MS, maxBuffer: PS_MAX_BUFFER, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch (e) {
    const err = e as { status?: number; stdout?: string };
    return err.status === 1 && !err.stdout ? '' : null;
  }
}

export function runPs(args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('ps', args, { encoding: 'utf8', env: PS_ENV, timeout: PS_TIMEOUT_MS, maxBuffer: PS_MAX_BUFFER }, (err, stdout) => {
      if (!err) return resolve(stdout);
      resolve((err as { code?: unknown }).code === 1 && !stdout ? '' : null);
    });
  });
}

/** One look at a terminal's processes; null when ps failed. */
export async function lookTty(tty: string, flavour: PsFlavour = hostPsFlavour): Promise<PsTtyEntry[] | null> {
  const text = await runPs(ttyLookArgs(flavour, tty));
  return text === null ? null : parseTtyLook(flavour, text);
}

/** One process's group, session-visible foreground group and name, by pid; null when gone or unknown. */
export function lookPid(pid: number): { pgid: number; tpgid: number; stat: string; comm: string } | null {
  const text = runPsSync(['-p', String(pid), '-o', 'pgid=,tpgid=,stat=,comm=']);
  const m = text ? /^\s*(\d+)\s+(-?\d+)\s+(\S+)\s*(.*)$/m.exec(text) : null;
  return m ? { pgid: Number(m[1]), tpgid: Number(m[2]), stat: m[3]!, comm: basename(m[4]!.trim()) } : null;
}

export function processTable(): PsProcess[] | null {
  const text = runPsSync(tableArgs);
  return text === null ? null : parseTable(text);
}

/** Whether this machine's ps answers the look's columns (the tier's availability check). */
export function psWorks(flavour: PsFlavour = hostPsFlavour): boolean {
  const text = runPsSync(['-p', String(process.pid), '-o', flavour === 'procps' ? 'pid=,pgid=,tpgid=,stat=,wchan:48=' : 'pid=,pgid=,tpgid=,stat=,wchan=']);
  return text !== null && new RegExp(`^\\s*${process.pid}\\s`).test(text);
}
