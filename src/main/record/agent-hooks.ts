/**
 * The agent layer's side of the journal port, so its files call one line each. An agent's
 * line is judged before it is typed; what it types at a password prompt (echo off) is never
 * kept, neither as input nor in the timeline's records of it.
 */
import type { TerminalInfo } from '../../shared/types.js';
import type { Actor, Allowance, TerminalJournal } from './journal.js';

/** What these hooks read of a terminal (the agent's TerminalPort is one): who opened it, and its journal. */
export interface JournaledTerminal {
  readonly origin: TerminalInfo['origin'];
  readonly journal: TerminalJournal;
}

export function agentActor(terminal: JournaledTerminal, name: string): Actor {
  // An agent typing in a person's terminal does so because it was handed to it.
  return { who: 'agent', name, handoff: terminal.origin === 'user' };
}

/** What a send types, as the recording shows it: named keys as `<Name>`, Enter as \r. */
export function typedText(typing: { text?: string; keys?: string[]; submit?: boolean }): string {
  const keys = (typing.keys ?? []).map((key) => (key.length === 1 ? key : `<${key}>`)).join('');
  const enter = typing.text !== undefined && typing.submit !== false ? '\r' : '';
  return `${typing.text ?? ''}${keys}${enter}`;
}

/** An agent's write about to go out: the `send` record (how it was allowed) and its `i` event, or the fact of hidden input. */
export async function journalAgentWrite(
  terminal: JournaledTerminal,
  agent: string,
  line: string,
  typing: { text?: string; keys?: string[]; submit?: boolean },
  allowed: Allowance,
): Promise<void> {
  const journal = terminal.journal;
  if (!journal.enabled) return;
  const by = agentActor(terminal, agent);
  const hidden = await journal.inputHidden();
  journal.send(by, hidden ? '' : line, allowed);
  journal.input(by, typedText(typing), hidden);
}

/** A line asked about or rejected, unless it goes to a password prompt (then only that it was). */
export async function journalAgentLine(
  terminal: JournaledTerminal,
  agent: string,
  line: string,
  what: { asked: string | null } | { rejected: string; decidedBy: 'deny_list' | 'person' },
): Promise<void> {
  const journal = terminal.journal;
  if (!journal.enabled) return;
  const by = agentActor(terminal, agent);
  const shown = (await journal.inputHidden()) ? '[input to a prompt that echoes nothing]' : line;
  if ('asked' in what) journal.asked(by, shown, what.asked);
  else journal.rejected(by, shown, what.rejected, what.decidedBy);
}
