import type { TerminalPort } from './terminal-port.js';
import { type WindowsPtyInfo, windowsPtyInfo } from '../pty/win-pty.js';
import type { SnapshotMarks } from '../../shared/command-marks.js';
import { hostPlatform } from '../pty/platform.js';
import { homedir } from 'node:os';
import { TandemError } from '../../shared/errors.js';
import { DEFAULT_LIMITS, type Limits } from '../../shared/limits.js';
import type { ShellCandidate, TerminalView } from '../../shared/contract.js';
import type { ClosedBy, Origin } from '../../shared/types.js';
import { discoverShells, readShellVersionsAhead, type DiscoveredShell } from '../shells/discovery.js';
import type { StartupFiles } from '../shells/dialect.js';
import { resolveShell, shellName, type ResolvedShell } from '../shells/resolve.js';
import { type Clock, systemClock } from '../clock.js';
import type { SandboxRequest } from '../sandbox/launch.js';
import { TerminalSession, type SessionOptions } from '../terminal/session/session.js';
import type { Attachment, FrameSink } from './attachment.js';
import { type FlowOptions, ManagedTerminal, type TerminalMeta } from './managed-terminal.js';
import { SettingsStore } from './settings-store.js';
import type { TerminalRecorder } from '../record/recorder.js';
import type { RecordingStore } from '../record/store.js';
import { saveEveryMs, TranscriptStore } from './transcripts.js';
import { tandemVersion } from '../version.js';

export interface HostOptions {
  limits?: Partial<Limits>;
  /** Path of instance.json, exported to shells as TANDEM_INSTANCE. */
  instancePath?: string | null;
  /** The one setting for agent terminals' startup files (every dialect). */
  agentStartupFiles?: StartupFiles;
  env?: NodeJS.ProcessEnv;
  home?: string;
  procTier?: boolean;
  clock?: Clock;
  version?: string;
  flow?: FlowOptions;
  /** The person's settings (theme, scrollback of new terminals); in memory when not given. */
  settings?: SettingsStore;
  /** Where terminals are recorded (src/main/record); none when not given. */
  recordings?: RecordingStore;
  /** Closed tabs kept as transcripts, persisted in the state directory (runtime.ts); in memory when not given. */
  transcripts?: TranscriptStore;
}

export interface CreateRequest {
  shell?: string;
  cwd?: string;
  title?: string;
  cols?: number;
  rows?: number;
  env?: Record<string, string>;
  origin?: Origin;
  agent?: string | null;
  signal?: AbortSignal;
  sandbox?: SandboxRequest;
  /** An agent's open: the workspace's real path as its approval decided it (open-workspace.ts). */
  workspace?: string;
}

/** Who asked for a terminal's close, as the host was told (the record of every removal). */
export type CloseCause = 'ui' | 'agent' | 'unattended' | 'shutdown' | 'host';

/** One terminal removed from the host: which, whose, and who asked. */
export interface CloseRecord {
  at: number;
  id: string;
  title: string;
  origin: Origin;
  agent: string | null;
  cause: CloseCause;
  /** The UI client that asked (cause `ui`). */
  clientId: string | null;
}

/** Removals kept in `closeLog` (newest last). */
export const closeLogSize = 64;

/** The longest an agent's close of its terminal waits for bash's report of the command that just ended. */
const closeLineWaitMs = 3000;

/**
 * The one service facade: every terminal, its limits, viewers and control. It does not care
 * which process it lives in (Electron's main process, `tandem serve`, a test).
 */
/**
 * What the agent layer may ask of the host (issue 25): the roster, opening and closing, and each
 * terminal only through its `TerminalPort`, never the session, control or metadata behind it.
 */
export interface AgentHost {
  readonly limits: Limits;
  readonly settings: SettingsStore;
  readonly homeDir: string;
  environment(): ReturnType<TerminalHost['environment']>;
  list(): TerminalView[];
  has(id: string): boolean;
  port(id: string): TerminalPort;
  openForAgent(req: CreateRequest): Promise<TerminalPort>;
  close(
    id: string,
    by?: ClosedBy,
    cause?: { cause: CloseCause; clientId?: string },
  ): Promise<{ closed: boolean; orphans: Array<{ pid: number; comm: string }> }>;
  onRemoved(listener: (id: string) => void): () => void;
  setAgentConnected(id: string, connected: boolean): void;
  setAgentPresence(presence: (name: string) => boolean): void;
  setAgentDirectory(resolve: (name: string) => string | null): void;
  handToAgent(id: string, agent: string | null): TerminalView;
}

export class TerminalHost implements AgentHost {
  readonly limits: Limits;
  readonly settings: SettingsStore;
  private readonly terminals = new Map<string, ManagedTerminal>();
  private readonly recorders = new Map<string, TerminalRecorder>();
  private pendingCreates = 0;
  private readonly rosterListeners = new Set<(terminals: TerminalView[]) => void>();
  private readonly removedListeners = new Set<(id: string) => void>();
  private rosterScheduled = false;
  private readonly clock: Clock;
  private readonly env: NodeJS.ProcessEnv;
  private readonly home: string;
  private shuttingDown = false;
  private agentDirectory: ((name: string) => string | null) | null = null;
  /**
   * The latest removals with their cause, bounded. Every terminal that leaves the roster is here
   * (a terminal an agent still held that vanished is found by its record); with
   * TANDEM_DEBUG_CLOSE=1 each one is also written to stderr with the caller's stack.
   */
  readonly closeLog: CloseRecord[] = [];
  /** Closed terminals' tabs, read-only until the person dismisses them; never visible to agents (not in `list`). */
  readonly transcripts: TranscriptStore;
  private saveTimer: ReturnType<typeof setTimeout> | null = null;
  /** What each live tab's last save covered (output offset, title, status, cwd): unchanged tabs are not written again. */
  private readonly savedAs = new Map<string, string>();

  constructor(private readonly opts: HostOptions = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.clock = opts.clock ?? systemClock;
    this.env = opts.env ?? process.env;
    this.home = opts.home ?? homedir();
    this.settings = opts.settings ?? new SettingsStore(null);
    this.transcripts = opts.transcripts ?? new TranscriptStore({ dir: null, clock: this.clock, keepHours: () => this.settings.get().transcriptKeepHours });
    this.transcripts.onChange = this.changed;
    // A shorter keep time applies at once, not at the next sweep.
    this.settings.onChange(() => void this.transcripts.sweep());
    // Only a host with a state directory writes live tabs for a crash.
    if (opts.transcripts) this.scheduleSave();
    // bash and zsh versions (which of several binaries is which) are read now, off the event loop.
    void readShellVersionsAhead(this.env).catch(() => undefined);
  }

  /** The person's home: the default cwd of new terminals. */
  get homeDir(): string {
    return this.home;
  }

  get version(): string {
    return this.opts.version ?? tandemVersion;
  }

  environment(): {
    platform: string;
    home: string;
    defaultShell: ShellCandidate | null;
    shells: ShellCandidate[];
    version: string;
    windowsPty?: WindowsPtyInfo;
  } {
    const found = discoverShells(this.env);
    const candidate = (shell: DiscoveredShell): ShellCandidate => ({
      name: shell.name,
      path: shell.path,
      integration: shell.dialect !== null,
      ...(shell.label ? { label: shell.label } : {}),
    });
    return {
      platform: hostPlatform.os,
      home: this.home,
      defaultShell: found.defaultShell ? candidate(found.defaultShell) : null,
      shells: found.shells.map(candidate),
      version: this.version,
      ...(windowsPtyInfo() ? { windowsPty: windowsPtyInfo() } : {}),
    };
  }

  /** The live terminals (what agents may see, filtered by the agent layer). */
  list(): TerminalView[] {
    return [...this.terminals.values()].map((terminal) => terminal.view());
  }

  /** The person's tabs: the live terminals, then the transcripts. */
  roster(): TerminalView[] {
    return [...this.list(), ...this.transcripts.views()];
  }

  get(id: string): ManagedTerminal {
    const terminal = this.terminals.get(id);
    if (!terminal) throw new TandemError('not_found', `No terminal with id "${id}"; list the terminals to see the current ones.`);
    return terminal;
  }

  has(id: string): boolean {
    return this.terminals.has(id);
  }

  /** Calls `listener` with the id of each terminal closed and gone from the roster. */
  onRemoved(listener: (id: string) => void): () => void {
    this.removedListeners.add(listener);
    return () => this.removedListeners.delete(listener);
  }

  /** Whole-set roster updates, coalesced once per event-loop turn; built only while someone listens. */
  onRoster(listener: (terminals: TerminalView[]) => void): () => void {
    this.rosterListeners.add(listener);
    return () => this.rosterListeners.delete(listener);
  }

  /** Whether an agent of this name has a live session (the agent layer says, `setAgentPresence`). */
  private agentPresence: (name: string) => boolean = () => false;

  setAgentPresence(presence: (name: string) => boolean): void {
    this.agentPresence = presence;
  }

  /** The agent layer's door into terminal `id` (terminal-port.ts); `not_found` when there is none. */
  port(id: string): TerminalPort {
    return this.get(id).ops;
  }

  /** Opens a terminal for an agent and gives back its port. */
  async openForAgent(req: CreateRequest): Promise<TerminalPort> {
    return (await this.createManaged(req)).ops;
  }

  /** Whether an agent's session is live for this terminal, as the agent layer sees it. */
  setAgentConnected(id: string, connected: boolean): void {
    const terminal = this.get(id);
    if (terminal.meta.agentConnected === connected) return;
    terminal.meta.agentConnected = connected;
    this.changed();
  }

  private changed = (): void => {
    if (this.rosterScheduled || this.rosterListeners.size === 0) return;
    this.rosterScheduled = true;
    setImmediate(() => {
      this.rosterScheduled = false;
      const roster = this.roster();
      for (const listener of this.rosterListeners) listener(roster);
    });
  };

  private sessionOptions(req: CreateRequest, shell: ResolvedShell, origin: Origin, id?: string): SessionOptions {
    return {
      shell,
      cwd: req.cwd ?? this.home,
      workspace: req.workspace,
      origin,
      id,
      cols: req.cols,
      rows: req.rows,
      env: req.env,
      baseEnv: this.env,
      agentEnvAllow: this.settings.get().agentEnvAllow,
      startupFiles: origin === 'agent' ? (this.opts.agentStartupFiles ?? 'user') : 'user',
      instancePath: this.opts.instancePath ?? null,
      // The person's setting, unless the host was given an explicit limit (tests, bench).
      scrollback: this.opts.limits?.scrollbackLines ?? this.settings.get().scrollback,
      palette: this.settings.palette,
      maxInputBytes: this.limits.maxInputBytes,
      startupTimeoutMs: this.limits.startupTimeoutMs,
      defaultWaitMs: this.limits.defaultWaitMs,
      procTier: this.opts.procTier,
      clock: this.clock,
      signal: req.signal,
      sandbox: req.sandbox,
    };
  }

  async create(req: CreateRequest = {}): Promise<TerminalView> {
    return (await this.createManaged(req)).view();
  }

  async createManaged(req: CreateRequest = {}): Promise<ManagedTerminal> {
    if (this.shuttingDown) throw new TandemError('not_running', 'Tandem is shutting down.');
    if (this.terminals.size + this.pendingCreates >= this.limits.maxTerminals) await this.makeRoom();
    if (this.terminals.size + this.pendingCreates >= this.limits.maxTerminals) {
      throw new TandemError('capacity', `Tandem already holds ${this.limits.maxTerminals} terminals; close one first.`);
    }
    const origin = req.origin ?? 'user';
    const shell = req.shell ? this.requestedShell(req.shell) : this.defaultShell();
    this.pendingCreates += 1;
    try {
      const session = await TerminalSession.start(this.sessionOptions(req, shell, origin));
      const meta: TerminalMeta = {
        title: req.title?.trim() || shell.name,
        origin,
        agent: req.agent ?? null,
        agentConnected: origin === 'agent',
        control: origin,
        shared: false,
        handedTo: null,
        handedToKey: null,
      };
      const terminal = new ManagedTerminal(session, meta, this.clock, this.changed, this.opts.flow, this.limits.maxQueuedOperations);
      terminal.onExited = () => void this.saveLive(terminal);
      this.terminals.set(terminal.id, terminal);
      this.record(terminal);
      this.changed();
      return terminal;
    } finally {
      this.pendingCreates -= 1;
    }
  }

  /**
   * At the limit, an agent's terminal whose shell has exited (the oldest) gives its slot: it is
   * kept as a transcript, as the unattended sweep keeps one. Otherwise an agent that opened
   * terminals and ended their shells held every slot, and neither the person nor another agent
   * could open one (black-box round 13). Running terminals and the person's are never taken.
   */
  private async makeRoom(): Promise<void> {
    for (const terminal of this.terminals.values()) {
      if (terminal.meta.origin !== 'agent' || terminal.session.status !== 'exited') continue;
      await this.close(terminal.id, null, { cause: 'unattended' }).catch(() => undefined);
      if (!this.terminals.has(terminal.id)) return;
    }
  }

  private record(terminal: ManagedTerminal): void {
    const s = terminal.session;
    const recorder = this.opts.recordings?.open({
      terminalId: s.id,
      title: terminal.meta.title,
      origin: terminal.meta.origin,
      agent: terminal.meta.agent,
      shell: s.shell.name,
      cwd: s.cwd,
      cols: s.cols,
      rows: s.rows,
      sandbox: s.sandbox,
    });
    if (!recorder) return;
    this.recorders.set(terminal.id, recorder);
    terminal.journal = recorder;
    recorder.follow(s, 0);
  }

  private readonly finishing = new Set<Promise<void>>();
  private track(finish: Promise<void>): void {
    const done = finish.catch(() => undefined).finally(() => this.finishing.delete(done));
    this.finishing.add(done);
  }

  /** The recording store, for the person's list and export. */
  recordings(): RecordingStore {
    if (!this.opts.recordings) throw new TandemError('not_running', 'This Tandem keeps no recordings (no state directory was given to it).');
    return this.opts.recordings;
  }

  /** The live recording of a terminal, if it is recorded. */
  recorderOf(id: string): TerminalRecorder | null {
    return this.recorders.get(id) ?? null;
  }

  /** A bare name with several binaries (`bash` on a Mac with Homebrew's) means discovery's preferred one. */
  private requestedShell(nameOrPath: string): ResolvedShell {
    if (!/[\\/]/.test(nameOrPath)) {
      const preferred = discoverShells(this.env).preferred.get(shellName(nameOrPath.trim()));
      if (preferred) return preferred;
    }
    return resolveShell(nameOrPath, this.env.PATH ?? '');
  }

  private defaultShell(): ResolvedShell {
    const found = discoverShells(this.env);
    if (!found.defaultShell) throw new TandemError('shell_not_found', 'No default shell was found; set SHELL or name a shell.');
    return found.defaultShell;
  }

  rename(id: string, title: string): TerminalView {
    const terminal = this.get(id);
    const trimmed = title.trim();
    if (!trimmed || trimmed.length > 120) throw new TandemError('invalid_argument', 'title must have 1 to 120 characters.');
    terminal.meta.title = trimmed;
    this.changed();
    return terminal.view();
  }

  /**
   * Awaits the whole process tree; a failure keeps the terminal listed so close can be retried.
   * Closed by its agent or the unattended sweep, its tab stays as a transcript; at shutdown it is
   * written for the next start; closed by the person, it goes. Closing a transcript dismisses it.
   */
  async close(
    id: string,
    by: ClosedBy = 'person',
    cause: { cause: CloseCause; clientId?: string } = { cause: 'host' },
  ): Promise<{ closed: boolean; orphans: Array<{ pid: number; comm: string }> }> {
    if (!this.terminals.has(id) && this.transcripts.has(id)) {
      this.dismiss(id);
      return { closed: true, orphans: [] };
    }
    const terminal = this.get(id);
    const kept = cause.cause === 'agent' || cause.cause === 'unattended' || cause.cause === 'shutdown';
    const exitedBefore = terminal.session.status === 'exited';
    // bash sends a finished command's line (read from history in a subshell) just after its exit
    // code, then its redirect report: an agent's close right after its command waits, bounded, for
    // that report, so the kept tab names the last command instead of losing the line with the
    // shell. Not at shutdown (quitting never waits on a shell) nor in the unattended sweep.
    if (cause.cause === 'agent' && terminal.session.status === 'idle') await terminal.session.freshRedirects(closeLineWaitMs);
    // The screen as the tab showed it, before the teardown frees the emulator.
    const shown = kept && this.transcripts.enabled ? await terminal.session.snapshot().catch(() => null) : null;
    const result = await terminal.session.close(by);
    if (result.closed) {
      const info = terminal.view();
      terminal.dispose();
      this.terminals.delete(id);
      this.savedAs.delete(id);
      if (shown === null) this.transcripts.forget(id);
      else if (cause.cause === 'shutdown') this.transcripts.saveLive(info, shown.data);
      else
        this.transcripts.add({
          info,
          snapshot: shown.data,
          reason: exitedBefore ? 'exited' : cause.cause === 'agent' ? 'closed' : 'unattended',
          by: terminal.meta.agent,
        });
      this.recordClose(terminal, cause);
      const recorder = this.recorders.get(id);
      this.recorders.delete(id);
      // Its files close off this path; shutdown waits for them.
      if (recorder) this.track(this.opts.recordings!.finish(recorder, cause.cause, terminal.session.exitCode));
      for (const listener of this.removedListeners) listener(id);
      this.changed();
    }
    return result;
  }

  private recordClose(terminal: ManagedTerminal, cause: { cause: CloseCause; clientId?: string }): void {
    const record: CloseRecord = {
      at: this.clock.now(),
      id: terminal.id,
      title: terminal.meta.title,
      origin: terminal.meta.origin,
      agent: terminal.meta.agent,
      cause: cause.cause,
      clientId: cause.clientId ?? null,
    };
    this.closeLog.push(record);
    if (this.closeLog.length > closeLogSize) this.closeLog.shift();
    if (this.env.TANDEM_DEBUG_CLOSE === '1') process.stderr.write(`tandem: closed ${JSON.stringify(record)}\n${new Error('closed from').stack}\n`);
  }

  /** A fresh shell under the same id and title; a person's operation in the queue: agent writes wait for it. */
  async reset(id: string): Promise<TerminalView> {
    const terminal = this.get(id);
    return terminal.control.queue.person(async () => {
      const old = terminal.session;
      const closed = await old.close();
      if (!closed.closed) throw new TandemError('busy', `The old shell left ${closed.orphans.length} process(es) that could not be stopped; try again.`);
      const session = await TerminalSession.start(
        this.sessionOptions(
          { cwd: (old.sandboxRequest ? old.openedIn : old.cwd) ?? undefined, cols: old.cols, rows: old.rows, sandbox: old.sandboxRequest ?? undefined },
          old.shell,
          terminal.meta.origin,
          old.id,
        ),
      );
      terminal.replaceSession(session);
      this.recorders.get(id)?.follow(session, 0);
      this.changed();
      return terminal.view();
    });
  }

  /** The person's Dismiss of a transcript tab. */
  dismiss(id: string): void {
    this.transcripts.dismiss(id);
    this.changed();
  }

  /** A view of a transcript: its snapshot; it takes no input. */
  attachTranscript(id: string, clientId: string): { attachmentId: string; snapshot: string; view: TerminalView } {
    return this.transcripts.attach(id, clientId);
  }

  /** Writes a live tab for the next start, unless nothing it shows changed since its last save. */
  private async saveLive(terminal: ManagedTerminal): Promise<void> {
    if (!this.transcripts.enabled || !this.terminals.has(terminal.id)) return;
    const view = terminal.view();
    const key = `${terminal.session.streamOffset}|${view.title}|${view.status}|${view.cwd}`;
    if (this.savedAs.get(terminal.id) === key) return;
    const shown = await terminal.session.snapshot().catch(() => null);
    if (!shown || !this.terminals.has(terminal.id)) return;
    this.savedAs.set(terminal.id, key);
    this.transcripts.saveLive(terminal.view(), shown.data);
  }

  private scheduleSave(): void {
    this.saveTimer = this.clock.setTimeout(() => {
      this.saveTimer = null;
      if (this.shuttingDown) return;
      void Promise.all([...this.terminals.values()].map((terminal) => this.saveLive(terminal))).finally(() => {
        if (!this.shuttingDown) this.scheduleSave();
      });
    }, saveEveryMs);
  }

  async attach(
    id: string,
    clientId: string,
    sink: FrameSink,
    size?: { cols?: number; rows?: number },
  ): Promise<{ attachment: Attachment; snapshot: string; view: TerminalView; marks: SnapshotMarks }> {
    const terminal = this.get(id);
    if (size?.cols && size.rows && terminal.session.status !== 'exited') terminal.session.resize(size.cols, size.rows);
    const { attachment, snapshot, marks } = await terminal.attach(clientId, sink);
    return { attachment, snapshot, view: terminal.view(), marks };
  }

  /** The terminal of a view; with `clientId`, only that client's own views are found. */
  private byAttachment(attachmentId: string, clientId?: string): ManagedTerminal {
    for (const terminal of this.terminals.values()) {
      const attachment = terminal.attachments.get(attachmentId);
      if (attachment && (clientId === undefined || attachment.clientId === clientId)) return terminal;
    }
    throw new TandemError('not_found', 'This view is no longer attached; attach again.');
  }

  detach(attachmentId: string, clientId?: string): void {
    if (this.transcripts.detach(attachmentId, clientId)) return;
    for (const terminal of this.terminals.values()) {
      const attachment = terminal.attachments.get(attachmentId);
      if (attachment && (clientId === undefined || attachment.clientId === clientId)) {
        terminal.detach(attachmentId);
        return;
      }
    }
  }

  /** A client went away: its views go, its terminals stay (detaching never kills a process). */
  detachClient(clientId: string): void {
    this.transcripts.detachClient(clientId);
    for (const terminal of this.terminals.values()) {
      for (const attachment of [...terminal.attachments.values()]) if (attachment.clientId === clientId) terminal.detach(attachment.id);
    }
  }

  /**
   * Input from a view. Only the latest view writes. On an agent's terminal, the person's typed
   * input (never protocol replies, focus or mouse reports) takes control from the agent.
   */
  async input(attachmentId: string, data: string, typed: boolean, clientId?: string): Promise<void> {
    this.transcripts.refuse(attachmentId, clientId);
    const terminal = this.byAttachment(attachmentId, clientId);
    if (!terminal.isWriter(attachmentId)) throw new TandemError('forbidden', 'Another view of this terminal has input; this one is read-only.');
    await terminal.personInput(data, typed);
  }

  resize(attachmentId: string, cols: number, rows: number, clientId?: string): void {
    this.transcripts.refuse(attachmentId, clientId);
    const terminal = this.byAttachment(attachmentId, clientId);
    if (!terminal.isWriter(attachmentId)) throw new TandemError('forbidden', 'Another view of this terminal controls its size.');
    terminal.session.resize(cols, rows);
  }

  ack(attachmentId: string, seq: number, clientId?: string): void {
    // A transcript's view gets no frames: nothing to acknowledge.
    if (this.transcripts.isTranscriptView(attachmentId, clientId)) return;
    this.byAttachment(attachmentId, clientId).ack(attachmentId, seq);
  }

  share(id: string, shared: boolean): TerminalView {
    const terminal = this.get(id);
    if (terminal.meta.origin !== 'user')
      throw new TandemError('invalid_argument', 'Only your own terminals can be shared; agent terminals are visible to their agent already.');
    terminal.meta.shared = shared;
    this.changed();
    return terminal.view();
  }

  /** The agent layer tells which token an agent's display name stands for (null: no such agent). */
  setAgentDirectory(resolve: (name: string) => string | null): void {
    this.agentDirectory = resolve;
  }

  handToAgent(id: string, agent: string | null): TerminalView {
    const terminal = this.get(id);
    if (terminal.meta.origin !== 'user') throw new TandemError('invalid_argument', 'Only your own terminals can be handed to an agent.');
    const key = agent && this.agentDirectory ? this.agentDirectory(agent) : null;
    if (agent && this.agentDirectory && !key)
      throw new TandemError('not_found', `No agent named "${agent}" is paired or connected; pair it in the Agents panel first.`);
    terminal.meta.handedTo = agent;
    terminal.meta.handedToKey = key;
    terminal.meta.agent = agent;
    terminal.meta.agentConnected = agent !== null && this.agentPresence(agent);
    terminal.control.dispatch({ type: 'hand_to', toAgent: agent !== null, offset: terminal.session.streamOffset });
    terminal.journal.handoff('hand_to', agent ? { from: 'person', to: `agent:${agent}` } : { to: 'person' });
    this.changed();
    return terminal.view();
  }

  takeControl(id: string): TerminalView {
    const terminal = this.get(id);
    terminal.control.dispatch({ type: 'take', offset: terminal.session.streamOffset });
    terminal.journal.handoff('takeover', { to: 'person' });
    return terminal.view();
  }

  handBack(id: string, words: { note?: string; shareOutput?: boolean } = {}): TerminalView {
    const terminal = this.get(id);
    if (!terminal.meta.agent) throw new TandemError('invalid_argument', 'This terminal has no agent to hand control back to.');
    terminal.control.dispatch({ type: 'hand_back', words: { note: words.note?.trim() || null, shareOutput: words.shareOutput === true } });
    terminal.journal.handoff('hand_back', { from: 'person', to: `agent:${terminal.meta.agent}`, note: words.note?.trim() || null });
    return terminal.view();
  }

  /** Tears every terminal down (SIGINT/SIGTERM of `tandem serve`, quit of the app). */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    if (this.saveTimer) this.clock.clearTimeout(this.saveTimer);
    this.saveTimer = null;
    await Promise.all([...this.terminals.keys()].map((id) => this.close(id, 'person', { cause: 'shutdown' }).catch(() => undefined)));
    await Promise.all([...this.finishing]);
    this.transcripts.dispose();
    await this.transcripts.flush();
    this.opts.recordings?.dispose();
  }
}
