/**
 * A real Tandem instance in a child process (probes/host-child.ts), so the bench's clients and
 * the host never share an event loop. Its state directory (TANDEM_HOME) is private to it and
 * removed on stop. Set BENCH_CPU_PROF_DIR to have the host write a V8 CPU profile there.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { which } from '../../src/main/shells/resolve.js';
import { builtProbe } from './child.js';
import { benchEnv } from './engine.js';
import { sleep } from './procs.js';

export interface HostInfo {
  origin: string;
  port: number;
  /** The login token of the printed URL (POST /session trades it for a session secret). */
  login: string;
  /** The (first) paired agent's token (policy `always`), when an agent name was given. */
  agentToken: string | null;
  /** Every paired agent's token by name. */
  agentTokens: Record<string, string>;
  pid: number;
}

export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  mean: number;
  samples: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  wallMs: number;
  /** Times a PTY was paused by flow control in the window, and for how long in total. */
  pauses: number;
  pausedMs: number;
}

export interface HostMemory {
  heapUsed: number;
  /** What V8 has committed for its heap (used or not). */
  heapTotal: number;
  rss: number;
  external: number;
  arrayBuffers: number;
  fds: number | null;
  /** Sockets among `fds`. */
  sockets: number | null;
}

export class HostProcess {
  private nextId = 1;
  private readonly waiters = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly exited: Promise<void>;
  private alive = true;

  private constructor(
    private readonly child: ChildProcess,
    readonly info: HostInfo,
    /** TANDEM_HOME of this instance: the stdio bridge must see the same one. */
    readonly tandemHome: string,
    private readonly scratch: string,
    exited: Promise<void>,
    /** The tail of the host's stderr, for error messages. */
    private readonly stderrTail: () => string,
  ) {
    this.exited = exited;
  }

  /**
   * Starts the host; `agent` (or each of `agents`) pairs an agent of that name under policy
   * `always`; `exposeGc` lets `memory({ gc: true })` force collections; `onStderr` receives
   * what the host writes there (the soak counts its warnings).
   */
  static async start(
    home: string,
    root: string,
    opts: { agent?: string; agents?: string[]; exposeGc?: boolean; onStderr?: (text: string) => void; settings?: Record<string, unknown> } = {},
  ): Promise<HostProcess> {
    const scratch = mkdtempSync(join(home, 'host-'));
    const tandemHome = join(scratch, 'tandem');
    const rendererDir = join(scratch, 'renderer');
    mkdirSync(tandemHome);
    mkdirSync(rendererDir);
    // The person's settings as the instance reads them at start (the recording figure turns recording off).
    if (opts.settings) writeFileSync(join(tandemHome, 'settings.json'), JSON.stringify(opts.settings));
    // /ws is served only with a UI directory; the bench needs the transport, not the UI.
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>bench</title>\n');
    // Plain JavaScript, as the app runs (builtProbe): no TypeScript loader in the host.
    const args = [...(opts.exposeGc ? ['--expose-gc'] : [])];
    const profDir = process.env.BENCH_CPU_PROF_DIR;
    if (profDir) args.push('--cpu-prof', '--cpu-prof-dir', profDir);
    args.push(await builtProbe('host-child.ts', root), '--renderer', rendererDir);
    for (const name of [...(opts.agent ? [opts.agent] : []), ...(opts.agents ?? [])]) args.push('--agent', name);
    const env = { ...benchEnv(home), TANDEM_HOME: tandemHome, SHELL: which('bash') ?? '/bin/bash', TANDEM_INSTANCE: undefined, TANDEM_TOKEN: undefined };
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
      opts.onStderr?.(chunk);
    });
    const lines = createInterface({ input: child.stdout! });
    let host: HostProcess | null = null;
    try {
      const info = await new Promise<HostInfo>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the host did not start within 30 s: ${stderr.trim().slice(-300)}`)), 30_000);
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`the host exited while starting: ${stderr.trim().slice(-300)}`));
        });
        lines.on('line', (line) => {
          if (line.startsWith('BENCH-HOST-READY ')) {
            clearTimeout(timer);
            resolve(JSON.parse(line.slice('BENCH-HOST-READY '.length)) as HostInfo);
          } else if (line.startsWith('BENCH-HOST ') && host) {
            host.onReply(JSON.parse(line.slice('BENCH-HOST '.length)) as { id: number; ok: boolean; value?: unknown; error?: string });
          }
        });
      });
      host = new HostProcess(child, info, tandemHome, scratch, exited, () => stderr.trim().slice(-300));
      void exited.then(() => {
        if (!host) return;
        host.alive = false;
        for (const waiter of host.waiters.values()) waiter.reject(new Error(`the host exited: ${stderr.trim().slice(-300)}`));
        host.waiters.clear();
      });
      return host;
    } catch (error) {
      child.kill('SIGKILL');
      await Promise.race([exited, sleep(2000)]);
      rmSync(scratch, { recursive: true, force: true });
      throw error;
    }
  }

  private onReply(reply: { id: number; ok: boolean; value?: unknown; error?: string }): void {
    const waiter = this.waiters.get(reply.id);
    if (!waiter) return;
    this.waiters.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.value);
    else waiter.reject(new Error(`host: ${reply.error}`));
  }

  /** One command of the probe's stdin protocol. */
  command<T>(cmd: string, args: Record<string, unknown> = {}): Promise<T> {
    if (!this.alive) return Promise.reject(new Error(`the host is not running: ${this.stderrTail()}`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiters.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, cmd, args })}\n`);
    });
  }

  startLoopDelay(): Promise<void> {
    return this.command('eld-start');
  }

  stopLoopDelay(): Promise<LoopDelay> {
    return this.command<LoopDelay>('eld-stop');
  }

  /** Heap, RSS (bytes), open descriptors and sockets (null off Linux); `gc` forces full collections first. */
  memory(gc = false): Promise<HostMemory> {
    return this.command<HostMemory>('memory', { gc });
  }

  /** Tears the instance down (its terminals included) and removes its state directory. */
  async stop(): Promise<void> {
    if (this.alive) {
      await this.command('stop').catch(() => undefined);
      if (!(await Promise.race([this.exited.then(() => true), sleep(8000).then(() => false)]))) {
        this.child.kill('SIGKILL');
        await Promise.race([this.exited, sleep(2000)]);
      }
    }
    rmSync(this.scratch, { recursive: true, force: true });
  }
}
