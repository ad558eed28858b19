import type { TerminalView } from '../../shared/contract.js';
import type { ClosedBy, Controller, SendResult, SignalName, TerminalInfo, TerminalStatus } from '../../shared/types.js';
import type { RedirectReport } from '../shells/redirect-report.js';
import type { CommandRecord } from '../terminal/emulator/history.js';
import type { SendRequest, TerminalRead, WaitRequest } from '../terminal/session/session.js';
import type { TerminalJournal } from '../record/journal.js';
import type { HandoffState } from './control.js';

/** What a send types and how long it waits, as the agent layer hands it to `TerminalPort.write`. */
export type AgentWrite = Omit<SendRequest, 'handoff'>;

/** How a handoff ended, as the agent reports it at hand-back. */
export interface HandBackReport {
  /** The commands the person ran under their lease, and their output only if they shared it. */
  summary: string;
  /** The last of those commands, if any. */
  last: CommandRecord | undefined;
  state: 'declined' | 'returned';
  /** The person's words: why they declined, or what they said handing back. */
  note: string | null;
}

/**
 * The one door from the agent layer into a terminal (issue 25). The agent asks for outcomes
 * (write this on a turn, wait, read, signal, ask the person to take over) and reads what it
 * needs to judge and report; the host owns the session, its control machine, its queue and its
 * metadata, none of which the agent can reach through this port.
 */
export interface TerminalPort {
  readonly id: string;
  /** The tab's title, as the person sees it. */
  readonly title: string;
  /** Who opened it: an agent, or the person (then it reached the agent handed or shared). */
  readonly origin: TerminalInfo['origin'];
  /** The person shares it with every paired agent, read-only. */
  readonly shared: boolean;
  /** The token hash of the agent a person's terminal is handed to. */
  readonly handedToKey: string | null;
  /** Where the terminal's recording and timeline are written. */
  readonly journal: TerminalJournal;
  view(): TerminalView;
  /** Marks an agent call waiting on the terminal (its tab shows it); returns the end of it. */
  beginAgentCall(): () => void;

  readonly status: TerminalStatus;
  readonly cursor: string;
  /** Who reads a line typed now: the shell at its prompt, the shell at a continuation prompt, or a program. */
  readonly lineReader: 'prompt' | 'continuation' | 'program';
  readonly cwd: string | null;
  readonly exitCode: number | null;
  readonly closedBy: ClosedBy;
  readonly lastCommandExitCode: number | null;
  /** The output offset now. */
  readonly streamOffset: number;
  /** What the shell printed before its first prompt (shown to the agent at open). */
  readonly banner: string;
  /** What the judge needs: the shell's dialect, where commands run, the shell's environment and the agent's variables at open. */
  readonly judgeContext: {
    shell: string | null;
    /** The shell's folder as the kernel holds it where it can be read (Linux), else as reported. */
    cwd: string;
    /** That folder is gone (removed, perhaps another made in its place): file operands cannot be checked. */
    cwdRemoved: boolean;
    /** Input a program leaves unread never reaches this shell's line (the legacy bash and sh: it can). */
    drainsUnread: boolean;
    workspace: string;
    env: Readonly<Record<string, string>>;
    openEnv: Readonly<Record<string, string>>;
  };

  /** Who drives the terminal now. */
  readonly controller: Controller;
  /** The handoff the agent asked for, while it is not settled. */
  readonly handoff: HandoffState | null;
  onControl(listener: (controller: Controller) => void): () => void;
  /** Calls `listener` on any change of control or handoff. */
  onWake(listener: () => void): () => void;
  /** The owner (a token hash) holds a turn of the terminal's queue or waits for one. */
  holds(owner: string): boolean;

  /**
   * A write on the owner's turn, the host holding the turn from start to release: waits for it
   * within `ms` (`busy` past it, `user_control` once the person's lease is at the head), asks
   * `prepare` what to type now that the turn came (null: nothing, and the turn goes back), sends
   * it (the person's takeover settles it `human_handoff`), and releases the turn.
   */
  write(owner: string, bound: { ms: number; signal?: AbortSignal }, prepare: () => Promise<AgentWrite>): Promise<SendResult>;
  write(owner: string, bound: { ms: number; signal?: AbortSignal }, prepare: () => Promise<AgentWrite | null>): Promise<SendResult | null>;
  /** Waits outside the queue; the person's takeover settles it `human_handoff`. */
  wait(req: Omit<WaitRequest, 'handoff'>): Promise<SendResult>;
  read(req: { since?: string; offset?: number; count?: number; maxBytes?: number }): Promise<TerminalRead>;
  /** Signals bypass the queue (the contract): they settle the agent's running send too. */
  signal(name: SignalName): Promise<void>;
  freshRedirects(waitMs: number): Promise<RedirectReport | null>;
  /** A look now: does the foreground program wait for input? */
  probeNow(): Promise<boolean>;
  /** Calls `listener` once the shell has exited (at once if it has); returns the unsubscribe. */
  onExit(listener: () => void): () => void;

  /** Asks the person to take over (request `requestId`); returns the earlier requests it replaces, to withdraw. */
  askHandoff(requestId: string): string[];
  answerHandoff(requestId: string, accept: boolean, note: string | null): void;
  /** The asking call gave up before an answer. */
  withdrawHandoff(requestId: string): void;
  /** What the person did under their lease and how the handoff ended; the handoff is settled by reading it. */
  handBack(): HandBackReport;
  /** The agent read how the handoff ended (a decline): it is over. */
  settleHandoff(): void;
}
