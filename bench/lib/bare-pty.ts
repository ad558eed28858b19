/**
 * Baselines on bare node-pty: a shell whose PROMPT_COMMAND prints a private marker (the physical
 * floor of a round trip: PTY write, shell, PTY read, no emulator, no readiness logic), a
 * spawn-until timer for startup (first output, or a prompt's text), and a bare PTY running one
 * program for keystroke echo.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as pty from 'node-pty';
import { benchEnv } from './engine.js';
import { foregroundGroup, sleep } from './procs.js';

const MARK = '\x1b]7772;bench-prompt\x07';

export class BareMarkerShell {
  private waiter: { resolve: () => void; reject: (error: Error) => void; timer: ReturnType<typeof setTimeout> } | null = null;
  private tail = '';
  private exited = false;
  private readonly exitPromise: Promise<void>;
  /** Characters and reads received so far (floods are measured by this, nothing is retained). */
  received = 0;
  reads = 0;

  private constructor(private readonly proc: pty.IPty) {
    proc.onData((data) => this.onData(data));
    this.exitPromise = new Promise((resolve) =>
      proc.onExit(() => {
        this.exited = true;
        resolve();
      }),
    );
  }

  /**
   * `beforeMarker`: shell code PROMPT_COMMAND runs before it prints the marker. `zsh`: the same
   * floor in zsh (its line editor is slower than readline), a precmd from a ZDOTDIR of its own.
   */
  static async start(home: string, cols = 120, rows = 30, beforeMarker = '', kind: 'bash' | 'zsh' = 'bash'): Promise<BareMarkerShell> {
    const env = {
      ...benchEnv(home),
      TERM: 'xterm-256color',
      PS1: '$ ',
      PROMPT_COMMAND: `${beforeMarker ? `${beforeMarker}; ` : ''}builtin printf '\\033]7772;bench-prompt\\007'`,
    } as Record<string, string>;
    let file = 'bash';
    let args = ['--noprofile', '--norc', '-i'];
    if (kind === 'zsh') {
      const dir = mkdtempSync(join(home, 'bare-zsh-'));
      writeFileSync(join(dir, '.zshrc'), `PS1='$ '\nprecmd() { ${beforeMarker ? `${beforeMarker}; ` : ''}builtin printf '\\033]7772;bench-prompt\\007'; }\n`);
      env.ZDOTDIR = dir;
      file = 'zsh';
      args = ['--no-globalrcs', '-i'];
    }
    const proc = pty.spawn(file, args, { name: 'xterm-256color', cols, rows, cwd: home, env });
    const shell = new BareMarkerShell(proc);
    try {
      await shell.expectMarker(10_000);
    } catch (error) {
      await shell.close();
      throw error;
    }
    return shell;
  }

  get pid(): number {
    return this.proc.pid;
  }

  private onData(data: string): void {
    this.received += data.length;
    this.reads += 1;
    if (!this.waiter) return;
    const scan = this.tail + data;
    if (scan.includes(MARK)) {
      const waiter = this.waiter;
      this.waiter = null;
      this.tail = '';
      clearTimeout(waiter.timer);
      waiter.resolve();
      return;
    }
    this.tail = scan.slice(-(MARK.length - 1));
  }

  /** Resolves on the next prompt marker (arm it before the write that causes it). */
  expectMarker(timeoutMs = 10_000): Promise<void> {
    if (this.waiter) throw new Error('a marker wait is already armed');
    this.tail = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`bare shell: no prompt marker within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = { resolve, reject, timer };
    });
  }

  write(data: string): void {
    this.proc.write(data);
  }

  /** One command line to its next prompt marker. */
  async roundTrip(line: string): Promise<void> {
    const marker = this.expectMarker();
    this.proc.write(`${line}\r`);
    await marker;
  }

  async close(): Promise<void> {
    if (this.waiter) {
      clearTimeout(this.waiter.timer);
      this.waiter = null;
    }
    if (this.exited) return;
    const fg = foregroundGroup(this.proc.pid);
    if (fg && fg !== this.proc.pid) {
      try {
        process.kill(-fg, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    this.proc.kill('SIGHUP');
    const timedOut = await Promise.race([this.exitPromise.then(() => false), sleep(2000).then(() => true)]);
    if (timedOut) {
      try {
        this.proc.kill('SIGKILL');
      } catch {
        // Gone already.
      }
      await Promise.race([this.exitPromise, sleep(1000)]);
    }
  }
}

export interface SpawnUntilOptions {
  /** Extra environment. */
  env?: Record<string, string>;
  /**
   * What to wait for, tested on everything received so far with escape sequences removed
   * (default: any output at all).
   */
  until?: RegExp;
  /**
   * Answer cursor-position requests (`CSI 6n`) with `CSI 1;1R`, as any terminal would: pwsh's
   * line editor asks before drawing its prompt and waits for the answer.
   */
  answerCpr?: boolean;
}

const escapes = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78DEHMc])/g;

/**
 * Milliseconds from spawn until the output shows `until` (or its first byte); the process is
 * torn down before returning.
 */
export async function spawnUntil(file: string, args: string[], home: string, opts: SpawnUntilOptions = {}): Promise<number> {
  const t0 = performance.now();
  const proc = pty.spawn(file, args, {
    name: 'xterm-256color',
    cols: 120,
    rows: 30,
    cwd: home,
    env: { ...benchEnv(home), TERM: 'xterm-256color', ...opts.env } as Record<string, string>,
  });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    proc.onExit(() => {
      exited = true;
      resolve();
    }),
  );
  let elapsed = Number.NaN;
  let seen = '';
  try {
    elapsed = await new Promise<number>((resolve, reject) => {
      const what = opts.until ? String(opts.until) : 'output';
      const timer = setTimeout(() => reject(new Error(`${file}: no ${what} within 15 s (got ${JSON.stringify(seen.slice(-120))})`)), 15_000);
      const sub = proc.onData((data) => {
        if (opts.answerCpr && data.includes('\x1b[6n')) proc.write('\x1b[1;1R');
        seen += data;
        if (opts.until && !opts.until.test(seen.replace(escapes, ''))) return;
        clearTimeout(timer);
        sub.dispose();
        resolve(performance.now() - t0);
      });
      void exit.then(() => {
        clearTimeout(timer);
        reject(new Error(`${file} exited before ${what}`));
      });
    });
  } finally {
    if (!exited) {
      proc.kill('SIGHUP');
      if (!(await Promise.race([exit.then(() => true), sleep(1500).then(() => false)]))) {
        try {
          proc.kill('SIGKILL');
        } catch {
          // Gone already.
        }
        await Promise.race([exit, sleep(1000)]);
      }
    }
  }
  return elapsed;
}

/** Milliseconds from spawn to the first byte of output; the process is torn down before returning. */
export function spawnToFirstOutput(file: string, args: string[], home: string, env: Record<string, string> = {}): Promise<number> {
  return spawnUntil(file, args, home, { env });
}

/**
 * A bare PTY running one program (e.g. `cat`) in the bench process: write, and wait for a
 * string in what comes back. The keystroke baseline.
 */
export class BarePty {
  private readonly proc: pty.IPty;
  private readonly exitPromise: Promise<void>;
  private exited = false;
  private waiter: { needle: string; tail: string; resolve: () => void; timer: ReturnType<typeof setTimeout> } | null = null;

  constructor(file: string, args: string[], home: string, cols = 120, rows = 30) {
    this.proc = pty.spawn(file, args, {
      name: 'xterm-256color',
      cols,
      rows,
      cwd: home,
      env: { ...benchEnv(home), TERM: 'xterm-256color' } as Record<string, string>,
    });
    this.proc.onData((data) => {
      const waiter = this.waiter;
      if (!waiter) return;
      const scan = waiter.tail + data;
      if (scan.includes(waiter.needle)) {
        this.waiter = null;
        clearTimeout(waiter.timer);
        waiter.resolve();
      } else {
        waiter.tail = scan.slice(-waiter.needle.length);
      }
    });
    this.exitPromise = new Promise((resolve) =>
      this.proc.onExit(() => {
        this.exited = true;
        resolve();
      }),
    );
  }

  /** Writes `data` and resolves when `needle` comes back (arm-then-write, so nothing is missed). */
  writeAndExpect(data: string, needle: string, timeoutMs = 5000): Promise<void> {
    if (this.waiter) throw new Error('a wait is already armed');
    const promise = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`bare pty: no ${JSON.stringify(needle)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = { needle, tail: '', resolve, timer };
    });
    this.proc.write(data);
    return promise;
  }

  write(data: string): void {
    this.proc.write(data);
  }

  async close(): Promise<void> {
    if (this.waiter) {
      clearTimeout(this.waiter.timer);
      this.waiter = null;
    }
    if (this.exited) return;
    this.proc.kill('SIGHUP');
    if (!(await Promise.race([this.exitPromise.then(() => true), sleep(1500).then(() => false)]))) {
      try {
        this.proc.kill('SIGKILL');
      } catch {
        // Gone already.
      }
      await Promise.race([this.exitPromise, sleep(1000)]);
    }
  }
}
