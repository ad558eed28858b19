import { TandemError } from '../../shared/errors.js';
import type { ApprovalInfo, SendResult } from '../../shared/types.js';
import { findRefusedControl, describeControl } from '../../shared/control-chars.js';
import type { ManagedTerminal } from '../host/managed-terminal.js';
import { waitFor } from '../terminal/clock.js';
import { type AgentContext, decorate, emptyResult } from './context.js';
import { grammarsNow, loadGrammars } from './judge/tree-sitter.js';
import { judge } from './policy.js';
import { redirectedBy } from './redirect-check.js';
import type { AgentConnection, ApprovalDecision } from './service.js';
import type { ToolArgs } from './tool-defs.js';

/** How long a send waits for the shell's redirect report of the command that just ended. */
const redirectReportWaitMs = 1000;

const busyWrite = 'You already have a write waiting for approval, queued or running on this terminal; wait for its result first.';

/** terminal_send: judged, approved when it must be, then written on a turn of the terminal's queue. */
export async function send(ctx: AgentContext, connection: AgentConnection, args: ToolArgs<'terminal_send'>, signal?: AbortSignal): Promise<SendResult> {
  const startedAt = ctx.clock.now();
  const terminal = ctx.terminalFor(connection, args.id, 'write');
  const state = ctx.state(terminal);
  const ops = terminal.ops;
  if (terminal.control.controller === 'user') {
    throw new TandemError('user_control', 'The person has control of this terminal; wait for them to hand it back (terminal_wait).');
  }
  if (ops.status === 'exited') throw new TandemError('exited', 'The shell of this terminal has exited; open a new terminal.');
  if (args.text === undefined && !args.keys?.length) throw new TandemError('invalid_argument', 'text or keys is required.');
  const control = findRefusedControl(args.text ?? '');
  if (control) {
    throw new TandemError('invalid_argument', `text contains ${describeControl(control.char)} at position ${control.index}; control characters are refused in text, send keys (Escape, C-c...) instead.`);
  }
  const owner = connection.identity.tokenHash;
  const holds = () => terminal.control.queue.holds(owner) || state.awaiting.has(owner);
  if (holds()) throw new TandemError('busy', busyWrite);
  const waitMs = args.waitMs ?? ctx.host.limits.defaultWaitMs;
  const deadline = startedAt + waitMs;

  let text = args.text;
  let keys = args.keys;
  let approval: ApprovalInfo | null = null;
  // Judged exactly as it will be typed; the person sees keys by name after the text.
  const line = [text ?? '', ...(keys ?? []).map((key) => (key.length === 1 ? key : `<${key}>`))].join(' ').trim();
  const settings = ctx.settingsOf(connection);
  // A grammar that fails to load classifies nothing: lines ask, they are never let through.
  const loaded = grammarsNow();
  const grammars = loaded !== undefined ? loaded : await loadGrammars().catch(() => null);
  const where = ops.judgeContext;
  const judgeLine = (line: string, hasKeys: boolean) =>
    judge(line, settings, {
      hasKeys,
      shell: where.shell,
      grammars,
      operands: { cwd: where.cwd, workspace: where.workspace, roots: { home: ctx.home, tandemDirs: ctx.tandemDirs } },
      home: ctx.home,
    });
  const judgement = judgeLine(text ?? '', (keys?.length ?? 0) > 0);
  let verdict = judgement.verdict;
  let why = judgement.verdict === 'ask' ? judgement.why : null;
  // An allowed line asks when the shell reported what would make its program run something else.
  if (verdict === 'run' && settings.policy !== 'always' && ops.status === 'idle') {
    const report = await ops.freshRedirects(redirectReportWaitMs);
    if (holds()) throw new TandemError('busy', busyWrite);
    const redirected = redirectedBy(text ?? '', report, (expanded) => judgeLine(expanded, false).verdict === 'run');
    if (redirected) {
      verdict = 'ask';
      why = `allowed, but ${redirected}: it could run something else`;
    }
  }
  if (verdict === 'deny') throw new TandemError('rejected', `"${line.slice(0, 80)}" matches the deny list and was not sent.`);

  // The slot is held from here: while asking, while queued, while running.
  if (verdict === 'ask') {
    const request = ctx.questions.ask(ctx.approvals, owner, {
      kind: 'command',
      agent: connection.identity.name,
      terminalId: terminal.id,
      title: terminal.meta.title,
      command: line,
      env: [],
      why,
    });
    // The agent's slot is held while the person decides.
    state.awaiting.add(owner);
    void request.decision.then(() => state.awaiting.delete(owner));
    const decided = await waitFor(ctx.clock, { ms: deadline - ctx.clock.now(), signal, until: request.decision });
    if (decided.kind === 'timeout') {
      // Still pending: it stays for the person, and runs if approved later.
      void runWhenApproved(ctx, connection, terminal, request.decision, args);
      return { ...emptyResult(ops.cursor, terminal.control.controller), status: 'awaiting_approval', evidence: 'bound', approval: { state: 'pending', reason: null }, durationMs: Math.round(ctx.clock.now() - startedAt) };
    }
    if (decided.kind === 'aborted') {
      ctx.approvals.withdraw(request.id);
      state.awaiting.delete(owner);
      throw decided.reason ?? new Error('aborted');
    }
    const decision = decided.value;
    if (decision.state === 'rejected') throw new TandemError('rejected', decision.reason || 'The person rejected this command.');
    approval = { state: decision.state, reason: null };
    if (decision.state === 'edited') {
      // The edited line is what runs: nothing the agent sent rides along.
      text = decision.command;
      keys = undefined;
    }
  }
  if (verdict === 'run') ctx.ran.record(connection.identity.name, { command: line, terminalId: terminal.id, title: terminal.meta.title, at: new Date().toISOString() });
  const turn = ops.turnNow(owner, signal) ?? (await ops.turn(owner, deadline - ctx.clock.now(), signal));
  try {
    state.approved = null;
    const result = await ops.send(turn, { text, keys, submit: args.submit, input: args.input, waitMs: Math.max(0, deadline - ctx.clock.now()), maxOutputBytes: args.maxOutputBytes, signal });
    return decorate(ctx, terminal, result, approval, startedAt);
  } finally {
    turn.release();
  }
}

async function runWhenApproved(ctx: AgentContext, connection: AgentConnection, terminal: ManagedTerminal, decision: Promise<ApprovalDecision>, args: ToolArgs<'terminal_send'>): Promise<void> {
  const answer = await decision;
  // Decided late: it runs only if the agent, the terminal and its control are still as they were.
  if (answer.state === 'rejected' || !ctx.tokens.currentSettings(connection.identity) || !ctx.isConnected(connection.identity.tokenHash) || !ctx.host.has(terminal.id) || terminal.control.controller === 'user') return;
  const state = ctx.state(terminal);
  // A takeover while it waits for its turn means it never runs (user_control at the head).
  const turn = await terminal.ops.turn(connection.identity.tokenHash, Infinity).catch(() => null);
  if (!turn) return;
  try {
    const edited = answer.state === 'edited';
    const line = edited ? answer.command : [args.text ?? '', ...(args.keys ?? [])].join(' ').trim();
    state.approved = { command: line, approval: { state: answer.state, reason: null } };
    await terminal.ops.send(turn, { text: edited ? answer.command : args.text, keys: edited ? undefined : args.keys, submit: args.submit, input: args.input, waitMs: 0 }).catch(() => undefined);
  } finally {
    turn.release();
  }
}

/** terminal_signal: always accepted, outside the queue; settles the agent's running send too. */
export async function signalTerminal(ctx: AgentContext, connection: AgentConnection, args: ToolArgs<'terminal_signal'>, signal?: AbortSignal): Promise<SendResult> {
  const startedAt = ctx.clock.now();
  const terminal = ctx.terminalFor(connection, args.id, 'write');
  const ops = terminal.ops;
  if (terminal.control.controller === 'user') throw new TandemError('user_control', 'The person has control of this terminal; wait for them to hand it back.');
  const cursor = ops.cursor;
  const status = ops.status;
  await ops.signal(args.signal);
  if (status !== 'running' && status !== 'waiting_input') {
    return { ...emptyResult(ops.cursor, terminal.control.controller), status: status === 'exited' ? 'exited' : 'done', evidence: status === 'exited' ? 'exit' : 'marker', cwd: ops.cwd, closedBy: ops.closedBy };
  }
  const result = await ops.wait({ since: cursor, waitMs: 5000, signal });
  return decorate(ctx, terminal, result, null, startedAt);
}
