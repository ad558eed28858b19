import { TandemError } from '../../shared/errors.js';
import type { ClosedBy, Controller, SendResult, SignalName, TerminalInfo, TerminalStatus } from '../../shared/types.js';
import { type Clock, waitFor } from '../clock.js';
import { kernelCwd } from '../pty/proc.js';
import type { CommandRecord } from '../terminal/emulator/history.js';
import { OutputProjector } from '../terminal/projection/projection.js';
import { DEFAULT_LIMITS } from '../../shared/limits.js';
import type { RedirectReport } from '../shells/redirect-report.js';
import type { SendRequest, TerminalRead, TerminalSession, WaitRequest } from '../terminal/session/session.js';
import type { TerminalControl } from './terminal-control.js';
import type { TerminalView } from '../../shared/contract.js';
import type { TerminalJournal } from '../record/journal.js';
import type { HandoffState } from './control.js';
import type { AgentWrite, HandBackReport, TerminalPort } from './terminal-port.js';
import type { Turn } from './op-queue.js';

/** What a send asks of a terminal, as the agent layer names it (the host's port, not the terminal's file). */
export type { SendRequest };

/** What the port reads of its terminal (the host's ManagedTerminal): its session as it is now (a reset replaces it), its control, metadata and journal. */
export interface OpsTerminal {
  readonly session: TerminalSession;
  readonly control: TerminalControl;
  readonly meta: { readonly title: string; readonly origin: TerminalInfo['origin']; readonly shared?: boolean; readonly handedToKey: string | null };
  readonly journal: TerminalJournal;
  /** The window title now was set by output still the person's (person-spans.ts). */
  readonly titleIsPersons: boolean;
  view(): TerminalView;
  beginAgentCall(): () => void;
  /** The agent writes next: a lease handed back privately ends here when the person's work is done; `clearLine`: the person left text at the prompt. */
  agentWriting(): { clearLine: boolean };
}

/** The agent layer's port into one terminal (terminal-port.ts): writes take a turn in its queue that the port holds; reads and waits do not. */
export class TerminalOps implements TerminalPort {
  constructor(
    private readonly terminal: OpsTerminal,
    private readonly clock: Clock,
  ) {}

  private get session() {
    return this.terminal.session;
  }

  private get control() {
    return this.terminal.control;
  }

  get id(): string {
    return this.session.id;
  }

  get title(): string {
    return this.terminal.meta.title;
  }

  get origin(): TerminalInfo['origin'] {
    return this.terminal.meta.origin;
  }

  get shared(): boolean {
    return this.terminal.meta.shared === true;
  }

  get handedToKey(): string | null {
    return this.terminal.meta.handedToKey;
  }

  get journal(): TerminalJournal {
    return this.terminal.journal;
  }

  /** The terminal as the agent layer sees it: a window title the person's output set is not shown. */
  view(): TerminalView {
    const view = this.terminal.view();
    return this.terminal.titleIsPersons ? { ...view, program: null } : view;
  }

  beginAgentCall(): () => void {
    return this.terminal.beginAgentCall();
  }

  get controller(): Controller {
    return this.control.controller;
  }

  get handoff(): HandoffState | null {
    return this.control.state.handoff;
  }

  onControl(listener: (controller: Controller) => void): () => void {
    return this.control.onControl(listener);
  }

  onWake(listener: () => void): () => void {
    return this.control.onWake(listener);
  }

  holds(owner: string): boolean {
    return this.control.queue.holds(owner);
  }

  get status(): TerminalStatus {
    return this.session.status;
  }

  get cursor(): string {
    return this.session.cursor;
  }

  /** Who reads a line typed now: the shell at its prompt, the shell at a continuation prompt, or a program. */
  get lineReader(): 'prompt' | 'continuation' | 'program' {
    const phase = this.session.phase;
    return phase === 'idle' ? 'prompt' : phase === 'continuation' ? 'continuation' : 'program';
  }

  get cwd(): string | null {
    return this.session.cwd;
  }

  get exitCode(): number | null {
    return this.session.exitCode;
  }

  get closedBy(): ClosedBy {
    return this.session.closedBy;
  }

  get lastCommandExitCode(): number | null {
    return this.session.lastCommandExitCode;
  }

  /** The output offset now: where a lease's hand-back summary would start. */
  get streamOffset(): number {
    return this.session.streamOffset;
  }

  get banner(): string {
    return this.session.banner;
  }

  /**
   * What the judge needs: the shell's dialect, where commands run, the environment the shell
   * started with, and the variables an agent asked for when it opened the terminal. Where
   * commands run is the folder the shell's process is in as the kernel holds it (Linux): a
   * folder renamed at or above it, with another put in its place, left the path the shell last
   * reported naming a decoy while its commands resolved from the moved one (black-box round 8).
   * `cwdRemoved`: that folder is gone. Elsewhere, the reported path; and in PowerShell, whose
   * location is a path it hands each command by name (its process never changes folder).
   */
  get judgeContext(): {
    shell: string | null;
    cwd: string;
    cwdRemoved: boolean;
    /** Input a program leaves unread never reaches this shell's line (`ShellDialect.drainsUnread`). */
    drainsUnread: boolean;
    workspace: string;
    env: Readonly<Record<string, string>>;
    openEnv: Readonly<Record<string, string>>;
  } {
    const session = this.session;
    const shell = session.shell.dialect?.name ?? null;
    const kernel = session.shell.dialect?.processCwd ? kernelCwd(session.pid) : null;
    return {
      shell,
      cwd: kernel?.path ?? session.cwd ?? session.workspace,
      cwdRemoved: kernel?.removed ?? false,
      drainsUnread: session.shell.dialect?.drainsUnread?.(process.platform) ?? false,
      workspace: session.workspace,
      env: session.launchEnv,
      openEnv: session.origin === 'agent' ? session.openEnv : {},
    };
  }

  write(owner: string, bound: { ms: number; signal?: AbortSignal }, prepare: () => Promise<AgentWrite>): Promise<SendResult>;
  write(owner: string, bound: { ms: number; signal?: AbortSignal }, prepare: () => Promise<AgentWrite | null>): Promise<SendResult | null>;
  async write(owner: string, bound: { ms: number; signal?: AbortSignal }, prepare: () => Promise<AgentWrite | null>): Promise<SendResult | null> {
    const turn = this.turnNow(owner, bound.signal) ?? (await this.turn(owner, bound.ms, bound.signal));
    try {
      const req = await prepare();
      if (req === null) return null;
      const { clearLine } = this.terminal.agentWriting();
      return await this.session.send({ ...req, ...(clearLine ? { clearLine: true } : {}), handoff: turn.preempted });
    } finally {
      turn.release();
    }
  }

  /** The turn without waiting when the queue is free (null: call `turn`); throws if `signal` has aborted. */
  private turnNow(owner: string, signal?: AbortSignal): Turn | null {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    return this.terminal.control.queue.takeNow(owner);
  }

  /**
   * An agent operation's turn in the FIFO, within `ms` and until `signal`. Fails `busy` when
   * the bound passes first, `user_control` when it reaches the head under the person's lease.
   */
  private async turn(owner: string, ms: number, signal?: AbortSignal): Promise<Turn> {
    const now = this.turnNow(owner, signal);
    if (now) return now;
    const queued = new AbortController();
    const entry = this.terminal.control.queue.enqueue(owner, queued.signal);
    const outcome = await waitFor(this.clock, { ms, signal, until: entry });
    if (outcome.kind === 'met') return outcome.value;
    queued.abort();
    // Granted in the same turn the wait gave up: the turn goes back unused.
    void entry.then(
      (turn) => turn.release(),
      () => undefined,
    );
    if (outcome.kind === 'aborted') throw outcome.reason ?? new Error('aborted');
    throw new TandemError('busy', 'The terminal stayed busy with earlier operations for the whole wait; nothing was sent.');
  }

  /** Waits outside the queue; the person's takeover settles it `human_handoff`. */
  async wait(req: Omit<WaitRequest, 'handoff'>): Promise<SendResult> {
    const takeover = this.terminal.control.takeoverSignal();
    try {
      return await this.session.wait({ ...req, handoff: takeover.signal });
    } finally {
      takeover.dispose();
    }
  }

  read(req: { since?: string; offset?: number; count?: number; maxBytes?: number }): Promise<TerminalRead> {
    return this.session.read(req);
  }

  /** Signals bypass the queue (the contract): they settle the agent's running send too. */
  signal(name: SignalName): Promise<void> {
    return this.session.signal(name);
  }

  freshRedirects(waitMs: number): Promise<RedirectReport | null> {
    return this.session.freshRedirects(waitMs);
  }

  async probeNow(): Promise<boolean> {
    return (await this.session.probeNow()) !== null;
  }

  askHandoff(requestId: string): string[] {
    return this.control.dispatch({ type: 'ask', requestId }).flatMap((effect) => (effect.type === 'withdraw_request' ? [effect.requestId] : []));
  }

  answerHandoff(requestId: string, accept: boolean, note: string | null): void {
    this.control.dispatch({ type: 'answer', requestId, accept, note, offset: this.session.streamOffset });
  }

  withdrawHandoff(requestId: string): void {
    this.control.dispatch({ type: 'withdraw', requestId });
  }

  settleHandoff(): void {
    this.control.dispatch({ type: 'settled' });
  }

  /**
   * `handoff.summary` at hand-back: the commands the person ran under their lease and their exit
   * codes; what the terminal printed meanwhile only when the person chose to share it (else
   * nothing of it reaches the agent), bounded like a result's output. Reading it settles the handoff.
   */
  handBack(): HandBackReport {
    const session = this.session;
    const { lease, handoff, words } = this.control.state;
    const since = lease?.since ?? session.streamOffset;
    const commands = session.commandsSince(since);
    const summary = handBackSummary(commands, words?.shareOutput === true ? session.outputSince(since) : null, () => session.screen.text);
    const state = handoff?.state === 'declined' ? 'declined' : 'returned';
    const note = state === 'declined' ? (handoff?.note ?? null) : (words?.note ?? null);
    this.settleHandoff();
    return { summary, last: commands.at(-1), state, note };
  }

  /** Calls `listener` once the shell has exited (at once if it has); returns the unsubscribe. */
  onExit(listener: () => void): () => void {
    const session = this.session;
    if (session.status === 'exited') {
      listener();
      return () => undefined;
    }
    return session.onStateChange(() => {
      if (session.status === 'exited') listener();
    });
  }
}

/** What the person shares on hand-back is bounded like a result's output. */
export const sharedOutputMaxBytes = DEFAULT_LIMITS.defaultOutputBytes;

/** The summary's text: `raw` is the output stream since the person took control, or null when they did not share it. */
export function handBackSummary(commands: readonly CommandRecord[], raw: string | null, screen: () => string): string {
  const ran =
    commands.length === 0
      ? 'The person ran no commands.'
      : commands.map((record) => `${record.command ?? '(command)'} → exit ${record.exitCode ?? '?'}`).join('\n');
  if (raw === null) return ran;
  const projector = new OutputProjector({ maxBytes: sharedOutputMaxBytes });
  projector.push(raw);
  const projected = projector.snapshot();
  const text = (projected.altScreen ? screen() : projected.output).trimEnd();
  return `${ran}\n\nThe person shared their output:\n${text === '' ? '(no output)' : text}`;
}
