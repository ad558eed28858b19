import { realpathSync, rmSync } from 'node:fs';
import { TandemError } from '../../../shared/errors.js';
import { DEFAULT_LIMITS } from '../../../shared/limits.js';
import type { ClosedBy, Evidence, LastCommand, Origin, SendResult, SignalName, TerminalStatus } from '../../../shared/types.js';
import type { PtyProcess } from '../../pty/pump.js';
import { hostPlatform, type PtyPlatform } from '../../pty/platform.js';
import { kernelCwd, sampleForeground } from '../../pty/proc.js';
import { Confinement, type SandboxRequest } from '../../sandbox/launch.js';
import type { SandboxInfo } from '../../sandbox/types.js';
import type { ResolvedShell } from '../../shells/resolve.js';
import { type Clock, systemClock } from '../../clock.js';
import { CommandMarks } from '../emulator/command-marks.js';
import { Emulator, type EmulatorSnapshot, screenTextOf } from '../emulator/emulator.js';
import { type CommandRecord, StreamHistory, type StreamPosition } from '../emulator/history.js';
import { LastCommandTracker } from '../readiness/last-command.js';
import { type MarkerEvent, MarkerScanner } from '../readiness/markers.js';
import { commandBegun, hasExited, initialReadiness, type ReadinessEvent, type ReadinessState, step, terminalStatus } from '../readiness/readiness.js';
import type { RedirectReport } from '../../shells/redirect-report.js';
import { andPast, probeLook, probeWaiting, takeBaseline, type ProbeBaseline, type ProbeTarget, type WaitEvidence } from '../readiness/probe.js';
import { OutputProjector } from '../projection/projection.js';
import { launchShell } from './launch.js';
import { PersonSpans, personNotice } from './person-spans.js';

/** Lines the agents' view keeps above its screen (person-spans.ts): the emulator's hot lines. */
const agentViewScrollback = 1000;
import { decodeCursor, encodeCursor } from './cursor.js';
import { type Observer, type ObserverHost, observe } from '../readiness/observer.js';
import { sendResult } from '../projection/result.js';
import { deliverSignal, interrupt, type InterruptTarget } from '../readiness/interrupt.js';
import { ProbeLoop } from '../readiness/probe-loop.js';
import { RedirectTracker } from '../readiness/redirect-tracker.js';
import { ExitDrain } from '../readiness/exit-drain.js';
import { Closing } from './close.js';
import { type EffectTarget, runEffects } from '../readiness/readiness-effects.js';
import { readTerminal } from '../emulator/screen-read.js';
import { removeHistoryDir } from '../../shells/rc-dir.js';
import { send, type SendWaitTarget, wait } from './send-wait.js';
import { canonicalRoom } from './line-room.js';
import { DrainFence, type FrontGroup } from './drain-fence.js';
import type { TtyModes } from '../../pty/termios.js';
import { CsiClamp } from '../emulator/csi-clamp.js';
import { awaitStartup } from '../readiness/startup.js';
import { clampInt, type CloseResult, type ReadRequest, type SendRequest, type SessionOptions, type TerminalRead, type WaitRequest } from './session-types.js';
import { cachedModes, StatusWatcher, watchMaxMsSpawning } from '../readiness/status-watcher.js';

/** Retained marker-free output for cursors and waits (characters). */
export const defaultHistoryChars = 4 * 1024 * 1024;
const bannerBytes = 4096;
/**
 * How long a reply waits when the shell is in front during a command (`replyReader` 'unsure'):
 * a shell back at its prompt prints its end marker first thing, well within it.
 */
const replyHoldMs = 100;
/** Characters of replies held at most while the markers are awaited (a builtin's questions are a few). */
const maxHeldReplyChars = 4096;
/**
 * Characters of answers one command gets in an agent terminal of a fencing shell (`fencedReply`),
 * again once it was seen reading past them: a TUI's questions at its start are a few hundred.
 * What a program never reads waits in the terminal for the prompt's drain, and this much sits
 * whole in the line mode's 4 KiB with room for the fence; a flood of questions piled megabytes
 * into the PTY's write queue (black-box round 14). What overflows is dropped, as a terminal
 * drops input past its buffer.
 */
const replyBudgetChars = 2048;
/**
 * Bytes of an agent's input a running program gets while it is not seen reading (`writeToProgram`;
 * again once it was, and for each command): what it leaves unread waits in the terminal and in
 * the PTY's write queue for the prompt's drain, which must empty it up to its fence (black-box
 * round 15 queued 3.5 MB behind a grep, past what bash's drain read in its time).
 */
const maxUnreadInputBytes = 256 * 1024;
/** How long the drain's fence waits for the terminal's echo to go off (`writeFence`). */
const fenceEchoWaitMs = 1000;

export type { CloseResult, ReadRequest, SendRequest, SessionOptions, TerminalRead, WaitRequest } from './session-types.js';

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
  /**
   * The terminal's workspace for the approval policy's file checks: the real path of the cwd at
   * open, resolved once (operands.ts never resolves it again).
   */
  readonly workspace: string;
  /** The variables the opener asked for (an agent's `terminal_open` env), and the whole environment the shell started with: the judge reads both. */
  readonly openEnv: Readonly<Record<string, string>>;
  launchEnv: Readonly<Record<string, string>> = {};
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
  private changedToolFiles: readonly string[] = [];
  private readonly emulator: Emulator;
  /** Where each command started and how it ended, from the integration's markers only (issue 29). */
  readonly marks: CommandMarks;
  /** What the person did under their lease, kept from the agent's reads unless they shared it. */
  readonly personSpans: PersonSpans;
  private readonly scanner: MarkerScanner;
  private readonly redirectTracker: RedirectTracker;
  private readonly history: StreamHistory;
  private readonly clock: Clock;
  private readonly platform: PtyPlatform;
  private readonly probeTarget: ProbeTarget;
  private readonly watcher: StatusWatcher;
  private readonly maxInputBytes: number;
  /** How long a send or wait that names no wait of its own waits. */
  private readonly defaultWaitMs: number;
  private readonly historyFile: string | null;
  private readonly rcDir: string;
  /** Agent terminals: the flag that makes the prompt empty unread input, and its fence (drain-fence.ts). */
  private fence = new DrainFence(null, false);
  /** Characters of answers written for the running command (`replyBudgetChars`). */
  private repliedChars = 0;
  /** Bytes of input written to the running program since it was last seen reading (`maxUnreadInputBytes`). */
  private unreadInputBytes = 0;
  private readonly csiClamp = new CsiClamp();
  /** Text sent through `send` sits on the shell's line unsubmitted (`takeAgentLine`). */
  private agentLeftLine = false;
  /** What `removeRcFiles` removes where bash keeps rcDir (launch.ts `LaunchedShell.rcFiles`). */
  private rcFiles: string[] | null = null;
  /** The readiness engine's state: changed only by `feed`. */
  private ready: ReadinessState;
  private prompts = 0;
  private readonly lastDone = new LastCommandTracker();
  private lastActivityAt: number;
  private readonly observers = new Set<Observer>();
  private readonly probes: ProbeLoop;
  private writeChain: Promise<void> = Promise.resolve();
  /** Writes started or queued and not settled: the next one waits for them (writeChain). */
  private writesPending = 0;
  /**
   * The foreground job's reads at the later of the last write to the PTY and the last result that
   * reported a program waiting (null: neither yet). A wait counts a read as waiting only past it:
   * not the read that input was written for (an interrupt's byte included), and not a read an
   * agent was already told about (a wait waits for the next event); but a read begun since, with
   * nothing printed (a program that began waiting after its send's bound), settles it at once.
   */
  private waitBaseline: ProbeBaseline | null = null;
  /**
   * Taken before a reply to the program's request (a cursor position) is written: a read counts
   * as waiting only once the reply was consumed. pwsh asks for the cursor position after each
   * command and reads the answer before its prompt runs; a reply slow to reach it (a loaded
   * machine) left it reading with nothing to print, and `echo still` came back `waiting_input`
   * in the full suite (issue 22). One per output chunk or look: a flood of requests costs no more samples.
   */
  private replyBaseline: ProbeBaseline | null = null;
  private replyBaselineDue = true;
  /** Replies waiting for the markers to say who reads them (`reply`). */
  private heldReplies: string[] = [];
  private heldChars = 0;
  /** Counts writes: a look that straddles one is stale (its baseline predates the write). */
  private writeGeneration = 0;
  /** Line ends written since the last prompt, and whether anything was written after the first (interrupt.ts `quietInput`). */
  private inputSincePrompt = { lineEnds: 0, after: false };
  private readonly outputListeners = new Set<(text: string) => void>();
  private readonly stateListeners = new Set<() => void>();
  private readonly readyWaiters: Array<(ok: boolean) => void> = [];
  private readonly drain: ExitDrain;
  private lastSettledAt: StreamPosition = { offset: 0, events: 0 };
  private readonly closing: Closing;
  private startupBanner: OutputProjector | null;
  private readonly observerHost: ObserverHost;
  private readonly effectTarget: EffectTarget;

  private constructor(
    opts: SessionOptions,
    id: string,
    secret: string,
    rcDir: string,
    historyFile: string | null,
    spawned: PtyProcess,
    confinement: Confinement | null,
  ) {
    this.id = id;
    this.origin = opts.origin;
    this.shell = opts.shell;
    this.integrationLevel = opts.shell.dialect?.integration ?? 'none';
    this.integration = this.integrationLevel !== 'none';
    this.ready = initialReadiness(this.integrationLevel);
    this.cwd = opts.cwd;
    this.workspace = opts.workspace ?? realPathOr(opts.cwd);
    this.openEnv = { ...(opts.env ?? {}) };
    this.cols = opts.cols ?? 120;
    this.rows = opts.rows ?? 32;
    this.clock = opts.clock ?? systemClock;
    this.platform = opts.platform ?? hostPlatform;
    this.observerHost = {
      clock: this.clock,
      observers: this.observers,
      position: () => this.history.position,
      settledAt: (position) => (this.lastSettledAt = position),
      result: (observer, status, evidence, command, exitCode, startedAt, position) => {
        // Told now: the next wait looks for a read after this one.
        if (status === 'waiting_input' && evidence !== 'continuation') this.waitBaseline = takeBaseline(this.probeTarget);
        return this.buildResult(observer.projector, observer.echo, status, evidence, command, exitCode, startedAt, position);
      },
      // A result that shows the screen (a full-screen program) reads the agents' view when there is one: brought up to date too.
      parsed: async () => {
        await this.emulator.parsed();
        await this.personSpans.agentBuffer();
      },
      handoff: (observer) => this.feed({ type: 'handoff' }, { observer }),
      bound: (observer) => this.feed({ type: 'bound' }, { observer }),
    };
    this.probes = new ProbeLoop({
      clock: this.clock,
      observers: this.observers,
      begun: () => commandBegun(this.ready),
      look: (observer) => this.look(observer),
      sync: () => this.pty.sync(),
    });
    this.redirectTracker = new RedirectTracker(this.clock, () => this.ready.lastEndSeq);
    this.drain = new ExitDrain(this.clock, () => this.finalizeExit());
    this.closing = new Closing({
      id,
      platform: this.platform,
      clock: this.clock,
      pty: spawned,
      ptyExited: () => this.ready.ptyExit !== null,
      finishExit: () => {
        if (this.ready.phase.kind !== 'exited') this.finalizeExit();
      },
      release: () => {
        // The PTY thread keeps an exited PTY's entry for 10 s of trailing output; without its
        // listeners that entry no longer holds this session (a churning agent's closed terminals).
        spawned.release?.();
        this.marks.dispose();
        this.personSpans.dispose();
        this.emulator.dispose();
        if (this.historyFile && !this.confinement) removeHistoryDir(this.historyFile);
        rmSync(this.rcDir, { recursive: true, force: true });
        this.confinement?.dispose();
      },
    });
    this.maxInputBytes = opts.maxInputBytes ?? DEFAULT_LIMITS.maxInputBytes;
    this.defaultWaitMs = opts.defaultWaitMs ?? DEFAULT_LIMITS.defaultWaitMs;
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
    this.history = new StreamHistory(opts.historyChars ?? defaultHistoryChars, undefined, this.clock);
    this.startupBanner = new OutputProjector({ maxBytes: bannerBytes });
    this.emulator = new Emulator({
      cols: this.cols,
      rows: this.rows,
      scrollback: opts.scrollback ?? DEFAULT_LIMITS.scrollbackLines,
      palette: opts.palette,
      clock: this.clock,
      // Replies go to the PTY (`reply`): caller input waits for the parser, so replies come first.
      onReply: (data) => this.reply(data),
    });
    this.marks = new CommandMarks(this.emulator);
    this.personSpans = new PersonSpans({
      cols: () => this.cols,
      rows: () => this.rows,
      scrollback: Math.min(opts.scrollback ?? DEFAULT_LIMITS.scrollbackLines, agentViewScrollback),
      serialize: () => ({ data: this.emulator.serialize(), offset: this.emulator.parsedOffset }),
      slice: (from, to) => this.history.slice(from, to),
      offset: () => this.history.offset,
    });
    this.probeTarget = {
      shellPid: spawned.pid,
      ttyPath: this.platform.ttyPath(spawned.pid, spawned.ptsName),
      procTier: (opts.procTier ?? true) && (this.platform.evidence ?? 'none') !== 'none',
      source: this.platform.evidence === 'ps' ? 'ps' : 'proc',
    };
    const modes = cachedModes(
      this.clock,
      () => this.platform.foregroundGroup(spawned.pid),
      (tty) => this.platform.ttyModes(tty),
    );
    this.watcher = new StatusWatcher({
      clock: this.clock,
      baseline: () => (this.shell.dialect?.backgroundReader ? takeBaseline(this.probeTarget) : null),
      // Evidence waits for output in flight, as the sends' does: the look's offset check then sees it.
      probe: async (baseline, quietMs) => {
        const evidence = await probeWaiting(this.probeTarget, this.pastReplies(baseline), quietMs, modes);
        if (evidence) await spawned.sync();
        return this.emulator.mustDrainBeforeInput ? null : evidence;
      },
      offset: () => this.history.offset,
      onChange: () => this.emitState(),
      maxIntervalMs: this.probeTarget.source === 'ps' ? watchMaxMsSpawning : undefined,
    });
    this.effectTarget = {
      observers: this.observers,
      history: this.history,
      lastDone: this.lastDone,
      probes: this.probes,
      watcher: this.watcher,
      drain: this.drain,
      startupDone: () => {
        this.banner = this.startupBanner?.snapshot().output ?? '';
        this.startupBanner = null;
        for (const resolve of this.readyWaiters.splice(0)) resolve(true);
      },
      startupFailed: () => {
        for (const resolve of this.readyWaiters.splice(0)) resolve(false);
      },
      integrationOff: () => (this.integration = false),
      emit: () => this.emitState(),
    };
    spawned.onData((data) => this.onData(data));
    spawned.onExit(({ exitCode, signal }) => this.onExit(exitCode, signal));
  }

  /** Spawns the shell and resolves once it is ready: a verified prompt for agent terminals. */
  static async start(opts: SessionOptions): Promise<TerminalSession> {
    const { id, secret, rcDir, rcFiles, historyFile, drainFlag, spawned, confinement, cols, rows, env } = await launchShell(opts);
    const session = new TerminalSession({ ...opts, cols, rows }, id, secret, rcDir, historyFile, spawned, confinement);
    session.launchEnv = env;
    session.rcFiles = rcFiles;
    session.fence = new DrainFence(drainFlag, Boolean(session.shell.dialect?.fencesDrain));
    // The shell deletes its rc files once read; this is the backstop. A person's terminal opens
    // on first output, which can come before the shell reads it (pwsh): keep them until then.
    const removeRc = () => session.removeRcFiles();
    // Waiting starts now: a confined shell can print its prompt while its pid is being found.
    const startup = session.awaitStartup(opts);
    startup.catch(() => {}); // awaited below; a rejection while the pid is found is not unhandled
    try {
      if (confinement) await session.adoptConfinedShell(confinement);
      await startup;
    } catch (error) {
      // The shell has ended: it exited, or a timeout, an abort or a failed confinement closed it.
      rmSync(rcDir, { recursive: true, force: true });
      if (historyFile && !confinement) removeHistoryDir(historyFile);
      throw error;
    }
    if (session.ready.phase.kind === 'starting') session.readyWaiters.push(removeRc);
    else removeRc();
    return session;
  }

  private awaitStartup(opts: SessionOptions): Promise<void> {
    return awaitStartup(
      {
        clock: this.clock,
        shellName: this.shell.name,
        onReady: (waiter) => void this.readyWaiters.push(waiter),
        onOutput: (listener) => this.onOutput(listener),
        starting: () => this.ready.phase.kind === 'starting',
        exitCode: () => this.ready.ptyExit?.exitCode ?? null,
        banner: () => this.banner,
        printed: () => this.startupBanner?.snapshot().output ?? '',
        close: () => this.close(),
        integrationTimedOut: () => {
          this.removeRcFiles();
          this.feed({ type: 'integration-timeout' });
        },
      },
      {
        timeoutMs: opts.startupTimeoutMs ?? DEFAULT_LIMITS.startupTimeoutMs,
        firstOutputMs: opts.firstOutputTimeoutMs,
        agent: opts.origin === 'agent',
        signal: opts.signal,
      },
    );
  }

  /**
   * The rc files, or the whole rc directory where the integration does not keep it. bash keeps
   * it for its scratch file (tandem.bash) while the shell may still run: removed then, another
   * user could make a directory of that name for the shell to write through. It goes at close.
   */
  private removeRcFiles(): void {
    if (!this.rcFiles) rmSync(this.rcDir, { recursive: true, force: true });
    else for (const file of this.rcFiles) rmSync(file, { force: true });
  }

  /** node-pty's child is bubblewrap: every shell-pid check must use the shell inside. */
  private async adoptConfinedShell(confinement: Confinement): Promise<void> {
    const shellPid = await confinement.shellPid(this.pty.pid, this.probeTarget.ttyPath);
    if (shellPid === null) {
      await this.close();
      const said = (this.startupBanner?.snapshot().output ?? '').trim().slice(0, 200) || 'bubblewrap exited';
      throw new TandemError('sandbox_unavailable', `The sandbox could not start the shell (${said}); set this agent's sandbox to off to open it unconfined.`);
    }
    this.shellPid = shellPid;
    this.probeTarget.shellPid = shellPid;
  }

  get pid(): number {
    // Unconfined, the shell is node-pty's child, whose pid Windows reports only once ConPTY connected.
    return this.confinement ? this.shellPid : this.pty.pid;
  }

  get status(): TerminalStatus {
    return terminalStatus(this.ready, Boolean(this.watcher.waiting));
  }

  /** The readiness phase: whether the shell's own line editor has the terminal (`idle`, `continuation`). */
  get phase(): ReadinessState['phase']['kind'] {
    return this.ready.phase.kind;
  }

  get exitCode(): number | null {
    const phase = this.ready.phase;
    return phase.kind === 'exited' ? phase.exitCode : null;
  }

  get closedBy(): ClosedBy {
    return this.closing.closedBy;
  }

  /** The report for the last command, waiting up to `waitMs` for it (bash sends it just after the end marker). */
  freshRedirects(waitMs: number): Promise<RedirectReport | null> {
    return this.redirectTracker.fresh(waitMs);
  }

  /** Aliases, functions and PATH change the shell reported at its last prompt; null if it reports none. */
  get redirects(): RedirectReport | null {
    return this.redirectTracker.current;
  }

  /** The exit code of the last command that ended at a prompt. */
  get lastCommandExitCode(): number | null {
    return this.lastDone.exitCode;
  }

  /** Workspace files the person's tools run on their own that this confined terminal changed (src/main/sandbox/tool-files.ts). */
  get toolFilesChanged(): readonly string[] {
    return this.changedToolFiles;
  }

  /** After each command: what it changed of `.envrc`, `.vscode/`, `.idea/`, each path once, bounded. */
  private noteToolFiles(): void {
    for (const path of this.confinement?.toolFiles?.changes() ?? []) {
      if (!this.changedToolFiles.includes(path) && this.changedToolFiles.length < 50) this.changedToolFiles = [...this.changedToolFiles, path];
    }
  }

  /** The last command that ended at a prompt, for the person's view. */
  get lastCommand(): LastCommand | null {
    return this.lastDone.value;
  }

  get cursor(): string {
    return this.encodeCursor(this.history.position);
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

  /** Whether a program in front reads the terminal now (its threads, sampled); null where that cannot be told (no /proc). */
  foregroundReadsTty(): boolean | null {
    const path = this.probeTarget.ttyPath;
    if (!path || !this.platform.processGroups) return null;
    const sample = sampleForeground(this.pid, path);
    return sample && sample.inspectable ? sample.threads.some((thread) => thread.watchesTty) : null;
  }

  /** Prompts the shell has drawn (each end marker, an empty Enter's too): a line submitted at a prompt has run by the next one. */
  get promptsSeen(): number {
    return this.prompts;
  }

  /** Total marker-free output characters so far: the offset of the next output. */
  get streamOffset(): number {
    return this.history.offset;
  }

  /**
   * terminal_read: lines of the screen and live scrollback (`offset`/`count` lines back from
   * the newest), or the output since a cursor; the newest text within `maxBytes`.
   */
  read(req: ReadRequest): Promise<TerminalRead> {
    return readTerminal(
      {
        clock: this.clock,
        emulator: this.emulator,
        history: this.history,
        rows: () => this.rows,
        decodeCursor: (cursor) => this.decodeCursor(cursor).offset,
        cursor: () => this.cursor,
        status: () => this.status,
        agentSlice: (from) => this.agentSlice(from),
        agentBuffer: () => this.personSpans.agentBuffer(),
      },
      req,
    );
  }

  /** Commands that ended since an output offset, with their exit codes (oldest first). */
  commandsSince(offset: number): CommandRecord[] {
    return this.history.commandsSince(offset);
  }

  /** Retained output in [from, to). */
  outputSince(from: number, to?: number): string {
    return this.history.slice(from, to);
  }

  /** Retained output in [from, to) as an agent may read it: the person's private leases become a notice. */
  agentSlice(from: number, to = this.history.position.offset): string {
    return this.personSpans.redactStream(from, to);
  }

  /** The serialized screen and scrollback at a parse boundary, and the output offset it covers. */
  snapshot(): Promise<EmulatorSnapshot> {
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
    // Requests in this output are answered after replies to earlier ones were consumed, maybe.
    this.replyBaselineDue = true;
    this.watcher.activity();
    this.drain.activity();
    for (const part of this.scanner.scan(data)) {
      if ('text' in part) this.onText(part.text);
      else this.onMarker(part.marker);
    }
  }

  /** A program's output, its looping counts bounded first (csi-clamp.ts): all that reads it sees the same. */
  private onText(raw: string): void {
    const text = this.csiClamp.filter(raw);
    if (text !== '') this.showText(text);
  }

  private showText(text: string): void {
    this.history.append(text);
    this.emulator.feed(text);
    if (this.ready.phase.kind === 'starting') this.startupBanner?.push(text);
    for (const observer of this.observers) {
      // Output still the person's (their program ran on after the hand-back) is not the agent's
      // call's: the result says that it was withheld, once, where it was.
      if (observer.collecting) {
        if (!this.personSpans.open) observer.projector.push(text);
        else if (!observer.withheld) {
          observer.withheld = true;
          observer.projector.push(`\r\n${personNotice}\r\n`);
        }
      }
      // New output races any waiting evidence sampled before it.
      observer.candidate = null;
    }
    for (const listener of this.outputListeners) listener(text);
  }

  /**
   * A protocol reply (a cursor position, device attributes, a DECRQSS or colour answer) goes to
   * the PTY only when something is there to read it (`replyReader`); where the shell is in front
   * during a command, it waits for the markers to say whether that is a builtin that asked
   * (`read`) or the shell back at its prompt. A held reply goes in order, ahead of later ones.
   */
  private reply(data: string): void {
    if (this.ready.ptyExit) return;
    if (this.heldReplies.length > 0) {
      // Bounded: a flood of questions answered while held adds nothing past maxHeldReplyChars.
      if (this.heldChars + data.length <= maxHeldReplyChars) {
        this.heldReplies.push(data);
        this.heldChars += data.length;
      }
      return;
    }
    if (this.fence.fenced && this.ready.phase.kind !== 'starting') return this.fencedReply(data);
    const reader = this.replyReader();
    if (reader === 'program') return this.writeReply(data);
    if (reader === 'unsure') {
      this.heldReplies.push(data);
      this.heldChars = data.length;
      this.clock.setTimeout(() => {
        const held = this.heldReplies.splice(0);
        this.heldChars = 0;
        if (this.replyReader() !== 'none') for (const reply of held) this.writeReply(reply);
      }, replyHoldMs);
    }
  }

  /**
   * An agent terminal of a fencing shell (bash, zsh): an answer goes while its command runs and
   * that command's prompt has not begun, as the drain flag's gate says (drain-fence.ts), within
   * the command's budget. With the shell's own group in front (a builtin that asked, or the
   * shell back at its prompt) it goes once the PTY's pending output was read, unless a P marker
   * came in it.
   */
  private fencedReply(data: string): void {
    if (this.repliedChars + data.length > replyBudgetChars) return;
    const phase = this.ready.phase;
    const gate = this.fence.gate(phase.kind === 'running' && phase.started, () => this.frontGroup());
    if (gate === 'write') return this.writeReply(data);
    if (gate === 'drop') return;
    this.heldReplies.push(data);
    this.heldChars = data.length;
    const command = this.fence.commands;
    const release = (go: boolean) => {
      const held = this.heldReplies.splice(0);
      this.heldChars = 0;
      if (!go || this.fence.commands !== command || this.fence.atPrompt) return;
      for (const reply of held) if (this.repliedChars + reply.length <= replyBudgetChars) this.writeReply(reply);
    };
    this.settled().then(
      () => release(true),
      () => release(false),
    );
  }

  /** Everything the PTY held now was read, through a pause (a flood's flow control): a P in it counts. */
  private settled(): Promise<void> {
    return this.pty.settle ? this.pty.settle() : this.pty.sync();
  }

  /** Who has the terminal: the shell's own group, a program's, or unknown (no /proc). */
  private frontGroup(): FrontGroup {
    if (this.platform.evidence !== 'proc') return 'unknown';
    const front = this.platform.foregroundGroup(this.pid);
    if (front === null) return 'unknown';
    return front === this.platform.shellGroup(this.pid) ? 'shell' : 'program';
  }

  private writeReply(data: string): void {
    if (this.ready.ptyExit) return;
    // Before the command read it, the program may end: the next prompt empties what it left.
    if (this.ready.phase.kind === 'running') this.fence.arm();
    this.repliedChars += data.length;
    if (this.replyBaselineDue) {
      this.replyBaseline = takeBaseline(this.probeTarget);
      this.replyBaselineDue = false;
    }
    this.pty.write(data);
    // The program reads the answer and goes on: its quiet period starts again, as after input.
    this.lastActivityAt = this.clock.now();
  }

  /**
   * Who would read a reply: a program that runs, a shell that starts or whose prompt asks
   * (`ShellDialect.promptAsks`), or nobody. At the prompt of any other shell the question came
   * from a program that has ended (the emulator parses behind the stream) or from one in the
   * background, and the answer's bytes would be keys to the line editor: readline takes ESC P
   * for a history search, and the agent's next keys then edited a recalled line unjudged
   * (black-box round 13). 'unsure': a command runs by the markers, but the shell's own group is
   * in front: a builtin that asked (`read`), or a command that ended before its end marker
   * came. Windows keeps them all: ConPTY asks too.
   */
  private replyReader(): 'program' | 'unsure' | 'none' {
    if (this.shell.dialect?.promptAsks || this.platform.os === 'win32' || this.ready.integration === 'none') return 'program';
    const phase = this.ready.phase;
    if (phase.kind === 'starting') return 'program';
    // Without a start marker (sh's end-only integration) a submitted line is the command running.
    if (phase.kind !== 'running' || !(phase.started || this.ready.integration === 'end-only')) return 'none';
    if (this.platform.evidence !== 'proc') return 'program';
    const front = this.platform.foregroundGroup(this.pid);
    return front !== null && front === this.platform.shellGroup(this.pid) ? 'unsure' : 'program';
  }

  /**
   * Whether text an agent typed without submitting still sits on the shell's line, taken once:
   * the person's next keys would complete it and run it unjudged (black-box round 9: the agent
   * typed `cp ../.ssh/id_rsa stolen; `, asked the person to run `git status`, and their Enter
   * ran both). Returns the keys that empty the line (the judge's own, line-clear.ts), to go
   * before the person's; '' when nothing was left, or the shell has no such keys (Windows).
   */
  takeAgentLine(): string {
    const left = this.agentLeftLine && (this.status === 'idle' || this.status === 'waiting_input');
    this.agentLeftLine = false;
    return left ? (this.shell.dialect?.lineClear(this.platform.os)?.keys ?? '') : '';
  }

  /**
   * The folder an end marker reports, or where the kernel holds the shell's process when that is
   * another folder (Linux, the POSIX shells, whose process is where their commands run): sh
   * reports its folder raw, and a BEL in a folder's name cut the report short (black-box round
   * 8: `.../d` shown for `.../d<BEL>x`); a folder renamed under the shell keeps its old name in
   * the report. A link in the reported path (a `cd` through one) is no difference.
   */
  private checkedCwd(reported: string): string {
    if (!this.shell.dialect?.processCwd) return reported;
    const kernel = kernelCwd(this.pid);
    if (!kernel || kernel.removed || kernel.path === reported) return reported;
    let real = reported;
    try {
      real = realpathSync(reported);
    } catch {
      // Gone or cut short: the kernel's is the one.
    }
    return real === kernel.path ? reported : kernel.path;
  }

  private onMarker(marker: MarkerEvent): void {
    switch (marker.kind) {
      case 'start':
        this.repliedChars = 0;
        this.marks.start(this.history.offset, marker.seq, marker.command);
        return this.feed({ type: 'start', seq: marker.seq }, { marker });
      case 'end':
        this.prompts += 1;
        this.inputSincePrompt = { lineEnds: 0, after: false };
        if (marker.cwd) this.cwd = this.checkedCwd(marker.cwd);
        // That prompt emptied what the program left (the integration empties before its end
        // marker), or found no flag: made since, it let nothing through (`writeToProgram`).
        this.fence.prompt();
        if (this.fence.armed) this.fence.disarm();
        this.agentLeftLine = false;
        this.noteToolFiles();
        this.marks.end(this.history.offset, marker.seq, marker.exitCode, marker.command);
        return this.feed({ type: 'end', seq: marker.seq, exitCode: marker.exitCode, closing: this.closing.pending }, { marker });
      case 'line':
        this.marks.line(this.history.offset, marker.seq, marker.command);
        return this.feed({ type: 'line', seq: marker.seq }, { marker });
      case 'redirects':
        return this.redirectTracker.seen(marker.seq, marker.report);
      case 'continuation':
        return this.feed({ type: 'continuation' }, { marker });
      case 'prompt':
        return this.fence.prompt();
      case 'fence':
        this.fence.prompt();
        return void this.writeFence(this.fence.fenceBytes());
    }
  }

  /**
   * The drain's fence (drain-fence.ts), behind everything written for the command; nothing of
   * the agent's can come between, as its next write waits for the end marker the drain prints
   * after it. Written once the terminal's echo is off (the drain's `read -s` began), at most
   * `fenceEchoWaitMs` later: echoed, the nonce showed in the command's output. The person's
   * keys typed meanwhile are emptied with the rest. The newline before the nonce is for the line
   * mode only: with it off (the drain reads raw), it goes, so a fence that comes after the drain
   * was cut short (a SIGINT to the shell at its prompt) submits nothing left on the line editor's
   * line (black-box round 17 saw an allowed line lose its first byte there).
   */
  private async writeFence(bytes: string): Promise<void> {
    const tty = this.probeTarget.ttyPath;
    const until = this.clock.now() + fenceEchoWaitMs;
    let modes: TtyModes | null = null;
    while (tty && this.clock.now() < until && !this.ready.ptyExit) {
      modes = await this.platform.ttyModes(tty);
      if (!modes || !modes.echo) break;
      await new Promise<void>((resolve) => this.clock.setTimeout(resolve, 1));
    }
    if (this.ready.ptyExit) return;
    this.pty.write(modes && !modes.icanon ? bytes.replace(/^\n/, '') : bytes);
  }

  /** The one place readiness changes: step the machine, then carry out what it decided. */
  private feed(event: ReadinessEvent, context: { marker?: MarkerEvent; observer?: Observer } = {}): void {
    const { state, effects } = step(this.ready, event);
    if (state.phase.kind === 'running' && this.ready.phase.kind !== 'running') {
      this.fence.began();
      this.unreadInputBytes = 0;
    }
    this.ready = state;
    runEffects(effects, this.effectTarget, this.clock.now(), context.marker, context.observer);
  }

  private onExit(exitCode: number, signal: number): void {
    this.feed({ type: 'pty-exit', exitCode, signal });
  }

  private finalizeExit(): void {
    this.drain.done();
    // The shell is gone: nothing writes its scratch file any more (its tab may stay a long while).
    rmSync(this.rcDir, { recursive: true, force: true });
    const rest = this.scanner.flush();
    if (rest) this.onText(rest);
    const cut = this.csiClamp.flush();
    if (cut) this.showText(cut);
    this.feed({ type: 'drained', closed: this.closing.closedBy !== null });
  }

  private emitState(): void {
    if (commandBegun(this.ready)) this.watcher.start();
    else this.watcher.stop();
    this.marks.waiting(this.history.offset, this.status === 'waiting_input');
    for (const listener of this.stateListeners) listener();
  }

  // ---- writes ------------------------------------------------------------------------------

  /**
   * An agent's input for the running program (not the shell's line), written as `write` does
   * once the drain flag's gate lets it (drain-fence.ts): the program may read part of it and end,
   * and the prompt empties the rest. Refused ('busy') where the command ended first: at the
   * prompt it would be a line nobody judged.
   */
  writeToProgram(data: string): Promise<void> {
    const bytes = Buffer.byteLength(data);
    if (this.unreadInputBytes + bytes > maxUnreadInputBytes) {
      return Promise.reject(
        new TandemError(
          'input_too_large',
          `The program has not been seen reading the ${this.unreadInputBytes} bytes already typed to it (at most ${maxUnreadInputBytes} wait unread); wait for it to read them (terminal_wait), or interrupt it.`,
        ),
      );
    }
    this.unreadInputBytes += bytes;
    if (!this.fence.fenced) {
      this.fence.arm();
      return this.write(data);
    }
    return this.write(data, async () => {
      const gate = this.fence.gate(this.ready.phase.kind === 'running', () => this.frontGroup());
      if (gate === 'sync') await this.settled();
      if (gate === 'drop' || this.fence.atPrompt || this.ready.phase.kind !== 'running') {
        throw new TandemError('busy', 'The command ended before the input was written; nothing was sent. Send it again: at the prompt it is a command line.');
      }
    });
  }

  /** Raw input (the person's typing, answers): ordered after pending protocol replies. */
  write(data: string, gate?: () => Promise<void>): Promise<void> {
    if (hasExited(this.ready)) {
      return Promise.reject(new TandemError('exited', 'The shell of this terminal has exited; open a new terminal.'));
    }
    if (Buffer.byteLength(data) > this.maxInputBytes) {
      return Promise.reject(
        new TandemError(
          'input_too_large',
          `Input of ${Buffer.byteLength(data)} bytes exceeds the ${this.maxInputBytes}-byte limit; send it in smaller parts or write it to a file.`,
        ),
      );
    }
    this.lastActivityAt = this.clock.now();
    this.watcher.activity();
    // Ctrl+C to a running command: its mark says interrupted if it then ends with an error.
    if (data.includes('\x03')) this.marks.interrupted();
    this.countInput(data);
    const body = async () => {
      if (this.emulator.mustDrainBeforeInput) await this.emulator.parsed();
      if (this.ready.ptyExit) throw new TandemError('exited', 'The shell of this terminal has exited; open a new terminal.');
      // Nothing may wait between the gate's last look and the write.
      if (gate) await gate();
      this.noteWrite();
      await this.platform.writeInput(
        data,
        (chunk) => this.pty.write(chunk),
        () => !this.ready.ptyExit,
        this.clock,
      );
    };
    // With nothing ahead of it, the write starts in this turn (the body runs up to its first
    // wait), so what the caller does after it overlaps the PTY's round trip; otherwise in order.
    const run = this.writesPending === 0 ? body() : this.writeChain.then(body);
    this.writesPending += 1;
    this.writeChain = run.then(
      () => void (this.writesPending -= 1),
      () => void (this.writesPending -= 1),
    );
    return run;
  }

  /** What `quietInput` reads: a CR, LF or CRLF ends a line; anything after the first line end is typed ahead. */
  private countInput(data: string): void {
    const seen = this.inputSincePrompt;
    for (let i = 0; i < data.length && !seen.after; i++) {
      const c = data.charCodeAt(i);
      if (c === 10 && i > 0 && data.charCodeAt(i - 1) === 13) continue;
      if (seen.lineEnds > 0) seen.after = true;
      else if (c === 13 || c === 10) seen.lineEnds = 1;
    }
  }

  /** Takes the write baseline and hands it to every call in flight that judges reads by it. */
  private noteWrite(): void {
    const baseline = takeBaseline(this.probeTarget);
    this.waitBaseline = baseline;
    this.writeGeneration += 1;
    // A command's own reads come after its start marker, which proves them post-write; every
    // other observer (input to a program, a wait) now needs a read after this write.
    for (const observer of this.observers) if (observer.mode !== 'command' || observer.baseline) observer.baseline = baseline;
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
    this.personSpans.resize(c, r);
    this.emitState();
  }

  // ---- sends and waits ----------------------------------------------------------------------

  /** Whether the foreground program waits for the terminal now (no proof of consumption needed). */
  async probeNow(): Promise<WaitEvidence | 'continuation' | null> {
    if (this.ready.phase.kind === 'continuation') return 'continuation';
    if (!commandBegun(this.ready)) return null;
    if (this.emulator.mustDrainBeforeInput) return null;
    return probeWaiting(this.probeTarget, this.pastReplies(null), this.clock.now() - this.lastActivityAt);
  }

  send(req: SendRequest): Promise<SendResult> {
    return send(this.sendWaitTarget(), req);
  }

  wait(req: WaitRequest): Promise<SendResult> {
    return wait(this.sendWaitTarget(), req);
  }

  private sendWaitTarget(): SendWaitTarget {
    return {
      clock: this.clock,
      writeToProgram: (data) => this.writeToProgram(data),
      agentLine: (left) => (this.agentLeftLine = left),
      history: this.history,
      agentSlice: (from, to) => this.agentSlice(from, to),
      probeTarget: this.probeTarget,
      waitBaseline: () => this.waitBaseline,
      dialect: this.shell.dialect,
      lineClear: this.shell.dialect?.lineClear(this.platform.os) ?? null,
      maxInputBytes: this.maxInputBytes,
      canonicalRoom: canonicalRoom(this.platform.os),
      ttyModes: () => (this.probeTarget.ttyPath ? this.platform.ttyModes(this.probeTarget.ttyPath) : Promise.resolve(null)),
      defaultWaitMs: this.defaultWaitMs,
      readiness: () => this.ready,
      assertUsable: () => this.assertUsable(),
      probeNow: () => this.probeNow(),
      observe: (spec) => observe(this.observerHost, { ...spec, waitMs: spec.waitMs ?? this.defaultWaitMs }),
      feed: (event) => this.feed(event),
      write: (data) => this.write(data),
      kick: () => this.probes.kick(),
      decodeCursor: (cursor) => this.decodeCursor(cursor),
      lastSettled: () => this.lastSettledAt,
      settledAt: (position) => (this.lastSettledAt = position),
      result: (projector, status, evidence, command, exitCode, startedAt, position) =>
        this.buildResult(projector, null, status, evidence, command, exitCode, startedAt, position),
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
    position: StreamPosition,
  ): SendResult {
    const ctx = {
      screenText: () => {
        const view = this.personSpans.viewNow;
        return view ? screenTextOf(view) : this.emulator.screenText();
      },
      cwd: this.cwd,
      origin: this.origin,
      closedBy: this.closing.closedBy,
      cursor: () => this.encodeCursor(position),
      now: () => this.clock.now(),
    };
    const result = sendResult(ctx, projector, echo, status, evidence, command, exitCode, startedAt);
    // A confined command that failed on a path the sandbox refuses says so, so the agent does not retry blindly.
    const note = this.confinement && status === 'done' && exitCode !== null && exitCode !== 0 ? this.confinement.explain(result.output, result.cwd) : null;
    return note ? { ...result, sandbox: note } : result;
  }

  private encodeCursor(position: StreamPosition): string {
    return encodeCursor(this.id, position);
  }

  private decodeCursor(cursor: string): StreamPosition {
    return decodeCursor(this.id, cursor, this.history.position, (offset) => this.history.positionAt(offset));
  }

  /** `baseline`, and past the last reply written to the program; the next reply takes a new baseline. */
  private pastReplies(baseline: ProbeBaseline | null): ProbeBaseline | null {
    this.replyBaselineDue = true;
    return andPast(baseline, this.replyBaseline);
  }

  /** One probe of one observer, fed to the readiness engine with the output offsets around it. */
  private async look(observer: Observer): Promise<number | null> {
    const sampledAt = this.history.offset;
    const generation = this.writeGeneration;
    const { evidence, quietDueMs } = await probeLook(this.probeTarget, this.pastReplies(observer.baseline), this.clock.now() - this.lastActivityAt);
    // A write during the look: its evidence may be the read the write was meant for.
    if (generation !== this.writeGeneration) return quietDueMs;
    // Seen reading past what was written (pastReplies): it took it, the budgets are whole again.
    if (evidence) {
      this.repliedChars = 0;
      this.unreadInputBytes = 0;
    }
    // A confirming look: what the program printed before it waited (bash's end marker and
    // prompt, say) may still be on its way from the PTY thread; it counts before the silence does.
    if (evidence && observer.candidate) await this.pty.sync();
    if (!this.observers.has(observer)) return quietDueMs;
    // A program blocked on a request to the terminal (pwsh asks for the cursor position after a
    // native command) waits for the emulator's answer; a loaded main thread only delays it.
    const awaitingReply = this.emulator.mustDrainBeforeInput;
    this.feed({ type: 'evidence', evidence, sampledAt, offset: this.history.offset, candidate: observer.candidate, awaitingReply }, { observer });
    return quietDueMs;
  }

  /**
   * Interrupts the foreground program: a real SIGINT to its process group, or `\x03` as a byte
   * when it has the terminal in raw mode (ssh, editors), escalating if nothing happens.
   */
  async interrupt(): Promise<void> {
    this.assertUsable();
    this.marks.interrupted();
    return interrupt(this.interruptTarget());
  }

  /** terminal_signal: SIGINT interrupts; others go to the foreground group, never SIGKILL to the shell. */
  async signal(name: SignalName): Promise<void> {
    this.assertUsable();
    if (name === 'SIGINT') return this.interrupt();
    return deliverSignal(this.interruptTarget(), name);
  }

  private interruptTarget(): InterruptTarget {
    return {
      pid: this.pid,
      platform: this.platform,
      clock: this.clock,
      ttyPath: this.probeTarget.ttyPath,
      readiness: () => this.ready,
      interrupting: () => this.feed({ type: 'interrupt' }),
      write: (data) => this.write(data),
      probeNow: () => this.probeNow(),
      quietInput: () => this.inputSincePrompt.lineEnds === 1 && !this.inputSincePrompt.after,
      gone: () => this.closing.pending || this.ready.ptyExit !== null,
      onStateChange: (listener) => this.onStateChange(listener),
    };
  }

  private assertUsable(): void {
    if (hasExited(this.ready)) {
      throw new TandemError('exited', 'The shell of this terminal has exited; open a new terminal.');
    }
    if (this.closing.pending) throw new TandemError('not_found', 'This terminal is closing.');
  }

  /** Tears the whole process tree down; a failed close can be retried. `by` is told to waiters. */
  close(by: ClosedBy = null): Promise<CloseResult> {
    return this.closing.close(by);
  }
}

/** A path's real path now, or the path as given when it cannot be resolved. */
function realPathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
