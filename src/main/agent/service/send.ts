import { TandemError } from '../../../shared/errors.js';
import type { ApprovalInfo, SendResult } from '../../../shared/types.js';
import { findRefusedControl, describeControl } from '../../../shared/control-chars.js';
import type { AgentWrite, TerminalPort } from '../../host/terminal-port.js';
import { waitFor } from '../../clock.js';
import { type AgentContext, decorate, emptyResult } from './context.js';
import { gitConfigFor, type LineContext } from '../judge/judge-line.js';
import { heldStateProblem, lineSubmitted } from '../judge/terminal-state.js';
import { grammarsNow, loadGrammars } from '../judge/tree-sitter.js';
import { judge } from '../judge/policy.js';
import { atFreshPrompt, type LineReader, planSend, resetLine, type SendPlan, shellLineOf, typedEdit, typedUnjudged } from '../judge/shell-line.js';
import { redirectedBy } from '../judge/redirect-check.js';
import type { AgentConnection, ApprovalDecision } from '../types.js';
import type { ToolArgs } from '../mcp/tool-defs.js';
import { agentActor, journalAgentLine, journalAgentWrite } from '../../record/agent-hooks.js';

/** How long a send waits for the shell's redirect report of the command that just ended. */
const redirectReportWaitMs = 1000;

const busyWrite = 'You already have a write waiting for approval, queued or running on this terminal; wait for its result first.';

/** terminal_send: judged, approved when it must be, then written on a turn of the terminal's queue. */
export async function send(ctx: AgentContext, connection: AgentConnection, args: ToolArgs<'terminal_send'>, signal?: AbortSignal): Promise<SendResult> {
  const startedAt = ctx.clock.now();
  const terminal = ctx.terminalFor(connection, args.id, 'write');
  const state = ctx.state(terminal);
  if (terminal.controller === 'user') {
    throw new TandemError('user_control', 'The person has control of this terminal; wait for them to hand it back (terminal_wait).');
  }
  if (terminal.status === 'exited') throw new TandemError('exited', 'The shell of this terminal has exited; open a new terminal.');
  if (args.text === undefined && !args.keys?.length) throw new TandemError('invalid_argument', 'text or keys is required.');
  const control = findRefusedControl(args.text ?? '');
  if (control) {
    throw new TandemError(
      'invalid_argument',
      `text contains ${describeControl(control.char)} at position ${control.index}; control characters are refused in text, send keys (Escape, C-c...) instead.`,
    );
  }
  const owner = connection.identity.tokenHash;
  const holds = () => terminal.holds(owner) || state.awaiting.has(owner);
  if (holds()) throw new TandemError('busy', busyWrite);
  const waitMs = args.waitMs ?? ctx.host.limits.defaultWaitMs;
  const deadline = startedAt + waitMs;

  const settings = ctx.settingsOf(connection);
  // The line the shell will run: what this send completes, not this send alone (shell-line.ts).
  const shellLine = shellLineOf(terminal);
  const reader = terminal.lineReader;
  atFreshPrompt(shellLine, reader);
  const where = terminal.judgeContext;
  const judged = settings.policy === 'always' ? null : planSend(shellLine, reader, terminal.status === 'waiting_input', where.shell, args, where.drainsUnread);
  const plan: Plan = { reader, version: shellLine.version, judged };
  let text: string | undefined;
  let approval: ApprovalInfo | null = null;
  // Judged exactly as it will run; the person sees keys by name after the text.
  const line = judged ? judged.shown : [args.text ?? '', ...(args.keys ?? []).map((key) => (key.length === 1 ? key : `<${key}>`))].join(' ').trim();
  // A grammar that fails to load classifies nothing: lines ask, they are never let through.
  const loaded = grammarsNow();
  const grammars = loaded !== undefined ? loaded : await loadGrammars().catch(() => null);
  const lineText = judged ? judged.line : (args.text ?? '');
  const hasKeys = judged ? judged.hasKeys : (args.keys?.length ?? 0) > 0;
  const lineContext: LineContext = {
    shell: where.shell,
    grammars,
    operands: where.cwdRemoved ? null : { cwd: where.cwd, workspace: where.workspace, roots: { home: ctx.home, tandemDirs: ctx.tandemDirs } },
    home: ctx.home,
    env: where.env,
    openEnvNames: Object.keys(where.openEnv),
  };
  // The judge is synchronous: the git configuration it needs is found first, git running as a
  // child process the event loop does not wait on (a line typed without submit runs nothing yet).
  if (settings.policy === 'ask-unless-allowed' && !hasKeys && !judged?.deferred) {
    lineContext.gitConfig = await gitConfigFor(lineText, settings.allow, lineContext);
    if (holds()) throw new TandemError('busy', busyWrite);
  }
  const judgeLine = (line: string, hasKeys: boolean) => judge(line, settings, { ...lineContext, hasKeys });
  const judgement = judgeLine(lineText, hasKeys);
  let verdict = judgement.verdict;
  let why = judgement.verdict === 'ask' ? judgement.why : null;
  if (judged?.mustAsk && verdict !== 'deny') {
    why = verdict === 'ask' ? `${judged.mustAsk}; ${why}` : judged.mustAsk;
    verdict = 'ask';
  }
  // Typed without submit at the shell's line: nothing runs yet, the whole line is judged when it is submitted.
  if (judged?.deferred && verdict === 'ask' && settings.policy === 'ask-unless-allowed') {
    verdict = 'run';
    why = null;
  }
  // An allowed line asks in a terminal whose state the judge cannot see: opened with variables
  // the person approved, or changed by an earlier line (judge/terminal-state.ts).
  if (verdict === 'run' && settings.policy === 'ask-unless-allowed' && !judged?.deferred) {
    const held = heldStateProblem(terminal, where.openEnv);
    if (held) {
      verdict = 'ask';
      why = `allowed, but ${held}`;
    }
  }
  // An allowed line asks when the shell reported what would make its program run something else.
  if (verdict === 'run' && settings.policy !== 'always' && terminal.status === 'idle' && !judged?.deferred) {
    const report = await terminal.freshRedirects(redirectReportWaitMs);
    if (holds()) throw new TandemError('busy', busyWrite);
    const redirected = redirectedBy(lineText, report, (expanded) => judgeLine(expanded, false).verdict === 'run');
    if (redirected) {
      verdict = 'ask';
      why = `allowed, but ${redirected}: it could run something else`;
    }
  }
  if (verdict === 'deny') await journalAgentLine(terminal, connection.identity.name, line, { rejected: 'matches the deny list', decidedBy: 'deny_list' });
  if (verdict === 'deny') throw new TandemError('rejected', `"${line.slice(0, 80)}" matches the deny list and was not sent.`);

  // The slot is held from here: while asking, while queued, while running.
  if (verdict === 'ask') {
    const request = ctx.questions.ask(ctx.approvals, owner, {
      kind: 'command',
      agent: connection.identity.name,
      terminalId: terminal.id,
      title: terminal.title,
      command: line,
      env: [],
      why,
    });
    // The agent's slot is held while the person decides.
    state.awaiting.add(owner);
    void journalAgentLine(terminal, connection.identity.name, line, { asked: why });
    void request.decision.then(() => state.awaiting.delete(owner));
    const decided = await waitFor(ctx.clock, { ms: deadline - ctx.clock.now(), signal, until: request.decision });
    if (decided.kind === 'timeout') {
      // Still pending: it stays for the person, and runs if approved later.
      void runWhenApproved(ctx, connection, terminal, request.decision, args, plan);
      return {
        ...emptyResult(terminal.cursor, terminal.controller),
        status: 'awaiting_approval',
        evidence: 'bound',
        approval: { state: 'pending', reason: null },
        durationMs: Math.round(ctx.clock.now() - startedAt),
      };
    }
    if (decided.kind === 'aborted') {
      ctx.approvals.withdraw(request.id);
      state.awaiting.delete(owner);
      throw decided.reason ?? new Error('aborted');
    }
    const decision = decided.value;
    if (decision.state === 'rejected')
      await journalAgentLine(terminal, connection.identity.name, line, { rejected: decision.reason || 'rejected', decidedBy: 'person' });
    if (decision.state === 'rejected') throw new TandemError('rejected', decision.reason || 'The person rejected this command.');
    approval = { state: decision.state, reason: null };
    // The edited line is what runs: nothing the agent sent rides along.
    if (decision.state === 'edited') text = decision.command;
  }
  if (verdict === 'run')
    ctx.ran.record(connection.identity.name, { command: line, terminalId: terminal.id, title: terminal.title, at: new Date().toISOString() });
  // The host holds the turn from here to the end of the write (terminal-port.ts); what to type is decided once it came.
  const result = await terminal.write(owner, { ms: deadline - ctx.clock.now(), signal }, async () => {
    state.approved = null;
    const typing = typedAs(terminal, plan, args, approval?.state === 'edited' ? text! : null);
    if (!typing) throw new TandemError('busy', 'The terminal moved on while this send waited (a command ended or began, or its line changed); send it again.');
    await journalAgentWrite(
      terminal,
      connection.identity.name,
      approval?.state === 'edited' ? text! : line,
      typing,
      approval
        ? approval.state === 'edited'
          ? 'edited'
          : 'approval'
        : settings.policy === 'always'
          ? 'always'
          : judged?.deferred
            ? 'unjudged'
            : 'allow_entry',
    );
    return { ...typing, input: args.input, waitMs: Math.max(0, deadline - ctx.clock.now()), maxOutputBytes: args.maxOutputBytes, signal };
  });
  // prepare never declines here (it throws `busy`), so a result always comes: the port's types say so.
  terminal.journal.settled(agentActor(terminal, connection.identity.name), result);
  return decorate(ctx, terminal, result, approval, startedAt);
}

/**
 * Keys that can submit the line as the line editor holds it (Enter and its control forms,
 * bash's operate-and-get-next, a C-x or Escape/Meta sequence such as edit-and-execute): what
 * they submit is not known. Other keys only edit the line, which the next send empties or asks
 * about (shell-line.ts).
 */
function submittingKeys(keys: readonly string[]): boolean {
  return keys.some((key) => ['enter', 'c-j', 'c-m', 'c-o', 'c-x', 'escape'].includes(key.toLowerCase()));
}

interface Plan {
  reader: LineReader;
  version: number;
  judged: SendPlan | null;
}

/**
 * What to write now that the turn came: the planned line if the terminal is as it was when the
 * line was judged (else null: the judged line is no longer the line the shell would run), and
 * the line's record updated as the write goes out.
 */
function typedAs(
  terminal: TerminalPort,
  plan: Plan,
  args: ToolArgs<'terminal_send'>,
  edit: string | null,
): Pick<AgentWrite, 'text' | 'keys' | 'submit' | 'clearLine'> | null {
  const line = shellLineOf(terminal);
  const reader = terminal.lineReader;
  // Every line submitted, by any route, is read for what it changes of the shell's state
  // (null: what was submitted is not known); later allow-listed lines ask after a change.
  const submitted = (text: string | null) => lineSubmitted(terminal, text, terminal.judgeContext.shell, grammarsNow() ?? null, reader === 'program');
  if (!plan.judged) {
    const keys = (args.keys?.length ?? 0) > 0;
    if (keys) {
      if (submittingKeys(args.keys!)) submitted(null);
    } else if (args.submit ?? args.text !== undefined)
      submitted(reader === 'program' || (line.typed === '' && !line.keyed && reader === 'prompt') ? (args.text ?? '') : null);
    typedUnjudged(line, reader, args);
    return { text: args.text, keys: args.keys, submit: args.submit };
  }
  if (reader !== plan.reader || line.version !== plan.version) return null;
  if (edit !== null) {
    // The person's edit is the whole line: nothing the agent typed before rides along.
    const submits = plan.judged.submit !== false;
    if (submits) submitted(reader === 'continuation' ? (line.held === null ? null : line.held + edit) : edit);
    typedEdit(line, edit, submits);
    return { text: edit, keys: undefined, submit: plan.judged.submit, clearLine: reader === 'prompt' };
  }
  if (plan.judged.hasKeys) {
    if (submittingKeys(plan.judged.keys ?? [])) submitted(null);
  } else if (!plan.judged.deferred) submitted(plan.judged.mustAsk ? null : plan.judged.line);
  plan.judged.typedNow(line);
  return { text: plan.judged.text, keys: plan.judged.keys, submit: plan.judged.submit, clearLine: plan.judged.clearLine };
}

async function runWhenApproved(
  ctx: AgentContext,
  connection: AgentConnection,
  terminal: TerminalPort,
  decision: Promise<ApprovalDecision>,
  args: ToolArgs<'terminal_send'>,
  plan: Plan,
): Promise<void> {
  const answer = await decision;
  if (answer.state === 'rejected' && ctx.host.has(terminal.id))
    void journalAgentLine(terminal, connection.identity.name, plan.judged?.shown ?? args.text ?? '', {
      rejected: answer.reason || 'rejected',
      decidedBy: 'person',
    });
  // Decided late: it runs only if the agent, the terminal and its control are still as they were.
  if (
    answer.state === 'rejected' ||
    !ctx.tokens.currentSettings(connection.identity) ||
    !ctx.isConnected(connection.identity.tokenHash) ||
    !ctx.host.has(terminal.id) ||
    terminal.controller === 'user'
  )
    return;
  const state = ctx.state(terminal);
  // A takeover while it waits for its turn means it never runs (user_control at the head).
  await terminal
    .write(connection.identity.tokenHash, { ms: Infinity }, async () => {
      const edited = answer.state === 'edited';
      const typing = typedAs(terminal, plan, args, edited ? answer.command : null);
      // The line the person approved is no longer the line the shell would run: nothing is typed.
      if (!typing) return null;
      const line = edited ? answer.command : (plan.judged?.shown ?? [args.text ?? '', ...(args.keys ?? [])].join(' ').trim());
      state.approved = { command: line, approval: { state: answer.state, reason: null } };
      await journalAgentWrite(terminal, connection.identity.name, line, typing, edited ? 'edited' : 'approval');
      return { ...typing, input: args.input, waitMs: 0 };
    })
    .catch(() => undefined);
}

/** terminal_signal: always accepted, outside the queue; settles the agent's running send too. */
export async function signalTerminal(
  ctx: AgentContext,
  connection: AgentConnection,
  args: ToolArgs<'terminal_signal'>,
  signal?: AbortSignal,
): Promise<SendResult> {
  const startedAt = ctx.clock.now();
  const terminal = ctx.terminalFor(connection, args.id, 'write');
  if (terminal.controller === 'user') throw new TandemError('user_control', 'The person has control of this terminal; wait for them to hand it back.');
  const cursor = terminal.cursor;
  const status = terminal.status;
  // An interrupt at the prompt discards the line: what was typed is gone, and the next send empties the line anyway.
  resetLine(shellLineOf(terminal));
  await terminal.signal(args.signal);
  if (status !== 'running' && status !== 'waiting_input') {
    return {
      ...emptyResult(terminal.cursor, terminal.controller),
      status: status === 'exited' ? 'exited' : 'done',
      evidence: status === 'exited' ? 'exit' : 'marker',
      cwd: terminal.cwd,
      closedBy: terminal.closedBy,
    };
  }
  const result = await terminal.wait({ since: cursor, waitMs: 5000, signal });
  return decorate(ctx, terminal, result, null, startedAt);
}
