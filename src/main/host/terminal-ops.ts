import { TandemError } from '../../shared/errors.js';
import type { ClosedBy, SendResult, SignalName, TerminalStatus } from '../../shared/types.js';
import { type Clock, waitFor } from '../clock.js';
import type { CommandRecord } from '../terminal/emulator/history.js';
import { OutputProjector } from '../terminal/projection/projection.js';
import { DEFAULT_LIMITS } from '../../shared/limits.js';
import type { RedirectReport } from '../shells/redirect-report.js';
import type { SendRequest, TerminalRead, TerminalSession, WaitRequest } from '../terminal/session/session.js';
import type { TerminalControl } from './terminal-control.js';
import type { Turn } from './op-queue.js';

/** What a send asks of a terminal, as the agent layer names it (the host's port, not the terminal's file). */
export type { SendRequest };

/** What the ops read of their terminal (the host's ManagedTerminal): its session as it is now (a reset replaces it) and its control. */
export interface OpsTerminal {
  readonly session: TerminalSession;
  readonly control: TerminalControl;
}

/** What the agent layer asks of a terminal: writes take a turn in its queue; reads and waits do not. */
export class TerminalOps {
  constructor(
    private readonly terminal: OpsTerminal,
    private readonly clock: Clock,
  ) {}

  private get session() {
    return this.terminal.session;
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
   * started with, and the variables an agent asked for when it opened the terminal.
   */
  get judgeContext(): {
    shell: string | null;
    cwd: string;
    workspace: string;
    env: Readonly<Record<string, string>>;
    openEnv: Readonly<Record<string, string>>;
  } {
    const session = this.session;
    return {
      shell: session.shell.dialect?.name ?? null,
      cwd: session.cwd ?? session.workspace,
      workspace: session.workspace,
      env: session.launchEnv,
      openEnv: session.origin === 'agent' ? session.openEnv : {},
    };
  }

  /** The turn without waiting when the queue is free (null: call `turn`); throws if `signal` has aborted. */
  turnNow(owner: string, signal?: AbortSignal): Turn | null {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    return this.terminal.control.queue.takeNow(owner);
  }

  /**
   * An agent operation's turn in the FIFO, within `ms` and until `signal`. Fails `busy` when
   * the bound passes first, `user_control` when it reaches the head under the person's lease.
   */
  async turn(owner: string, ms: number, signal?: AbortSignal): Promise<Turn> {
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

  /** Writes on a turn; the person's takeover settles it `human_handoff`. */
  send(turn: Turn, req: Omit<SendRequest, 'handoff'>): Promise<SendResult> {
    return this.session.send({ ...req, handoff: turn.preempted });
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

  probeNow(): ReturnType<TerminalSession['probeNow']> {
    return this.session.probeNow();
  }

  /** What the person did under their lease: the commands, and the raw output only when they share it. */
  /**
   * `handoff.summary` at hand-back: the commands the person ran since `since` and their exit
   * codes; what the terminal printed meanwhile only when the person chose to share it (else
   * nothing of it reaches the agent), bounded like a result's output.
   */
  handBackReport(since: number, shareOutput: boolean): { summary: string; last: CommandRecord | undefined } {
    const session = this.session;
    const commands = session.commandsSince(since);
    return { summary: handBackSummary(commands, shareOutput ? session.outputSince(since) : null, () => session.screen.text), last: commands.at(-1) };
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
