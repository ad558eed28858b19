/**
 * When the person is called, as plain logic over what the host pushes (the roster and the
 * agents' questions) and an injected clock: which tabs need them, how many things wait, and
 * which notifications to raise. No Svelte and no DOM, so it is tested without a browser.
 */
import { programText } from './tab-title';
import type { AgentsState, TerminalView } from '../../../shared/contract';

/** An agent terminal's program waiting this long with no agent call waiting on it calls the person. */
export const unansweredAfterMs = 5000;
/** A command running at least this long calls the person when it finishes in a background tab. */
export const longCommandMs = 10_000;
/**
 * How long a finished command without its line waits for it. bash names a command after its end
 * marker (its history line comes from a fork, resources/shell/tandem.bash), so a roster can carry
 * the end (exit code, no command) before the line; a shell that keeps no history line for it
 * (ignorespace, ignoredups) never names it, and the call goes out unnamed when this runs out.
 */
export const commandLineWaitMs = 3000;
/** Bounds of what is remembered: question ids already seen, terminals followed. */
export const seenQuestionsMax = 512;

export type AttentionKind = 'approval' | 'handoff' | 'input' | 'finished' | 'pairing';

export interface Call {
  kind: AttentionKind;
  /** The terminal the call is about; null for a pairing request (no terminal yet). */
  terminalId: string | null;
  title: string;
  body: string;
}

/** The agents' questions; pairing requests are optional for callers that have none. */
export type Questions = Pick<AgentsState, 'approvals' | 'handoffs'> & { pairings?: AgentsState['pairings'] };

/** A command as a notification names it: its first line, at most this many characters. */
export const commandShownMax = 80;

export function shownCommand(command: string | null): string {
  if (!command) return 'The command';
  const first = command.split('\n')[0]!.trim();
  return first.length > commandShownMax ? `${first.slice(0, commandShownMax - 1)}…` : first;
}

export interface AttentionInput {
  terminals: readonly TerminalView[];
  questions: Questions;
  activeId: string | null;
  /** The page is visible and has the focus: the person sees the active tab. */
  watching: boolean;
}

interface Followed {
  quietSince: number | null;
  unanswered: boolean;
  /** When the current (or last) command started, and when the terminal stopped running it. */
  runningSince: number | null;
  stoppedAt: number | null;
  finishedAt: string | null;
  /** A long command that finished unnamed, held until its line arrives or `due`. */
  held: Held | null;
}

interface Held {
  finishedAt: string;
  command: string | null;
  exitCode: number | null;
  ranMs: number;
  due: number;
}

function finishedCall(terminal: TerminalView, held: Held): Call {
  const shown = shownCommand(held.command);
  const { exitCode } = held;
  // The exit code is unknown without shell integration: then it is not called a success.
  const title = exitCode === 0 ? `✓ ${shown} finished` : exitCode === null ? `${shown} finished` : `✗ ${shown} failed (exit ${exitCode})`;
  return { kind: 'finished', terminalId: terminal.id, title, body: `in ${terminal.title}, after ${Math.round(held.ranMs / 1000)} s` };
}

export class AttentionRules {
  private readonly seen = new Set<string>();
  private readonly followed = new Map<string, Followed>();
  private seeded = false;

  constructor(private readonly now: () => number) {}

  /** Terminals whose program waits for an answer the agent is not giving. */
  unanswered(id: string): boolean {
    return this.followed.get(id)?.unanswered ?? false;
  }

  /** What waits for the person now: questions (pairing requests too), and prompts no agent answers. */
  count(input: Pick<AttentionInput, 'questions'>): number {
    let unanswered = 0;
    for (const entry of this.followed.values()) if (entry.unanswered) unanswered++;
    return input.questions.approvals.length + input.questions.handoffs.length + (input.questions.pairings?.length ?? 0) + unanswered;
  }

  /**
   * Takes the latest state; returns the calls to raise now and when to look again (a prompt
   * turning unanswered is a matter of time alone). The first update only learns what is there.
   */
  update(input: AttentionInput): { calls: Call[]; wakeAt: number | null } {
    const now = this.now();
    const calls: Call[] = [];
    const seesIt = (terminalId: string): boolean => input.watching && input.activeId === terminalId;
    const byId = new Map(input.terminals.map((terminal) => [terminal.id, terminal]));
    const titleOf = (terminalId: string, fallback: string): string => byId.get(terminalId)?.title ?? fallback;

    for (const item of input.questions.approvals) {
      if (this.remember(item.id) || !this.seeded || seesIt(item.terminalId)) continue;
      // An open is asked before its terminal exists: the notification names what would open.
      const opens = item.kind === 'open';
      calls.push({
        kind: 'approval',
        terminalId: item.terminalId,
        title: opens ? `${item.agent} asks to open a terminal` : `${item.agent} asks to run a command`,
        body: opens
          ? `${item.command}\n${item.env.length > 0 ? `with ${item.env.join(', ')}` : `because ${item.why ?? 'its workspace is wide'}`}`
          : `${item.command}\nin ${titleOf(item.terminalId, item.title)}`,
      });
    }
    for (const item of input.questions.handoffs) {
      if (this.remember(item.id) || !this.seeded || seesIt(item.terminalId)) continue;
      calls.push({
        kind: 'handoff',
        terminalId: item.terminalId,
        title: `${item.agent} asks you to take over`,
        body: `${item.message}\nin ${titleOf(item.terminalId, item.title)}`,
      });
    }

    for (const item of input.questions.pairings ?? []) {
      // No terminal shows a pairing request: it calls whether or not the page is watched.
      if (this.remember(item.id) || !this.seeded) continue;
      calls.push({ kind: 'pairing', terminalId: null, title: `${item.name} asks to pair with Tandem`, body: `${item.exe} (pid ${item.pid})\nin ${item.cwd}` });
    }

    let wakeAt: number | null = null;
    for (const id of this.followed.keys()) if (!byId.has(id)) this.followed.delete(id);
    for (const terminal of input.terminals) {
      let entry = this.followed.get(terminal.id);
      if (!entry) {
        entry = { quietSince: null, unanswered: false, runningSince: null, stoppedAt: null, finishedAt: terminal.lastCommand?.finishedAt ?? null, held: null };
        this.followed.set(terminal.id, entry);
      }
      // A prompt in an agent's terminal: the agent answers most; the person is called when it does not.
      const agentsPrompt = terminal.status === 'waiting_input' && terminal.control === 'agent' && terminal.agent !== null;
      const quiet = agentsPrompt && (!terminal.agentConnected || !terminal.agentListening);
      if (!quiet) {
        entry.quietSince = null;
        entry.unanswered = false;
      } else {
        entry.quietSince ??= now;
        const due = terminal.agentConnected ? entry.quietSince + unansweredAfterMs : now;
        if (!entry.unanswered && now >= due) {
          entry.unanswered = true;
          if (this.seeded && !seesIt(terminal.id)) {
            const why = terminal.agentConnected ? `${terminal.agent} is not answering` : `${terminal.agent} is disconnected`;
            calls.push({
              kind: 'input',
              terminalId: terminal.id,
              title: `${terminal.title} waits for input`,
              body: `${programSays(terminal.program)} waits for input and ${why}.`,
            });
          }
        } else if (!entry.unanswered) wakeAt = Math.min(wakeAt ?? Infinity, due);
      }

      // The command's end and the status change may come in either order: time the run by both.
      const busy = terminal.status === 'running' || terminal.status === 'waiting_input';
      if (busy && (entry.runningSince === null || entry.stoppedAt !== null)) {
        entry.runningSince = now;
        entry.stoppedAt = null;
      } else if (!busy && entry.runningSince !== null) entry.stoppedAt ??= now;
      const last = terminal.lastCommand;
      const finishedAt = last?.finishedAt ?? null;
      // The line of a held command arrived: it goes out named.
      if (entry.held && last && last.finishedAt === entry.held.finishedAt) entry.held.command ??= last.command;
      if (finishedAt !== entry.finishedAt) {
        // A later command ended first: the held one goes out as it is.
        if (entry.held) calls.push(finishedCall(terminal, entry.held));
        entry.held = null;
        entry.finishedAt = finishedAt;
        const ranMs = entry.runningSince === null ? 0 : (entry.stoppedAt ?? now) - entry.runningSince;
        if (this.seeded && last && ranMs >= longCommandMs && !seesIt(terminal.id)) {
          entry.held = { finishedAt: last.finishedAt, command: last.command, exitCode: last.exitCode, ranMs, due: now + commandLineWaitMs };
        }
        entry.runningSince = busy ? now : null;
        entry.stoppedAt = null;
      }
      if (entry.held && (entry.held.command !== null || now >= entry.held.due)) {
        calls.push(finishedCall(terminal, entry.held));
        entry.held = null;
      } else if (entry.held) wakeAt = Math.min(wakeAt ?? Infinity, entry.held.due);
    }
    this.seeded = true;
    return { calls, wakeAt };
  }

  /** True when the question was seen before; bounded, oldest forgotten first. */
  private remember(id: string): boolean {
    if (this.seen.has(id)) return true;
    this.seen.add(id);
    if (this.seen.size > seenQuestionsMax) this.seen.delete(this.seen.values().next().value!);
    return false;
  }
}

/** A program's own title or name in a notification: cleaned, bounded and quoted as the program's, never Tandem's words. */
function programSays(program: string | null): string {
  const text = programText(program);
  return text === null ? 'A program' : `The program \u201c${text}\u201d`;
}
