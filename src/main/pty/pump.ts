import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import * as pty from 'node-pty';
import { ChildPid, type CreatedWindow } from './child-pid.js';
import { conptyOptions } from './win-pty.js';

/**
 * The pseudo-terminals, read on a thread of their own. A PTY's kernel buffer holds a few
 * kilobytes: a reader that is busy elsewhere (parsing, sending frames to viewers, answering
 * agents) stalls the program writing into it. The pump thread only reads, coalesces what one
 * turn of its loop read, and posts it to the main thread, so a busy main thread costs a flood
 * latency, not throughput. What is posted and not yet consumed is bounded: past
 * `maxAheadChars` the pump stops reading that PTY until the main thread catches up.
 *
 * Windows keeps node-pty on the main thread (ConPTY already reads on threads of its own), as
 * does `TANDEM_PTY_THREAD=0`; so does everything when the pump thread cannot start.
 */
export interface PtyProcess {
  /**
   * The child's pid, read each time: 0 until it is known (on Windows, until ConPTY connects;
   * child-pid.ts). Never copy it at spawn.
   */
  readonly pid: number;
  /** When the child was created, for teardowns that must not kill a process that reused its pid; null while the pid is unknown. */
  readonly created: CreatedWindow | null;
  /** The slave device (POSIX), when node-pty names it. */
  readonly ptsName: string | undefined;
  onData(listener: (data: string) => void): void;
  onExit(listener: (exit: { exitCode: number; signal: number }) => void): void;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  pause(): void;
  resume(): void;
  kill(signal?: string): void;
  /**
   * Resolves once everything the PTY held when called was delivered to `onData` (a paused PTY
   * delivers nothing until resumed): a look at a waiting program is confirmed after it, so
   * output it wrote before blocking cannot lose the race to the look.
   */
  sync(): Promise<void>;
  /**
   * As `sync`, but also through a pause (flow control, or the owner's): resolves once what the
   * PTY held when called was delivered, or its program is gone. What a write for a program is
   * ordered against (session.ts `writeToProgram`): an end marker behind a flood the consumer
   * is still catching up with counts. Where absent, `sync`.
   */
  settle?(): Promise<void>;
  /**
   * The owner is done with this PTY (its shell exited and was drained, or it was closed): the
   * listeners go, so an entry kept for output trailing the exit no longer holds the terminal.
   */
  release?(): void;
}

export interface PtySpawnOptions {
  name: string;
  cols: number;
  rows: number;
  cwd: string;
  env: Record<string, string | undefined>;
}

/** Characters posted by the pump and not yet consumed, per PTY, before it stops reading. */
export const maxAheadChars = 1024 * 1024;

/**
 * The pump thread's young generation (MiB). Under hours of terminal churn its default one kept
 * committing more (the soak's RSS rose 26 MiB in its last minute, the main heap flat); at 12 MiB
 * that is 12 MiB, and a flood runs as fast. At 4 MiB the flood slowed by about a tenth.
 */
export const pumpYoungGenerationMiB = 12;
/**
 * While output streams (at least `streamingChars` posted in `streamingWindowMs`), what the PTYs
 * deliver is posted once per `streamingPostMs` instead of once per read: a read holds at most
 * a few KiB, and every message costs both threads a fixed price (a flood made 10,000 of them a
 * second). Output after a quiet spell, an echo or a prompt, is posted in the loop turn it was
 * read in.
 */
export const streamingChars = 32 * 1024;
export const streamingWindowMs = 10;
export const streamingPostMs = 1;
/** The main thread reports consumption in steps of this many characters. */
const consumedStepChars = 64 * 1024;

type ToPump =
  | { t: 'spawn'; id: number; file: string; args: string[]; opts: PtySpawnOptions }
  | { t: 'write'; id: number; data: string }
  | { t: 'resize'; id: number; cols: number; rows: number }
  | { t: 'pause' | 'resume'; id: number }
  | { t: 'kill'; id: number; signal?: string }
  | { t: 'consumed'; id: number; chars: number }
  | { t: 'sync' | 'settle'; id: number; token: number };

type FromPump =
  | { t: 'spawned'; id: number; pid: number; ptsName?: string }
  | { t: 'failed'; id: number; message: string }
  | { t: 'data'; id: number; data: string }
  | { t: 'exit'; id: number; exitCode: number; signal: number }
  | { t: 'synced'; id: number; token: number };

/** Bytes read from the master at exit beyond what node-pty read (a PTY buffers far fewer). */
export const maxExitDrainBytes = 4 * 1024 * 1024;

/**
 * node-pty destroys its read stream 200 ms after the shell exits when the stream has not seen
 * end-of-file by then (upstream issues 72 and 726): output still in the kernel (the PTY was
 * paused for flow control, or the loop was busy) was lost with it. Before that destroy, this
 * reads the master to its end and hands the rest to node-pty's own data listeners. It is also
 * evaluated inside the pump thread, so it refers to nothing outside itself.
 */
function keepOutputAtExit(pty: unknown, maxBytes: number): void {
  const internals = pty as { _fd?: number; _socket?: { destroy(error?: Error): unknown; read(): unknown; emit(event: 'data', data: string): boolean } };
  const socket = internals._socket;
  const fd = internals._fd;
  if (!socket || typeof fd !== 'number' || typeof socket.destroy !== 'function') return;
  const { readSync } = process.getBuiltinModule('node:fs');
  const { StringDecoder } = process.getBuiltinModule('node:string_decoder');
  const destroy = socket.destroy.bind(socket);
  socket.destroy = (error?: Error) => {
    // What the paused stream holds (read() emits it as data), then what the kernel holds (the
    // master is non-blocking: EAGAIN when empty, EIO after the slave's hang-up). This output
    // arrives even while paused: it is bounded, and the alternative is losing it.
    while (socket.read() !== null);
    const decoder = new StringDecoder('utf8');
    const buffer = Buffer.alloc(64 * 1024);
    for (let total = 0; total < maxBytes;) {
      let n: number;
      try {
        n = readSync(fd, buffer, 0, buffer.length, null);
      } catch {
        break;
      }
      if (n <= 0) break;
      total += n;
      const text = decoder.write(buffer.subarray(0, n));
      if (text) socket.emit('data', text);
    }
    const rest = decoder.end();
    if (rest) socket.emit('data', rest);
    return destroy(error);
  };
}

/** The longest wait between two tries of a write the PTY refused (it is full: the program is not reading). */
export const maxRefusedWriteDelayMs = 8;

/**
 * node-pty (1.2.0-beta) tries again a write the PTY refused (EAGAIN: the program is not reading
 * its input) on the very next event-loop turn, for as long as it is refused (upstream
 * microsoft/node-pty pull request 956, stablyai/orca issue 11178). A large paste or typed-ahead
 * input into a busy shell turned the thread into a spin that also starved the PTY's output: the
 * shell, blocked writing its echo, never read the rest (1,000 typed-ahead commands ran 13 to 137
 * in 300 s on a busy core; 2,000 into a bare node-pty bash stalled in 6 of 16 runs on one core, 0 of 8 with
 * this). This gives the PTY a write stream of the same shape (`write`, `dispose`) whose refused
 * writes wait 1 ms, doubling to {@link maxRefusedWriteDelayMs}, and whose accepted ones go on
 * at once. Where node-pty has no such stream (Windows: ConPTY's pipe) nothing changes. Also
 * evaluated inside the pump thread, so it refers to nothing outside itself.
 */
export function pacedWrites(pty: unknown, maxDelayMs: number): void {
  type Stream = { write(data: string | Buffer): void; dispose(): void; _encoding?: BufferEncoding };
  const internals = pty as { _fd?: number; _writeStream?: Stream };
  const original = internals._writeStream;
  const fd = internals._fd;
  if (!original || typeof fd !== 'number' || typeof original.write !== 'function') return;
  const fs = process.getBuiltinModule('node:fs');
  const queue: Array<{ buffer: Buffer; offset: number }> = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing = false;
  let disposed = false;
  let delay = 0;
  const next = (): void => {
    timer = undefined;
    const task = queue[0];
    if (!task || disposed) {
      writing = false;
      return;
    }
    writing = true;
    fs.write(fd, task.buffer, task.offset, (error, written) => {
      if (disposed) return;
      if (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          delay = Math.min(delay === 0 ? 1 : delay * 2, maxDelayMs);
          timer = setTimeout(next, delay);
          return;
        }
        // The program side is gone (EIO, EBADF): its exit comes through node-pty.
        queue.length = 0;
        writing = false;
        return;
      }
      delay = 0;
      task.offset += written;
      if (task.offset >= task.buffer.byteLength) queue.shift();
      next();
    });
  };
  const paced: Stream = {
    write(data) {
      const buffer = typeof data === 'string' ? Buffer.from(data, original._encoding ?? 'utf8') : Buffer.from(data);
      if (buffer.byteLength === 0 || disposed) return;
      queue.push({ buffer, offset: 0 });
      if (!writing) next();
    },
    dispose() {
      disposed = true;
      if (timer !== undefined) clearTimeout(timer);
      queue.length = 0;
      original.dispose();
    },
  };
  internals._writeStream = paced;
}

/**
 * Linux moves what a program writes to its terminal into the master's read buffer on a kernel
 * worker, later (the pty "flip buffer"): right after the write, poll and epoll on the master may
 * report nothing. A C check here saw the master readable up to 8 ms after the write with four
 * CPU burners (2 % of writes over 2 ms), so a program's prompt could arrive after the confirming
 * look that saw the program wait for input: `q0? ` missing from a waiting_input result. A read
 * of the master runs that worker's job first (n_tty_read flushes it), so the sync before a
 * confirming look reads once, non-blocking, and hands the bytes to node-pty's own stream, whose
 * decoder keeps a character split across reads whole. Nothing is read while the stream is paused
 * (flow control). Evaluated inside the pump thread too, so it refers to nothing outside itself.
 */
export function pullPending(pty: unknown): boolean {
  const internals = pty as { _fd?: number; _socket?: { push(chunk: Buffer): boolean; isPaused(): boolean; destroyed?: boolean } };
  const socket = internals._socket;
  const fd = internals._fd;
  if (!socket || typeof fd !== 'number' || typeof socket.push !== 'function' || socket.destroyed || socket.isPaused()) return false;
  const buffer = Buffer.alloc(64 * 1024);
  let n = 0;
  try {
    n = process.getBuiltinModule('node:fs').readSync(fd, buffer, 0, buffer.length, null);
  } catch {
    // EAGAIN: nothing pending; EIO: the program side is gone (its end comes through node-pty).
    return false;
  }
  if (n > 0) socket.push(buffer.subarray(0, n));
  return n > 0;
}

/**
 * The pump thread's program. It runs from source text (`eval`), so the same code serves the
 * tests, `tandem serve` and the Electron bundle without a separate build entry: it must not
 * refer to anything outside itself. Its types are those of this module.
 */
function pumpMain(): void {
  // No `require`: bundlers rewrite that name into a helper the thread does not have.
  const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const { ptyPath } = workerData as { ptyPath: string };
  const nodePty = process.getBuiltinModule('node:module').createRequire(ptyPath)(ptyPath) as typeof import('node-pty');
  const port = parentPort!;
  const {
    maxAheadChars: limit,
    maxExitDrainBytes: drainBytes,
    maxRefusedWriteDelayMs: refusedWriteDelayMs,
    streaming: stream,
  } = workerData as {
    maxAheadChars: number;
    maxExitDrainBytes: number;
    maxRefusedWriteDelayMs: number;
    streaming: { chars: number; windowMs: number; postMs: number };
  };
  interface Entry {
    p: import('node-pty').IPty;
    pending: string[];
    ahead: number;
    paused: boolean;
    held: boolean;
    /** Settles waiting for the PTY to be read again (`settle`). */
    settling: number[];
  }
  const entries = new Map<number, Entry>();
  const dirty = new Set<number>();
  let scheduled = false;
  // The output rate over all PTYs, in windows of stream.windowMs.
  let windowStart = 0;
  let windowChars = 0;
  let streaming = false;
  const posted = (chars: number) => {
    const now = performance.now();
    if (now - windowStart > stream.windowMs) {
      // The window just ended decides, if it was the one before this.
      streaming = windowChars >= stream.chars && now - windowStart <= 2 * stream.windowMs;
      windowStart = now;
      windowChars = 0;
    }
    windowChars += chars;
    if (windowChars >= stream.chars) streaming = true;
  };
  const post = (message: FromPump) => port.postMessage(message);
  const flushOne = (id: number, entry: Entry) => {
    if (entry.pending.length === 0) return;
    const data = entry.pending.length === 1 ? entry.pending[0]! : entry.pending.join('');
    entry.pending = [];
    entry.ahead += data.length;
    posted(data.length);
    post({ t: 'data', id, data });
    if (entry.ahead > limit && !entry.held) {
      entry.held = true;
      if (!entry.paused) entry.p.pause();
    }
  };
  // Reads what the master holds, up to 64 reads (a program still printing is not waited out),
  // then answers the settles; a pause or a hold on the way leaves them for the resume.
  const settle = (id: number, entry: Entry) => {
    if (entry.settling.length === 0 || entry.paused || entry.held) return;
    setImmediate(() =>
      setImmediate(() => {
        if (entry.paused || entry.held) return;
        if (process.platform === 'linux') for (let reads = 0; reads < 64 && !entry.paused && pullPending(entry.p); reads++);
        flushOne(id, entry);
        if (entry.held || entry.paused) return;
        for (const token of entry.settling.splice(0)) post({ t: 'synced', id, token });
      }),
    );
  };
  const flushAll = () => {
    scheduled = false;
    for (const id of dirty) {
      const entry = entries.get(id);
      if (entry) flushOne(id, entry);
    }
    dirty.clear();
  };
  port.on('message', (message: ToPump) => {
    const entry = entries.get(message.id);
    switch (message.t) {
      case 'spawn': {
        let p: import('node-pty').IPty;
        try {
          p = nodePty.spawn(message.file, message.args, message.opts);
        } catch (error) {
          post({ t: 'failed', id: message.id, message: (error as Error).message });
          return;
        }
        keepOutputAtExit(p, drainBytes);
        pacedWrites(p, refusedWriteDelayMs);
        const created: Entry = { p, pending: [], ahead: 0, paused: false, held: false, settling: [] };
        entries.set(message.id, created);
        p.onData((data) => {
          created.pending.push(data);
          dirty.add(message.id);
          if (!scheduled) {
            scheduled = true;
            if (streaming && performance.now() - windowStart <= 2 * stream.windowMs) setTimeout(flushAll, stream.postMs);
            else setImmediate(flushAll);
          }
        });
        p.onExit(({ exitCode, signal }) => {
          flushOne(message.id, created);
          for (const token of created.settling.splice(0)) post({ t: 'synced', id: message.id, token });
          post({ t: 'exit', id: message.id, exitCode, signal: signal ?? 0 });
          // Output can trail the exit a little; after that the entry goes.
          setTimeout(() => {
            flushOne(message.id, created);
            entries.delete(message.id);
          }, 10_000).unref();
        });
        post({ t: 'spawned', id: message.id, pid: p.pid, ptsName: (p as unknown as { ptsName?: string }).ptsName });
        return;
      }
      case 'write':
        entry?.p.write(message.data);
        return;
      case 'resize':
        try {
          entry?.p.resize(message.cols, message.rows);
        } catch {
          // The PTY is closing.
        }
        return;
      case 'pause':
      case 'resume':
        if (!entry) return;
        entry.paused = message.t === 'pause';
        if (entry.paused) entry.p.pause();
        else if (!entry.held) {
          entry.p.resume();
          settle(message.id, entry);
        }
        return;
      case 'kill':
        try {
          entry?.p.kill(message.signal);
        } catch {
          // Already gone.
        }
        return;
      case 'sync':
        // The message and a readable master come out of the same poll; a second turn covers a
        // readiness reported in the next one. Then what was read is posted ahead of the reply.
        setImmediate(() =>
          setImmediate(() => {
            if (entry && process.platform === 'linux' && !entry.held && !entry.paused) pullPending(entry.p);
            if (entry) flushOne(message.id, entry);
            post({ t: 'synced', id: message.id, token: message.token });
          }),
        );
        return;
      case 'settle':
        if (!entry) return post({ t: 'synced', id: message.id, token: message.token });
        entry.settling.push(message.token);
        return settle(message.id, entry);
      case 'consumed':
        if (!entry) return;
        entry.ahead -= message.chars;
        if (entry.held && entry.ahead <= limit / 2) {
          entry.held = false;
          if (!entry.paused) {
            entry.p.resume();
            settle(message.id, entry);
          }
        }
        return;
    }
  });
}

class Pump {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly handles = new Map<number, PumpedPty>();
  private readonly spawning = new Map<number, { resolve: (p: PumpedPty) => void; reject: (error: Error) => void; spawnedAtMs: number }>();
  private broken: Error | null = null;
  /** Outstanding syncs: at most one per running probe of each terminal, all settled if the thread fails. */
  private readonly syncs = new Map<number, () => void>();
  private nextToken = 1;

  constructor(ptyPath: string) {
    // `__name` stands in for the helper some transpilers (tsx) add to named functions.
    const source = `var __name = (f) => f;\n${keepOutputAtExit.toString()}\n${pullPending.toString()}\n${pacedWrites.toString()}\n(${pumpMain.toString()})();`;
    this.worker = new Worker(source, {
      eval: true,
      workerData: {
        ptyPath,
        maxAheadChars,
        maxExitDrainBytes,
        maxRefusedWriteDelayMs,
        streaming: { chars: streamingChars, windowMs: streamingWindowMs, postMs: streamingPostMs },
      },
      resourceLimits: { maxYoungGenerationSizeMb: pumpYoungGenerationMiB },
    });
    this.worker.unref();
    this.worker.on('message', (message: FromPump) => this.onMessage(message));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the PTY thread stopped (exit code ${code})`)));
  }

  get usable(): boolean {
    return this.broken === null;
  }

  spawn(file: string, args: string[], opts: PtySpawnOptions): Promise<PtyProcess> {
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    const spawnedAtMs = Date.now();
    return new Promise<PtyProcess>((resolve, reject) => {
      this.spawning.set(id, { resolve, reject, spawnedAtMs });
      this.send({ t: 'spawn', id, file, args, opts });
    });
  }

  send(message: ToPump): void {
    if (!this.broken) this.worker.postMessage(message);
  }

  sync(id: number, kind: 'sync' | 'settle' = 'sync'): Promise<void> {
    if (this.broken) return Promise.resolve();
    const token = this.nextToken++;
    return new Promise<void>((resolve) => {
      this.syncs.set(token, resolve);
      this.send({ t: kind, id, token });
    });
  }

  private onMessage(message: FromPump): void {
    switch (message.t) {
      case 'spawned': {
        const spawning = this.spawning.get(message.id);
        if (!spawning) return;
        // POSIX only (Windows reads inline): node-pty knows the pid once spawn returns.
        const handle = new PumpedPty(this, message.id, new ChildPid(() => message.pid, spawning.spawnedAtMs), message.ptsName);
        this.handles.set(message.id, handle);
        this.worker.ref();
        spawning.resolve(handle);
        this.spawning.delete(message.id);
        return;
      }
      case 'failed':
        this.spawning.get(message.id)?.reject(new Error(message.message));
        this.spawning.delete(message.id);
        return;
      case 'data':
        this.handles.get(message.id)?.deliver(message.data);
        return;
      case 'synced':
        this.syncs.get(message.token)?.();
        this.syncs.delete(message.token);
        return;
      case 'exit': {
        const handle = this.handles.get(message.id);
        // Data that trails the exit still arrives for a while; the handle goes with the entry.
        setTimeout(() => this.handles.delete(message.id), 10_000).unref();
        handle?.exited(message.exitCode, message.signal);
        if (![...this.handles.values()].some((h) => !h.hasExited)) this.worker.unref();
        return;
      }
    }
  }

  private fail(error: Error): void {
    if (this.broken) return;
    this.broken = error;
    console.warn(`Tandem: the PTY thread failed (${error.message}); PTYs are read on the main thread from now on.`);
    for (const { reject } of this.spawning.values()) reject(error);
    this.spawning.clear();
    for (const resolve of this.syncs.values()) resolve();
    this.syncs.clear();
    // The PTYs went with the thread: their shells got SIGHUP.
    for (const handle of this.handles.values()) if (!handle.hasExited) handle.exited(1, 1);
    this.handles.clear();
  }
}

class PumpedPty implements PtyProcess {
  private readonly dataListeners: Array<(data: string) => void> = [];
  private readonly exitListeners: Array<(exit: { exitCode: number; signal: number }) => void> = [];
  private unreported = 0;
  hasExited = false;

  constructor(
    private readonly pump: Pump,
    private readonly id: number,
    private readonly child: ChildPid,
    readonly ptsName: string | undefined,
  ) {}

  get pid(): number {
    return this.child.pid;
  }

  get created(): CreatedWindow | null {
    return this.child.created;
  }

  onData(listener: (data: string) => void): void {
    this.dataListeners.push(listener);
  }

  onExit(listener: (exit: { exitCode: number; signal: number }) => void): void {
    this.exitListeners.push(listener);
  }

  deliver(data: string): void {
    for (const listener of this.dataListeners) listener(data);
    this.unreported += data.length;
    if (this.unreported >= consumedStepChars) {
      this.pump.send({ t: 'consumed', id: this.id, chars: this.unreported });
      this.unreported = 0;
    }
  }

  exited(exitCode: number, signal: number): void {
    this.hasExited = true;
    for (const listener of this.exitListeners) listener({ exitCode, signal });
  }

  release(): void {
    this.dataListeners.length = 0;
    this.exitListeners.length = 0;
  }

  write(data: string): void {
    this.pump.send({ t: 'write', id: this.id, data });
  }

  resize(cols: number, rows: number): void {
    this.pump.send({ t: 'resize', id: this.id, cols, rows });
  }

  pause(): void {
    this.pump.send({ t: 'pause', id: this.id });
  }

  resume(): void {
    this.pump.send({ t: 'resume', id: this.id });
  }

  kill(signal?: string): void {
    this.pump.send({ t: 'kill', id: this.id, ...(signal ? { signal } : {}) });
  }

  sync(): Promise<void> {
    return this.pump.sync(this.id);
  }

  settle(): Promise<void> {
    return this.pump.sync(this.id, 'settle');
  }
}

/** node-pty on the calling thread, behind the same interface. */
function inline(file: string, args: string[], opts: PtySpawnOptions): PtyProcess {
  const spawnedAtMs = Date.now();
  const p = pty.spawn(file, args, process.platform === 'win32' ? { ...opts, ...conptyOptions() } : opts);
  keepOutputAtExit(p, maxExitDrainBytes);
  pacedWrites(p, maxRefusedWriteDelayMs);
  return wrapNodePty(p, spawnedAtMs);
}

/** What {@link wrapNodePty} uses of node-pty's process (a fake one stands in for ConPTY in tests). */
export type NodePtyProcess = Pick<pty.IPty, 'pid' | 'onData' | 'onExit' | 'write' | 'resize' | 'pause' | 'resume' | 'kill'>;

/**
 * A node-pty process behind {@link PtyProcess}. Its pid is read from node-pty when asked, and at
 * every output and the exit until it is known: node-pty sets it (Windows) just before ConPTY's
 * first output, so the time it was first seen bounds when the shell was created.
 */
export function wrapNodePty(p: NodePtyProcess, spawnedAtMs: number, wallClock: () => number = Date.now): PtyProcess {
  const child = new ChildPid(() => p.pid, spawnedAtMs, wallClock);
  // Registered first: the pid is read before any other listener sees the output.
  p.onData(() => child.refresh());
  p.onExit(() => child.refresh());
  return {
    get pid() {
      return child.pid;
    },
    get created() {
      return child.created;
    },
    ptsName: (p as unknown as { ptsName?: string }).ptsName,
    onData: (listener) => void p.onData(listener),
    onExit: (listener) => void p.onExit(({ exitCode, signal }) => listener({ exitCode, signal: signal ?? 0 })),
    write: (data) => p.write(data),
    resize: (cols, rows) => p.resize(cols, rows),
    pause: () => p.pause(),
    resume: () => p.resume(),
    kill: (signal) => p.kill(signal),
    // Reads happen in this loop's poll phase: two turns of it see what the master held.
    sync: () =>
      new Promise<void>((resolve) =>
        setImmediate(() =>
          setImmediate(() => {
            if (process.platform === 'linux') pullPending(p);
            resolve();
          }),
        ),
      ),
  };
}

let pump: Pump | null = null;

function pumpThread(): Pump | null {
  if (process.platform === 'win32' || process.env.TANDEM_PTY_THREAD === '0') return null;
  if (pump?.usable) return pump;
  try {
    pump = new Pump(createRequire(import.meta.url).resolve('node-pty'));
  } catch {
    pump = null;
  }
  return pump;
}

/** Where this process reads its PTYs: on the pump thread, or inline on the main thread. */
export function ptyReader(): 'thread' | 'inline' {
  return pumpThread() ? 'thread' : 'inline';
}

/** Spawns `file` in a new PTY; rejects with node-pty's message when it cannot start. */
export async function spawnPty(file: string, args: string[], opts: PtySpawnOptions): Promise<PtyProcess> {
  const thread = pumpThread();
  if (!thread) return inline(file, args, opts);
  try {
    return await thread.spawn(file, args, opts);
  } catch (error) {
    // The thread itself failed (not the spawn): read this PTY inline.
    if (!thread.usable) return inline(file, args, opts);
    throw error;
  }
}
