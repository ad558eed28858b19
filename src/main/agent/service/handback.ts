import type { HandoffInfo, SendResult } from '../../../shared/types.js';
import type { TerminalPort } from '../../host/terminal-port.js';
import { waitFor } from '../../clock.js';
import { type AgentContext, decorate, emptyResult } from './context.js';
import type { AgentConnection } from '../types.js';
import type { ToolArgs } from '../mcp/tool-defs.js';

/** How long a hand-back waits for bash to send the line of the person's last command. */
const handBackLineWaitMs = 3000;

/** terminal_wait: the terminal's own wait, or, while the person holds control, the hand-back. */
export async function wait(ctx: AgentContext, connection: AgentConnection, args: ToolArgs<'terminal_wait'>, signal?: AbortSignal): Promise<SendResult> {
  const startedAt = ctx.clock.now();
  const terminal = ctx.terminalFor(connection, args.id, 'read');
  const waitMs = args.waitMs ?? ctx.host.limits.defaultWaitMs;
  if (terminal.controller === 'user' && ctx.visible(connection, terminal) !== 'shared') {
    return waitForHandBack(ctx, terminal, waitMs, startedAt, signal);
  }
  const result = await terminal.wait({ since: args.since, waitMs, maxOutputBytes: args.maxOutputBytes, signal });
  // Waits after a late approval name the approved command, until one reports it settled.
  const state = ctx.state(terminal);
  const approved = state.approved;
  if (result.status === 'done' || result.status === 'exited') state.approved = null;
  return decorate(ctx, terminal, approved ? { ...result, command: result.command ?? approved.command } : result, approved?.approval ?? null, startedAt);
}

/** While the person holds control, waits settle only on hand-back, decline, exit or the bound. */
async function waitForHandBack(ctx: AgentContext, terminal: TerminalPort, waitMs: number, startedAt: number, signal?: AbortSignal): Promise<SendResult> {
  const outcome = await waitFor<'handed_back' | 'exited'>(ctx.clock, {
    ms: waitMs,
    signal,
    until: (met) => {
      const offExit = terminal.onExit(() => met('exited'));
      const offWake = terminal.onWake(() => {
        if (terminal.controller === 'agent') met('handed_back');
      });
      return () => {
        offExit();
        offWake();
      };
    },
  });
  if (outcome.kind === 'aborted') throw outcome.reason ?? new Error('aborted');
  const base = emptyResult(terminal.cursor, terminal.controller);
  const durationMs = () => Math.round(ctx.clock.now() - startedAt);
  if (outcome.kind === 'met' && outcome.value === 'exited')
    return { ...base, status: 'exited', evidence: 'exit', exitCode: terminal.exitCode, closedBy: terminal.closedBy, durationMs: durationMs() };
  if (outcome.kind === 'timeout') {
    return {
      ...base,
      status: 'human_handoff',
      evidence: 'handoff',
      handoff: { state: terminal.handoff?.state ?? 'accepted', summary: '', note: null },
      durationMs: durationMs(),
    };
  }
  return describeAfterHandBack(ctx, terminal, startedAt);
}

/** The terminal as it is at hand-back, with a summary of what the person ran. */
async function describeAfterHandBack(ctx: AgentContext, terminal: TerminalPort, startedAt: number): Promise<SendResult> {
  // bash reports a finished command's exit code first and its line (read from history in a
  // subshell) just after, then its redirect report: a hand-back right after the person's command
  // waits, bounded, for that report, so the summary names the command instead of `(command)`.
  // Shells that name the command in the end marker report nothing here and do not wait.
  if (terminal.status === 'idle') await terminal.freshRedirects(handBackLineWaitMs);
  const { summary, last, state, note } = terminal.handBack();
  const status = terminal.status;
  let evidence: SendResult['evidence'] = 'handoff';
  let resultStatus: SendResult['status'] = status === 'idle' ? 'done' : status === 'exited' ? 'exited' : 'running';
  if ((status === 'running' || status === 'waiting_input') && (await terminal.probeNow())) resultStatus = 'waiting_input';
  if (resultStatus === 'exited') evidence = 'exit';
  const handoffState: HandoffInfo['state'] = state;
  return {
    ...emptyResult(terminal.cursor, terminal.controller),
    status: resultStatus,
    evidence,
    command: last?.command ?? null,
    exitCode: resultStatus === 'done' ? (last?.exitCode ?? terminal.lastCommandExitCode) : null,
    cwd: terminal.cwd,
    handoff: { state: handoffState, summary, note },
    durationMs: Math.round(ctx.clock.now() - startedAt),
  };
}

/** terminal_handoff: asks the person to take over, then waits for their answer and, if they took it, the hand-back. */
export async function handoff(ctx: AgentContext, connection: AgentConnection, args: ToolArgs<'terminal_handoff'>, signal?: AbortSignal): Promise<SendResult> {
  const startedAt = ctx.clock.now();
  const terminal = ctx.terminalFor(connection, args.id, 'write');
  const request = ctx.questions.ask(ctx.handoffs, connection.identity.tokenHash, {
    agent: connection.identity.name,
    terminalId: terminal.id,
    title: terminal.title,
    message: args.message,
  });
  // A new request replaces a pending one: the person is asked once.
  for (const replaced of terminal.askHandoff(request.id)) ctx.handoffs.withdraw(replaced);
  terminal.journal.handoff('request', { from: `agent:${connection.identity.name}`, to: 'person', note: args.message });
  void request.decision.then((decision) => {
    if (!ctx.host.has(terminal.id)) return;
    terminal.journal.handoff(decision.accept ? 'accepted' : 'declined', {
      from: `agent:${connection.identity.name}`,
      to: 'person',
      accepted: decision.accept,
      note: decision.accept ? null : decision.note,
    });
    terminal.answerHandoff(request.id, decision.accept, decision.accept ? null : decision.note);
  });
  const waitMs = args.waitMs ?? ctx.host.limits.defaultWaitMs;
  const deadline = startedAt + waitMs;
  // Phase 1: until the person answers.
  const answered = await waitFor(ctx.clock, {
    ms: waitMs,
    signal,
    until: (met) => {
      const check = () => {
        if (terminal.controller === 'user' || terminal.handoff?.state !== 'pending') met();
      };
      const off = terminal.onWake(check);
      check();
      return off;
    },
  });
  if (answered.kind === 'aborted') {
    ctx.handoffs.withdraw(request.id);
    terminal.withdrawHandoff(request.id);
    throw answered.reason ?? new Error('aborted');
  }
  const base = { ...emptyResult(terminal.cursor, terminal.controller), cwd: terminal.cwd };
  if (answered.kind === 'timeout')
    return {
      ...base,
      status: 'running',
      evidence: 'bound',
      handoff: { state: 'pending', summary: '', note: null },
      durationMs: Math.round(ctx.clock.now() - startedAt),
    };
  const current = terminal.handoff;
  if (current?.requestId === request.id && current.state === 'declined') {
    terminal.settleHandoff();
    return {
      ...base,
      status: terminal.status === 'idle' ? 'done' : 'running',
      evidence: 'handoff',
      handoff: { state: 'declined', summary: '', note: current.note },
      durationMs: Math.round(ctx.clock.now() - startedAt),
    };
  }
  // Phase 2: accepted; until the person hands back.
  return waitForHandBack(ctx, terminal, Math.max(0, deadline - ctx.clock.now()), startedAt, signal);
}
