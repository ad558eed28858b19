import { rmSync } from 'node:fs';
import { TandemError } from '../../shared/errors.js';
import { DEFAULT_LIMITS } from '../../shared/limits.js';
import type { ClosedBy, Evidence, LastCommand, Origin, SendResult, SignalName, TerminalStatus } from '../../shared/types.js';
import type { PtyProcess } from '../pty/pump.js';
import { hostPlatform, type PtyPlatform } from '../pty/platform.js';
import { Confinement, type SandboxRequest } from '../sandbox/launch.js';
import type { SandboxInfo } from '../sandbox/types.js';
import type { ResolvedShell } from '../shells/resolve.js';
import { type Clock, sleep, systemClock } from './clock.js';
import { Emulator } from './emulator.js';
import { type CommandRecord, StreamHistory } from './history.js';
import { bracketedPaste, encodeKeys } from './keys.js';
import { LastCommandTracker } from './last-command.js';
import { type MarkerEvent, MarkerScanner } from './markers.js';
import { type Candidate, commandBegun, hasExited, initialReadiness, type ReadinessEvent, type ReadinessState, type SettleScope, step } from './readiness.js';
import type { RedirectReport } from './redirect-report.js';
import { probeWaiting, takeBaseline, type ProbeBaseline, type ProbeTarget, type WaitEvidence } from './probe.js';
import { OutputProjector, stripEcho } from './projection.js';
import { launchShell } from './launch.js';
import { clampInt, type CloseResult, type SendRequest, type SessionOptions, type TerminalRead, type WaitRequest } from './session-types.js';
import { cachedModes, StatusWatcher } from './status-watcher.js';

export const defaultStartupTimeoutMs = 10_000;
/** Retained marker-free output for cursors and waits (characters). */
export const defaultHistoryChars = 4 * 1024 * 1024;
const bannerBytes = 4096;
const probeFirstIntervalMs = 10;
const probeMaxIntervalMs = 100;
const exitDrainQuietMs = 25;
const exitDrainMaxMs = 500;
const interruptEscalateMs = 1000;
/** How long an interrupt waits for a just-submitted command's start marker. */
const interruptStartWaitMs = 5000;

export type { CloseResult, SendRequest, SessionOptions, TerminalRead, WaitRequest } from './session-types.js';

type ObserverMode = 'command' | 'input' | 'follow';

interface Observer {
  mode: ObserverMode;
  command: string | null;
  /** Settles on a real end marker with at least this sequence number. */
  minEndSeq: number;
  /** Output is collected from the command's start marker (or from the write, without one). */
  collecting: boolean;
  projector: OutputProjector;
  echo: string | null;
  baseline: ProbeBaseline | null;
  candidate: Candidate | null;
  finish: (status: SendResult['status'], evidence: Evidence, end?: { exitCode: number | null; command: string | null }) => void;
}

/**
 * One terminal: a shell in a PTY, the headless emulator that answers its protocol requests,
 * the marker scanner and readiness state, and the output projection of what commands print.
 */
export class TerminalSession {
  readonly id: string;
  readonly origin: Origin;
  readonly shell: ResolvedShell;
  readonly integrationLevel: 'full' | 'end-only' | 'none';
  integration: boolean;
  cwd: string | null;
  /** The cwd at open: the terminal's workspace for the approval policy's file checks. */
  readonly workspace: string;
  cols: number;
  rows: number;
  banner = '';

  private readonly pty: PtyProcess;
  /** The shell's own pid: node-pty's child is bubblewrap when confined. */
  private shellPid: number;
  readonly sandbox: SandboxInfo | null;
  readonly sandboxRequest: SandboxRequest | null;
  /** The cwd at open: a confined terminal's workspace, kept across a reset. */
  readonly openedIn: string;
  private readonly confinement: Confinement | null;
  private readonly emulator: Emulator;
  private readonly scanner: MarkerScanner;
  private redirectReport: RedirectReport | null = null;
  private redirectSeq = -1;
  private readonly redirectWaiters = new Set<() => void>();
  private readonly history: StreamHistory;
  private readonly clock: Clock;
  private readonly platform: PtyPlatform;
  private readonly probeTarget: ProbeTarget;
  private readonly watcher: StatusWatcher;
  private readonly maxInputBytes: number;
  private readonly historyFile: string | null;
  private readonly rcDir: string;
  /** The readiness engine's state: changed only by `feed`. */
  private ready: ReadinessState;
  private readonly lastDone = new LastCommandTracker();
  private lastActivityAt: number;
  private readonly observers = new Set<Observer>();
  private probeTimer: ReturnType<typeof setTimeout> | null = null;
  private probeIntervalMs = probeFirstIntervalMs;
  private probing = false;
  private writeChain: Promise<void> = Promise.resolve();
  private readonly outputListeners = new Set<(text: string) => void>();
  private readonly stateListeners = new Set<() => void>();
  private readonly readyWaiters: Array<(ok: boolean) => void> = [];
  private exitTimer: ReturnType<typeof setTimeout> | null = null;
  private exitStartedAt = 0;
  private lastCursorOffset = 0;
  private closing: Promise<CloseResult> | null = null;
  /** Who closed the terminal, when it did not exit by itself. */
  private closer: ClosedBy = null;
  private startupBanner: OutputProjector | null;

  private constructor(opts: SessionOptions, id: string, secret: string, rcDir: string, historyFile: string | null, spawned: PtyProcess, confinement: Confinement | null) {
    this.id = id;
    this.origin = opts.origin;
    this.shell = opts.shell;
    this.integrationLevel = opts.shell.dialect?.integration ?? 'none';
    this.integration = this.integrationLevel !== 'none';
    this.ready = initialReadiness(this.integrationLevel);
    this.cwd = opts.cwd;
    this.workspace = opts.cwd;
    this.cols = opts.cols ?? 120;
    this.rows = opts.rows ?? 32;
    this.clock = opts.clock ?? systemClock;
    this.platform = opts.platform ?? hostPlatform;
    this.maxInputBytes = opts.maxInputBytes ?? DEFAULT_LIMITS.maxInputBytes;
    this.historyFile = historyFile;
    this.rcDir = rcDir;
    this.lastActivityAt = this.clock.now();
    this.pty = spawned;
    this.shellPid = spawned.pid;
    this.confinement = confinement;
    this.sandbox = confinement?.info ?? null;
    this.sandboxRequest = opts.sandbox ?? null;
    this.openedIn = opts.cwd;
    this.scanner = new MarkerScanner(secret);
    this.history = new StreamHistory(opts.historyChars ?? defaultHistoryChars);
    this.startupBanner = new OutputProjector({ maxBytes: bannerBytes });
    this.emulator = new Emulator({
      cols: this.cols,
      rows: this.rows,
      scrollback: opts.scrollback ?? DEFAULT_LIMITS.scrollbackLines,
      palette: opts.palette,
      // Replies go straight to the PTY: caller input waits for the parser, so replies come first.
      onReply: (data) => {
        if (!this.ready.ptyExit) this.pty.write(data);
      },
    });
    this.probeTarget = {
      shellPid: spawned.pid,
      ttyPath: this.platform.ttyPath(spawned.pid, spawned.ptsName),
      procTier: (opts.procTier ?? true) && this.platform.procfs,
    };
    const modes = cachedModes(this.clock, () => this.platform.foregroundGroup(spawned.pid), (tty) => this.platform.ttyModes(tty));
    this.watcher = new StatusWatcher({
      clock: this.clock,
      baseline: () => (this.shell.dialect?.backgroundReader ? takeBaseline(this.probeTarget) : null),
      probe: (baseline, quietMs) => probeWaiting(this.probeTarget, baseline, quietMs, modes),
      offset: () => this.history.offset,
      onChange: () => this.emitState(),
    });
    spawned.onData((data) => this.onData(data));
    spawned.onExit(({ exitCode, signal }) => this.onExit(exitCode, signal));
  }

  /** Spawns the shell and resolves once it is ready: a verified prompt for agent terminals. */
  static async start(opts: SessionOptions): Promise<TerminalSession> {
    const { id, secret, rcDir, historyFile, spawned, confinement, cols, rows } = await launchShell(opts);
    const session = new TerminalSession({ ...opts, cols, rows }, id, secret, rcDir, historyFile, spawned, confinement);
    // The shell deletes its rc directory once read; this is the backstop. A person's terminal
    // opens on first output, which can come before the shell reads it (pwsh): keep it until then.
    const removeRc = () => rmSync(rcDir, { recursive: true, force: true });
    // Waiting starts now: a confined shell can print its prompt while its pid is being found.
    const startup = session.awaitStartup(opts);
    startup.catch(() => {}); // awaited below; a rejection while the pid is found is not unhandled
    try {
      if (confinement) await session.adoptConfinedShell(confinement);
      await startup;
    } catch (error) {
      removeRc();
      throw error;
    }
    if (session.ready.phase.kind === 'starting') session.readyWaiters.push(removeRc);
    else removeRc();
    return session;
  }

  private async awaitStartup(opts: SessionOptions): Promise<void> {
    const timeoutMs = opts.startupTimeoutMs ?? defaultStartupTimeoutMs;
    const agent = opts.origin === 'agent';
    // Aborted while the PTY was being spawned.
    if (opts.signal?.aborted) {
      await this.close();
      throw opts.signal.reason;
    }
    const outcome = await new Promise<'ready' | 'timeout' | 'aborted' | 'exited' | 'output'>((resolve) => {
      const timer = this.clock.setTimeout(() => resolve('timeout'), timeoutMs);
      const onAbort = () => resolve('aborted');
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const done = (value: 'ready' | 'exited' | 'output') => {
        this.clock.clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      this.readyWaiters.push((ok) => done(ok ? 'ready' : 'exited'));
      // A person's terminal opens on first output, whatever the startup files do.
      if (!agent) {
        const first = () => {
          this.outputListeners.delete(first);
          done('output');
        };
        this.outputListeners.add(first);
      }
    });
    if (outcome === 'ready' || outcome === 'output') {
      if (outcome === 'output' && this.ready.phase.kind === 'starting') this.watchIntegrationDeadline(timeoutMs);
      return;
    }
    if (outcome === 'exited') {
      const code = this.ready.ptyExit?.exitCode ?? null;
      throw new TandemError('exited', `The shell exited during startup (exit code ${code}): ${this.banner.slice(0, 200) || 'no output'}.`);
    }
    await this.close();
    if (outcome === 'aborted') throw opts.signal?.reason ?? new Error('aborted');
    const lastLine = (this.startupBanner?.snapshot().output ?? '').split('\n').filter(Boolean).at(-1)?.slice(0, 300);
    throw new TandemError(
      'startup_timeout',
      `The ${this.shell.name} shell did not show a verified prompt within ${timeoutMs} ms; its startup files may block or replace the integration${lastLine ? ` (it last printed: ${lastLine})` : ''}.`,
    );
  }

  private watchIntegrationDeadline(timeoutMs: number): void {
    const timer = this.clock.setTimeout(() => {
      rmSync(this.rcDir, { recursive: true, force: true });
      this.feed({ type: 'integration-timeout' });
    }, timeoutMs);
    this.readyWaiters.push(() => this.clock.clearTimeout(timer));
  }

  /** node-pty's child is bubblewrap: every shell-pid check must use the shell inside. */
  private async adoptConfinedShell(confinement: Confinement): Promise<void> {
    const shellPid = await confinement.shellPid(this.pty.pid);
    if (shellPid === null) {
      await this.close();
      const said = (this.startupBanner?.snapshot().output ?? '').trim().slice(0, 200) || 'bubblewrap exited';
      throw new TandemError('sandbox_unavailable', `The sandbox could not start the shell (${said}); set this agent's sandbox to off to open it unconfined.`);
    }
    this.shellPid = shellPid;
    this.probeTarget.shellPid = shellPid;
  }

  get pid(): number {
    return this.shellPid;
  }

  get status(): TerminalStatus {
    switch (this.ready.phase.kind) {
      case 'starting':
        return 'starting';
      case 'idle':
        return 'idle';
      case 'exited':
        return 'exited';
      case 'continuation':
        return 'waiting_input';
      case 'running':
        return this.watcher.waiting ? 'waiting_input' : 'running';
    }
  }

  get exitCode(): number | null {
    const phase = this.ready.phase;
    return phase.kind === 'exited' ? phase.exitCode : null;
  }

  get closedBy(): ClosedBy {
    return this.closer;
  }

  /** The exit code of the last command that ended at a prompt. */
  /** Aliases, functions and PATH change the shell reported at its last prompt; null if it reports none. */
  /** The report for the last command, waiting up to `waitMs` for it (bash sends it just after the end marker). */
  async freshRedirects(waitMs: number): Promise<RedirectReport | null> {
    if (!this.redirectReport || this.redirectSeq >= this.ready.lastEndSeq) return this.redirects;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.clock.clearTimeout(timer);
        this.redirectWaiters.delete(wake);
        resolve();
      };
      const wake = () => {
        if (this.redirectSeq >= this.ready.lastEndSeq) done();
      };
      const timer = this.clock.setTimeout(done, waitMs);
      this.redirectWaiters.add(wake);
    });
    return this.redirects;
  }

  get redirects(): RedirectReport | null {
    const report = this.redirectReport;
    // Not yet reported for the last command that ended (bash reports just after its end marker).
    return report && this.redirectSeq < this.ready.lastEndSeq ? { ...report, incomplete: true } : report;
  }

  get lastCommandExitCode(): number | null {
    return this.lastDone.exitCode;
  }

  /** The last command that ended at a prompt, for the person's view. */
  get lastCommand(): LastCommand | null {
    return this.lastDone.value;
  }

  get cursor(): string {
    return this.encodeCursor(this.history.offset);
  }

  /** Marker-free output for attachments (the secret never leaves the host). */
  onOutput(listener: (text: string) => void): () => void {
    this.outputListeners.add(listener);
    return () => this.outputListeners.delete(listener);
  }

  onStateChange(listener: () => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  get screen(): { text: string; row: number; col: number; altScreen: boolean } {
    return { text: this.emulator.screenText(), ...this.emulator.cursor(), altScreen: this.emulator.altScreen };
  }

  /** Total marker-free output characters so far: the offset of the next output. */
  get streamOffset(): number {
    return this.history.offset;
  }

  /**
   * terminal_read: lines of the screen and live scrollback (`offset`/`count` lines back from
   * the newest), or the output since a cursor; the newest text within `maxBytes`.
   */
  async read(req: { since?: string; offset?: number; count?: number; maxBytes?: number }): Promise<TerminalRead> {
    // Let the screen catch up with what arrived, but never wait out a flood.
    await Promise.race([this.emulator.drained(), sleep(this.clock, 200)]);
    const maxBytes = clampInt(req.maxBytes, DEFAULT_LIMITS.defaultOutputBytes, 1, DEFAULT_LIMITS.maxOutputBytes);
    const buffer = this.emulator.terminal.buffer.active;
    const totalLines = buffer.length;
    let lineEnd = totalLines;
    let lineBegin: number;
    let lines: string[] = [];
    if (req.since !== undefined) {
      const projector = new OutputProjector({ maxBytes });
      projector.push(this.history.slice(this.decodeCursor(req.since)));
      lines = projector.snapshot().output.split('\n');
      lineBegin = lineEnd = totalLines;
    } else {
      lineEnd = Math.max(0, totalLines - (req.offset ?? 0));
      lineBegin = Math.max(0, lineEnd - (req.count ?? this.rows));
      for (let y = lineBegin; y < lineEnd; y++) lines.push(buffer.getLine(y)?.translateToString(true) ?? '');
      // Keep the newest lines within the byte bound.
      let bytes = 0;
      let keep = lines.length;
      while (keep > 0 && bytes + Buffer.byteLength(lines[keep - 1]!) + 1 <= maxBytes) bytes += Buffer.byteLength(lines[--keep]!) + 1;
      lineBegin += keep;
      lines = lines.slice(keep);
    }
    return {
      text: lines.join('\n'),
      lineBegin,
      lineEnd,
      totalLines,
      cursor: this.cursor,
      screen: { ...this.emulator.cursor(), altScreen: this.emulator.altScreen },
      status: this.status,
    };
  }

  /** Commands that ended since an output offset, with their exit codes (oldest first). */
  commandsSince(offset: number): CommandRecord[] {
    return this.history.commandsSince(offset);
  }

  /** Retained output in [from, to). */
  outputSince(from: number, to?: number): string {
    return this.history.slice(from, to);
  }

  /** The serialized screen and scrollback at a parse boundary, and the output offset it covers. */
  snapshot(): Promise<{ data: string; offset: number }> {
    return this.emulator.snapshot();
  }

  /** Resolves when the emulator has applied everything received so far. */
  drained(): Promise<void> {
    return this.emulator.drained();
  }

  get headless(): Emulator {
    return this.emulator;
  }

  // ---- the data path -------------------------------------------------------------------

  private onData(data: string): void {
    this.lastActivityAt = this.clock.now();
    this.watcher.activity();
    if (this.exitTimer) this.rearmExitDrain();
    for (const part of this.scanner.scan(data)) {
      if ('text' in part) this.onText(part.text);
      else this.onMarker(part.marker);
    }
  }

  private onText(text: string): void {
    this.history.append(text);
    this.emulator.feed(text);
    if (this.ready.phase.kind === 'starting') this.startupBanner?.push(text);
    for (const observer of this.observers) {
      if (observer.collecting) observer.projector.push(text);
      // New output races any waiting evidence sampled before it.
      observer.candidate = null;
    }
    for (const listener of this.outputListeners) listener(text);
  }

  private onMarker(marker: MarkerEvent): void {
    switch (marker.kind) {
      case 'start':
        return this.feed({ type: 'start', seq: marker.seq }, { marker });
      case 'end':
        if (marker.cwd) this.cwd = marker.cwd;
        return this.feed({ type: 'end', seq: marker.seq, exitCode: marker.exitCode, closing: this.closing !== null }, { marker });
      case 'line':
        return this.feed({ type: 'line', seq: marker.seq }, { marker });
      case 'redirects':
        this.redirectSeq = Math.max(this.redirectSeq, marker.seq);
        if (marker.report) this.redirectReport = marker.report;
        for (const wake of [...this.redirectWaiters]) wake();
        return;
      case 'continuation':
        return this.feed({ type: 'continuation' }, { marker });
    }
  }

  /** The one place readiness changes: step the machine, then carry out what it decided. */
  private feed(event: ReadinessEvent, context: { marker?: MarkerEvent; observer?: Observer } = {}): void {
    const { state, effects } = step(this.ready, event);
    this.ready = state;
    const marker = context.marker;
    const now = this.clock.now();
    for (const effect of effects) {
      switch (effect.kind) {
        case 'settle': {
          const end = effect.exitCode !== undefined ? { exitCode: effect.exitCode, command: effect.fromMarker && marker?.kind === 'end' ? marker.command : null } : undefined;
          for (const observer of this.scoped(effect.scope, context.observer)) observer.finish(effect.status, effect.evidence, end);
          break;
        }
        case 'collect':
          for (const observer of this.observers) {
            if (!observer.collecting && effect.seq >= observer.minEndSeq) {
              observer.collecting = true;
              observer.command ??= marker?.kind === 'start' ? marker.command : null;
            }
          }
          break;
        case 'record-start':
          if (marker?.kind !== 'start') break;
          this.history.record(marker, now);
          this.lastDone.start(effect.seq, marker.command);
          break;
        case 'record-end':
          if (marker?.kind !== 'end') break;
          this.lastDone.end(effect.seq, marker.exitCode, marker.command);
          this.history.record({ ...marker, seq: effect.seq }, now);
          break;
        case 'record-line':
          if (marker?.kind !== 'line') break;
          this.history.attachCommand(effect.seq, marker.command);
          this.lastDone.line(effect.seq, marker.command);
          break;
        case 'record-continuation':
          if (marker) this.history.record(marker, now);
          break;
        case 'startup-done':
          this.banner = this.startupBanner?.snapshot().output ?? '';
          this.startupBanner = null;
          for (const resolve of this.readyWaiters.splice(0)) resolve(true);
          break;
        case 'startup-failed':
          for (const resolve of this.readyWaiters.splice(0)) resolve(false);
          break;
        case 'integration-off':
          this.integration = false;
          break;
        case 'kick-probe':
          this.kickProbe();
          break;
        case 'probe-sooner':
          this.probeIntervalMs = probeFirstIntervalMs;
          break;
        case 'stop-probe':
          if (this.probeTimer) this.clock.clearTimeout(this.probeTimer);
          this.probeTimer = null;
          break;
        case 'candidate':
          if (context.observer) context.observer.candidate = effect.value;
          break;
        case 'adopt':
          this.watcher.adopt(effect.evidence);
          break;
        case 'drain':
          this.exitStartedAt = now;
          // Output can lag the exit event: drain before reporting `exited`.
          this.rearmExitDrain();
          break;
        case 'emit':
          this.emitState();
          break;
      }
    }
  }

  private scoped(scope: SettleScope, observer: Observer | undefined): Observer[] {
    switch (scope.kind) {
      case 'all':
        return [...this.observers];
      case 'through':
        return [...this.observers].filter((candidate) => scope.seq >= candidate.minEndSeq);
      case 'prompt':
        return [...this.observers].filter((candidate) => candidate.mode !== 'follow' || scope.follows);
      case 'this':
        return observer ? [observer] : [];
    }
  }

  private onExit(exitCode: number, signal: number): void {
    this.feed({ type: 'pty-exit', exitCode, signal });
  }

  private rearmExitDrain(): void {
    if (this.exitTimer) this.clock.clearTimeout(this.exitTimer);
    const left = exitDrainMaxMs - (this.clock.now() - this.exitStartedAt);
    this.exitTimer = this.clock.setTimeout(() => this.finalizeExit(), Math.max(0, Math.min(exitDrainQuietMs, left)));
  }

  private finalizeExit(): void {
    this.exitTimer = null;
    const rest = this.scanner.flush();
    if (rest) this.onText(rest);
    this.feed({ type: 'drained', closed: this.closer !== null });
  }

  private emitState(): void {
    if (commandBegun(this.ready)) this.watcher.start();
    else this.watcher.stop();
    for (const listener of this.stateListeners) listener();
  }

  // ---- writes ------------------------------------------------------------------------------

  /** Raw input (the person's typing, answers): ordered after pending protocol replies. */
  write(data: string): Promise<void> {
    if (hasExited(this.ready)) {
      return Promise.reject(new TandemError('exited', 'The shell of this terminal has exited; open a new terminal.'));
    }
    if (Buffer.byteLength(data) > this.maxInputBytes) {
      return Promise.reject(new TandemError('input_too_large', `Input of ${Buffer.byteLength(data)} bytes exceeds the ${this.maxInputBytes}-byte limit; send it in smaller parts or write it to a file.`));
    }
    this.lastActivityAt = this.clock.now();
    this.watcher.activity();
    const run = this.writeChain.then(async () => {
      if (this.emulator.mustDrainBeforeInput) await this.emulator.parsed();
      if (this.ready.ptyExit) throw new TandemError('exited', 'The shell of this terminal has exited; open a new terminal.');
      await this.platform.writeInput(data, (chunk) => this.pty.write(chunk), () => !this.ready.ptyExit, this.clock);
    });
    this.writeChain = run.catch(() => undefined);
    return run;
  }

  /** Flow control: stop reading the PTY (the program blocks on a full buffer) and go on. */
  pause(): void {
    if (!this.ready.ptyExit) this.pty.pause();
  }

  resume(): void {
    if (!this.ready.ptyExit) this.pty.resume();
  }

  resize(cols: number, rows: number): void {
    const c = clampInt(cols, this.cols, 2, DEFAULT_LIMITS.maxCols);
    const r = clampInt(rows, this.rows, 2, DEFAULT_LIMITS.maxRows);
    if (this.ready.ptyExit) return;
    this.cols = c;
    this.rows = r;
    this.pty.resize(c, r);
    this.emulator.resize(c, r);
    this.emitState();
  }

  // ---- sends and waits ----------------------------------------------------------------------

  /** Whether the foreground program waits for the terminal now (no proof of consumption needed). */
  async probeNow(): Promise<WaitEvidence | 'continuation' | null> {
    if (this.ready.phase.kind === 'continuation') return 'continuation';
    if (!commandBegun(this.ready)) return null;
    return probeWaiting(this.probeTarget, null, this.clock.now() - this.lastActivityAt);
  }

  async send(req: SendRequest): Promise<SendResult> {
    this.assertUsable();
    const text = req.text ?? '';
    const keys = req.keys ? encodeKeys(req.keys) : '';
    if (!text && !keys) throw new TandemError('invalid_argument', 'text or keys is required.');
    const submit = req.submit ?? (req.text !== undefined && !req.keys);
    let mode: ObserverMode;
    if (this.ready.phase.kind === 'starting') throw new TandemError('busy', 'The terminal is still starting; wait for it and send again.');
    if (this.ready.phase.kind === 'idle' && text) mode = 'command';
    else if (this.ready.phase.kind === 'running' && !req.input && !(await this.probeNow())) {
      throw new TandemError('busy', 'A command is running and not waiting for input; wait for it, interrupt it, or pass input: true to type into it.');
    } else mode = 'input';

    let payload: string;
    const multiline = /[\r\n]/.test(text.replace(/[\r\n]+$/, ''));
    const body = text.replace(/[\r\n]+$/, '');
    if (mode === 'command' && (multiline || /[\t\x00-\x08\x0b-\x1f]/.test(body)) && this.shell.dialect?.bracketedPaste) {
      payload = bracketedPaste(body) + (submit ? '\r' : '');
    } else {
      payload = body.replace(/\r?\n/g, '\r') + (submit ? '\r' : '');
    }
    payload += keys;
    if (Buffer.byteLength(payload) > this.maxInputBytes) {
      throw new TandemError('input_too_large', `Input of ${Buffer.byteLength(payload)} bytes exceeds the ${this.maxInputBytes}-byte limit; send it in smaller parts or write it to a file.`);
    }
    const endOnly = this.integrationLevel === 'end-only';
    const phase = this.ready.phase;
    const running = phase.kind === 'running' ? phase.seq : null;
    const minEndSeq = mode === 'input' && running !== null ? running : this.ready.lastStartSeq + 1;
    // Finishing a continued line is a command: its output starts at its start marker, after
    // the shell's redraw of the line.
    const completesLine = phase.kind === 'continuation' && !endOnly;
    const collectFromWrite = (mode === 'input' && !completesLine) || endOnly;
    const observer = this.observe({
      mode,
      command: mode === 'command' ? body : null,
      minEndSeq,
      collecting: collectFromWrite,
      echo: collectFromWrite ? body : null,
      // After its own start marker a new command's reads are post-write by construction;
      // input to a running program, and shells without start markers, need proof of consumption.
      baseline: mode === 'command' && !endOnly && !this.shell.dialect?.backgroundReader ? null : takeBaseline(this.probeTarget),
      waitMs: req.waitMs,
      maxOutputBytes: req.maxOutputBytes,
      signal: req.signal,
      handoff: req.handoff,
    });
    // Submitted: a second command now gets `busy`, not typed into the same line.
    this.feed({ type: 'write', command: mode === 'command' && submit });
    this.write(payload).catch((error: unknown) => observer.reject(error));
    this.kickProbe();
    return observer.promise;
  }

  async wait(req: WaitRequest): Promise<SendResult> {
    const from = req.since !== undefined ? this.decodeCursor(req.since) : this.lastCursorOffset;
    const maxOutputBytes = clampInt(req.maxOutputBytes, DEFAULT_LIMITS.defaultOutputBytes, 1, DEFAULT_LIMITS.maxOutputBytes);
    // A command that ended after the cursor settles the wait at once.
    const events = this.history.eventsSince(from);
    const end = events.find((event) => event.marker.kind === 'end');
    if (end && end.marker.kind === 'end') {
      const start = events.find((event) => event.marker.kind === 'start' && event.offset <= end.offset);
      const projector = new OutputProjector({ maxBytes: maxOutputBytes });
      projector.push(this.history.slice(start ? start.offset : from, end.offset));
      this.lastCursorOffset = end.offset;
      return this.buildResult(projector, null, 'done', 'marker', end.marker.command, end.marker.exitCode, this.clock.now(), end.offset);
    }
    const phase = this.ready.phase;
    if (phase.kind === 'exited') {
      const projector = new OutputProjector({ maxBytes: maxOutputBytes });
      projector.push(this.history.slice(from));
      return this.buildResult(projector, null, 'exited', 'exit', null, phase.exitCode, this.clock.now(), this.history.offset);
    }
    const running = commandBegun(this.ready);
    const observer = this.observe({
      mode: 'follow',
      command: null,
      minEndSeq: running && phase.kind === 'running' && phase.seq !== null ? phase.seq : this.ready.lastStartSeq + 1,
      collecting: running || this.integrationLevel !== 'full',
      echo: null,
      // Unseen output since the cursor: a program that waits now settles the wait at once.
      baseline: from < this.history.offset ? null : takeBaseline(this.probeTarget),
      waitMs: req.waitMs,
      maxOutputBytes,
      signal: req.signal,
      handoff: req.handoff,
    });
    if (observer.collecting) observer.projectorPush(this.history.slice(from));
    if (phase.kind === 'continuation' && from < this.history.offset) observer.settle('waiting_input', 'continuation');
    this.kickProbe();
    return observer.promise;
  }

  private observe(spec: {
    mode: ObserverMode;
    command: string | null;
    minEndSeq: number;
    collecting: boolean;
    echo: string | null;
    baseline: ProbeBaseline | null;
    waitMs: number | undefined;
    maxOutputBytes: number | undefined;
    signal: AbortSignal | undefined;
    handoff: AbortSignal | undefined;
  }) {
    const startedAt = this.clock.now();
    const waitMs = clampInt(spec.waitMs, DEFAULT_LIMITS.defaultWaitMs, 0, DEFAULT_LIMITS.maxWaitMs);
    const maxOutputBytes = clampInt(spec.maxOutputBytes, DEFAULT_LIMITS.defaultOutputBytes, 1, DEFAULT_LIMITS.maxOutputBytes);
    let resolvePromise!: (result: SendResult) => void;
    let rejectPromise!: (error: unknown) => void;
    const promise = new Promise<SendResult>((resolve, reject) => {
      resolvePromise = resolve;
      rejectPromise = reject;
    });
    let settled = false;
    const cleanup = () => {
      settled = true;
      this.observers.delete(observer);
      this.clock.clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
      spec.handoff?.removeEventListener('abort', onHandoff);
    };
    const observer: Observer = {
      mode: spec.mode,
      command: spec.command,
      minEndSeq: spec.minEndSeq,
      collecting: spec.collecting,
      projector: new OutputProjector({ maxBytes: maxOutputBytes }),
      echo: spec.echo,
      baseline: spec.baseline,
      candidate: null,
      finish: (status, evidence, end) => {
        if (settled) return;
        cleanup();
        const offset = this.history.offset;
        this.lastCursorOffset = offset;
        const command = observer.command ?? end?.command ?? null;
        const exitCode = status === 'done' || status === 'exited' ? (end?.exitCode ?? null) : null;
        const finishNow = () => resolvePromise(this.buildResult(observer.projector, observer.echo, status, evidence, command, exitCode, startedAt, offset));
        // Full-screen programs are read from the screen: let the emulator catch up first.
        if (observer.projector.altScreen) void this.emulator.parsed().then(finishNow);
        else finishNow();
      },
    };
    const onAbort = () => {
      if (settled) return;
      cleanup();
      rejectPromise(spec.signal?.reason ?? new Error('aborted'));
    };
    const onHandoff = () => this.feed({ type: 'handoff' }, { observer });
    const timer = this.clock.setTimeout(() => this.feed({ type: 'bound' }, { observer }), waitMs);
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    spec.handoff?.addEventListener('abort', onHandoff, { once: true });
    this.observers.add(observer);
    if (spec.signal?.aborted) onAbort();
    else if (spec.handoff?.aborted) onHandoff();
    return {
      promise,
      get collecting() {
        return observer.collecting;
      },
      projectorPush: (text: string) => observer.projector.push(text),
      settle: (status: SendResult['status'], evidence: Evidence) => observer.finish(status, evidence),
      reject: (error: unknown) => {
        if (settled) return;
        cleanup();
        rejectPromise(error);
      },
    };
  }

  private buildResult(
    projector: OutputProjector,
    echo: string | null,
    status: SendResult['status'],
    evidence: Evidence,
    command: string | null,
    exitCode: number | null,
    startedAt: number,
    offset: number,
  ): SendResult {
    const projected = projector.snapshot();
    let output = projected.altScreen ? this.emulator.screenText() : projected.output;
    if (echo) {
      // With echo off (a password), only the Enter shows: the line the input ended.
      const echoed = output.startsWith(echo.split(/\r?\n/)[0] ?? '');
      output = stripEcho(output, echo);
      if (!echoed && output.startsWith('\n')) output = output.slice(1);
    }
    return {
      status,
      evidence,
      command,
      exitCode,
      cwd: this.cwd,
      output,
      truncated: projected.truncated,
      cursor: this.encodeCursor(offset),
      control: this.origin === 'agent' ? 'agent' : 'user',
      handoff: null,
      approval: null,
      closedBy: status === 'exited' ? this.closer : null,
      durationMs: Math.round(this.clock.now() - startedAt),
    };
  }

  private encodeCursor(offset: number): string {
    return `${this.id.slice(0, 6)}.${offset}`;
  }

  private decodeCursor(cursor: string): number {
    const match = /^([\w-]{1,6})\.(\d+)$/.exec(cursor);
    if (!match || match[1] !== this.id.slice(0, 6) || Number(match[2]) > this.history.offset) {
      throw new TandemError('invalid_argument', `since "${cursor}" is not a cursor of this terminal; pass the cursor of an earlier result.`);
    }
    return Number(match[2]);
  }

  // ---- waiting detection --------------------------------------------------------------------

  private kickProbe(): void {
    this.probeIntervalMs = probeFirstIntervalMs;
    if (this.probeTimer) {
      this.clock.clearTimeout(this.probeTimer);
      this.probeTimer = null;
    }
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.probeTimer || this.observers.size === 0 || !commandBegun(this.ready)) return;
    this.probeTimer = this.clock.setTimeout(() => {
      this.probeTimer = null;
      void this.runProbe();
    }, this.probeIntervalMs);
  }

  private async runProbe(): Promise<void> {
    if (this.probing || !commandBegun(this.ready)) return;
    this.probing = true;
    try {
      for (const observer of [...this.observers]) {
        const sampledAt = this.history.offset;
        const evidence = await probeWaiting(this.probeTarget, observer.baseline, this.clock.now() - this.lastActivityAt);
        if (!this.observers.has(observer)) continue;
        this.feed({ type: 'evidence', evidence, sampledAt, offset: this.history.offset, candidate: observer.candidate }, { observer });
      }
    } finally {
      this.probing = false;
    }
    this.probeIntervalMs = Math.min(probeMaxIntervalMs, Math.ceil(this.probeIntervalMs * 1.5));
    this.scheduleProbe();
  }

  // ---- signals and teardown -------------------------------------------------------------------

  /**
   * Interrupts the foreground program: a real SIGINT to its process group, or `\x03` as a byte
   * when it has the terminal in raw mode (ssh, editors), escalating if nothing happens.
   */
  async interrupt(): Promise<void> {
    this.assertUsable();
    // A Ctrl+C written before the shell took the line reaches its line editor (which drops it
    // or cancels the line) or waits in the input queue behind the command: wait for the start.
    if (this.ready.phase.kind === 'running' && !this.ready.phase.started) await this.untilStarted(interruptStartWaitMs);
    const fg = this.platform.foregroundGroup(this.pid);
    const shellPgrp = this.platform.shellGroup(this.pid);
    const modes = this.probeTarget.ttyPath ? await this.platform.ttyModes(this.probeTarget.ttyPath) : null;
    // The command to escalate against: the running one, or the one whose start is still due.
    const phase = this.ready.phase;
    const running = phase.kind === 'running';
    const seq = phase.kind !== 'running' ? null : phase.started ? phase.seq : this.ready.lastStartSeq + 1;
    if (!fg || fg === shellPgrp || (modes && !modes.isig)) {
      // Raw-mode programs (editors, ssh) take Ctrl+C as a key and decide themselves.
      await this.write('\x03');
      // A command the shell runs itself (a pwsh cmdlet, a bash loop) gets the key once more if
      // nothing happened: pwsh drops a Ctrl+C that lands between its start marker and the start
      // of the pipeline, and there is no other process to signal.
      // Windows has no foreground group to check: the same command still running is the test.
      if (running && ((fg && fg === shellPgrp) || !this.platform.processGroups)) this.escalate(fg, seq, () => void this.write('\x03').catch(() => {}));
      return;
    }
    this.platform.signalGroup(fg, 'SIGINT');
    this.escalate(fg, seq, () => this.platform.signalGroup(fg, 'SIGTERM'));
  }

  private untilStarted(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        off();
        this.clock.clearTimeout(timer);
        resolve();
      };
      const off = this.onStateChange(() => {
        if (this.ready.phase.kind !== 'running' || this.ready.phase.started) done();
      });
      const timer = this.clock.setTimeout(done, ms);
    });
  }

  /**
   * Escalates only if nothing happened: the same job still runs and has not gone back to
   * waiting for input (a REPL that caught SIGINT and prompts again is left alone).
   */
  private escalate(pgid: number | null, seq: number | null, then: () => void): void {
    const stuck = async () =>
      this.ready.phase.kind === 'running' && this.ready.phase.seq === seq && (pgid === null || this.platform.foregroundGroup(this.pid) === pgid) && !(await this.probeNow());
    this.clock.setTimeout(async () => {
      if (!this.closing && !this.ready.ptyExit && (await stuck())) then();
    }, interruptEscalateMs);
  }

  /** terminal_signal: SIGINT interrupts; others go to the foreground group, never SIGKILL to the shell. */
  async signal(name: SignalName): Promise<void> {
    this.assertUsable();
    if (name === 'SIGINT') return this.interrupt();
    if (!this.platform.processGroups) throw new TandemError('invalid_argument', `${name} cannot be delivered on Windows; only SIGINT (as Ctrl+C) is supported.`);
    const fg = this.platform.foregroundGroup(this.pid);
    const shellPgrp = this.platform.shellGroup(this.pid);
    if (!fg || fg === shellPgrp) {
      if (name === 'SIGKILL') throw new TandemError('forbidden', 'SIGKILL of the shell itself is refused; close the terminal instead.');
      process.kill(this.pid, name);
      return;
    }
    this.platform.signalGroup(fg, name);
  }

  private assertUsable(): void {
    if (hasExited(this.ready)) {
      throw new TandemError('exited', 'The shell of this terminal has exited; open a new terminal.');
    }
    if (this.closing) throw new TandemError('not_found', 'This terminal is closing.');
  }

  /** Tears the whole process tree down; a failed close can be retried. `by` is told to waiters. */
  close(by: ClosedBy = null): Promise<CloseResult> {
    if (!this.ready.ptyExit) this.closer ??= by;
    this.closing ??= this.teardown().then((result) => {
      if (result.orphans.length > 0) this.closing = null;
      return result;
    });
    return this.closing;
  }

  private async teardown(): Promise<CloseResult> {
    const { orphans } = await this.platform.teardown({ rootPid: this.pty.pid, terminalId: this.id });
    if (!this.ready.ptyExit) {
      try {
        this.pty.kill();
      } catch {
        // Already gone.
      }
    }
    if (!this.ready.ptyExit) {
      await new Promise<void>((resolve) => {
        const timer = this.clock.setTimeout(resolve, 1000);
        this.pty.onExit(() => {
          this.clock.clearTimeout(timer);
          resolve();
        });
      });
    }
    if (this.ready.phase.kind !== 'exited') this.finalizeExit();
    if (orphans.length === 0) {
      this.emulator.dispose();
      if (this.historyFile && !this.confinement) rmSync(this.historyFile, { force: true });
      rmSync(this.rcDir, { recursive: true, force: true });
      this.confinement?.dispose();
    }
    return { closed: orphans.length === 0, orphans };
  }
}
