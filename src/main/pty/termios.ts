/**
 * The terminal's line discipline modes, read from outside the foreground program. This works
 * even when that program is setuid (sudo, passwd) and /proc/<pid>/syscall is denied: echo off
 * with canonical mode on is a password prompt; ISIG off means raw mode (send ^C as a byte).
 *
 * Node has no tcgetattr, and Tandem builds no native code of its own (node-pty's addon has no
 * termios call), so the modes come from a small reader process started once and kept while it
 * is used: perl's POSIX module (in perl-base on Debian, shipped with macOS) opens the terminal
 * with O_NOCTTY and calls tcgetattr, one line per question. A pty's master and slave share one
 * termios, so this is the reading tcgetattr on the master gives. Starting `stty` for each reading
 * cost 5 ms idle and 30 to 50 ms under an output flood (a process started on a saturated CPU);
 * the reader answers in a pipe round trip. Where perl or its POSIX module is missing, or the
 * reader does not answer, each reading starts `stty` as before.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';

export interface TtyModes {
  echo: boolean;
  icanon: boolean;
  isig: boolean;
}

const STTY_TIMEOUT_MS = 500;
/** How long one reader question may take before it counts as dead (then stty answers). */
const READER_TIMEOUT_MS = 500;
/** An idle reader ends after this long (a restart costs a perl start, 10 to 100 ms under load). */
const READER_IDLE_MS = 30_000;

/** `reader`: the kept tcgetattr process (stty where it cannot run); `stty`: one stty per reading. */
export type TtyModeSource = 'reader' | 'stty';
let source: TtyModeSource = 'reader';

/** Chooses how modes are read (the bench compares both in one run; tests check the reader). */
export function setTtyModeSource(next: TtyModeSource): void {
  source = next;
}

export function readTtyModes(ttyPath: string): Promise<TtyModes | null> {
  if (source === 'stty' || reader.broken || ttyPath.includes('\n')) return readTtyModesStty(ttyPath);
  return reader.read(ttyPath).then((modes) => (modes === undefined ? readTtyModesStty(ttyPath) : modes));
}

/** The reader only: undefined where it cannot answer (no perl, no POSIX module, no answer). */
export function readTtyModesTcgetattr(ttyPath: string): Promise<TtyModes | null | undefined> {
  if (reader.broken || ttyPath.includes('\n')) return Promise.resolve(undefined);
  return reader.read(ttyPath);
}

/** Ends the reader now (it starts again on the next reading). */
export function closeTtyModeReader(): void {
  reader.close();
}

export function readTtyModesStty(ttyPath: string): Promise<TtyModes | null> {
  // GNU stty names the device with -F, BSD/macOS stty with -f. stty runs as a non-session-leader
  // child, so opening the slave cannot make it anyone's controlling terminal.
  const args = ['-a', process.platform === 'linux' ? '-F' : '-f', ttyPath];
  return new Promise((resolve) => {
    execFile('stty', args, { timeout: STTY_TIMEOUT_MS }, (err, stdout) => {
      if (err) return resolve(null);
      resolve(parseSttyModes(stdout));
    });
  });
}

/** echo, icanon and isig from `stty -a` output; null unless all three are there. */
export function parseSttyModes(stdout: string): TtyModes | null {
  const flags = new Map<string, boolean>();
  for (const token of stdout.split(/[\s;]+/)) {
    const m = /^(-?)(echo|icanon|isig)$/.exec(token);
    if (m) flags.set(m[2]!, m[1] === '');
  }
  const echo = flags.get('echo');
  const icanon = flags.get('icanon');
  const isig = flags.get('isig');
  return echo === undefined || icanon === undefined || isig === undefined ? null : { echo, icanon, isig };
}

// Reads a path a line, answers "echo icanon isig" as 0/1, or "-" where the path is not a
// terminal it may open. "ok" first, so a perl without POSIX (it dies) is told from a slow start.
// O_NONBLOCK: opening a terminal line must not wait for a carrier.
const READER_SCRIPT = `
use strict; use POSIX (); use Fcntl ();
$| = 1;
my $t = POSIX::Termios->new;
my @bits = (POSIX::ECHO(), POSIX::ICANON(), POSIX::ISIG());
my $flags = Fcntl::O_RDONLY() | Fcntl::O_NOCTTY() | Fcntl::O_NONBLOCK();
print "ok\\n";
while (defined(my $path = <STDIN>)) {
  chomp $path;
  my $out = '-';
  if (sysopen(my $fh, $path, $flags)) {
    if (-t $fh && defined $t->getattr(fileno $fh)) {
      my $l = $t->getlflag;
      $out = join ' ', map { ($l & $_) ? 1 : 0 } @bits;
    }
    close $fh;
  }
  print "$out\\n";
}
`;

type Pending = (line: string | null) => void;

class ModeReader {
  /** perl could not be started or did not say "ok": stty from now on. */
  broken = false;
  private child: ChildProcess | null = null;
  private ready = false;
  private buffer = '';
  private readonly pending: Pending[] = [];
  private idle: ReturnType<typeof setTimeout> | null = null;

  read(ttyPath: string): Promise<TtyModes | null | undefined> {
    const child = this.start();
    if (!child) return Promise.resolve(undefined);
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        // No answer: this reader is stuck; the questions still waiting go to stty.
        this.stop(child);
      }, READER_TIMEOUT_MS);
      this.pending.push((line) => {
        clearTimeout(timer);
        if (line === null) return resolve(undefined);
        if (line === '-') return resolve(null);
        const [echo, icanon, isig] = line.split(' ').map((bit) => bit === '1');
        resolve({ echo: echo!, icanon: icanon!, isig: isig! });
      });
      child.stdin!.write(`${ttyPath}\n`);
    });
  }

  close(): void {
    if (this.child) this.stop(this.child);
  }

  private start(): ChildProcess | null {
    if (this.broken) return null;
    if (this.child) return this.child;
    let child: ChildProcess;
    try {
      child = spawn('perl', ['-e', READER_SCRIPT], { stdio: ['pipe', 'pipe', 'ignore'] });
    } catch {
      this.broken = true;
      return null;
    }
    this.child = child;
    this.ready = false;
    this.buffer = '';
    child.on('error', () => {
      if (!this.ready) this.broken = true;
      this.stop(child);
    });
    child.on('exit', () => {
      if (!this.ready) this.broken = true;
      this.stop(child);
    });
    child.stdin!.on('error', () => this.stop(child));
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.receive(chunk));
    // The reader never keeps the host (or a test run) alive; a question waiting for it does (its timer).
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    return child;
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      if (!this.ready) {
        this.ready = line === 'ok';
        continue;
      }
      this.pending.shift()?.(line);
    }
    if (this.pending.length === 0 && this.child && !this.idle) {
      const child = this.child;
      this.idle = setTimeout(() => this.stop(child), READER_IDLE_MS);
      this.idle.unref();
    }
  }

  private stop(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = null;
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    child.stdin?.destroy();
    child.stdout?.destroy();
    if (child.exitCode === null && child.signalCode === null) child.kill();
    for (const answer of this.pending.splice(0)) answer(null);
  }
}

const reader = new ModeReader();
