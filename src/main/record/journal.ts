/**
 * The one port through which the host and the agent layer tell a terminal's recording what
 * happened. The host and agent files call it and never know whether anything is recorded (the
 * no-op stands in when recording is off or no store is given).
 */

/** Who typed or decided something: the person, or an agent by its display name; `handoff` when it happened under a handoff. */
export type Actor = { who: 'person'; handoff?: boolean } | { who: 'agent'; name: string; handoff?: boolean };

/** How an agent's line came to be typed (the timeline's `allowed`). */
export type Allowance = 'allow_entry' | 'approval' | 'edited' | 'always' | 'unjudged';

export interface TerminalJournal {
  readonly enabled: boolean;
  /** Whether input written now would be typed with echo off at a line-mode read (a password prompt). */
  inputHidden(): Promise<boolean>;
  /**
   * The person's keystrokes: whether a program (not the shell's line editor) holds the terminal.
   * Their text is then not kept: whether the terminal echoes would cost a `stty` process before
   * every key (typing into vim or a REPL), and what the program echoes is in the output anyway.
   */
  programHoldsInput(): boolean;
  /** Input on its way to the terminal; `hidden` input is never kept, only the fact of it. */
  input(by: Actor, data: string, hidden: boolean): void;
  /** An agent's write, judged and about to be typed. */
  send(by: Actor, line: string, allowed: Allowance): void;
  /** An agent's send or wait settled without its command ending (waiting for input, still running): the evidence. */
  settled(by: Actor, result: { status: string; evidence: string; exitCode: number | null; cwd: string | null }): void;
  /** A line that was not sent: the deny list, or the person's rejection with their reason. */
  rejected(by: Actor, line: string, reason: string, decidedBy: 'deny_list' | 'person'): void;
  /** An agent's line waits for the person's approval. */
  asked(by: Actor, line: string, why: string | null): void;
  /** Control changed hands: `kind` says how (takeover, hand_back, hand_to, request, answer). */
  handoff(kind: string, fields: { from?: string; to?: string; note?: string | null; accepted?: boolean }): void;
  /** The agent's approval policy changed (recorded in each of its open terminals). */
  policyChanged(fields: Record<string, unknown>): void;
}

export const noJournal: TerminalJournal = {
  enabled: false,
  inputHidden: async () => false,
  programHoldsInput: () => false,
  input: () => undefined,
  send: () => undefined,
  settled: () => undefined,
  rejected: () => undefined,
  asked: () => undefined,
  handoff: () => undefined,
  policyChanged: () => undefined,
};

export function actorName(actor: Actor): string {
  return actor.who === 'person' ? 'person' : `agent:${actor.name}`;
}
