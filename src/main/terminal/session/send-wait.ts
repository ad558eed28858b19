/** Starting terminal_send and terminal_wait: whether the call may go ahead, its mode, and the observer that settles it. */
import type { LineClear } from '../../shells/line-clear.js';
import { TandemError } from '../../../shared/errors.js';
import { DEFAULT_LIMITS } from '../../../shared/limits.js';
import type { Evidence, SendResult } from '../../../shared/types.js';
import type { ShellDialect } from '../../shells/dialect.js';
import type { Clock } from '../../clock.js';
import type { StreamHistory, StreamPosition } from '../emulator/history.js';
import { encodeKeys } from './keys.js';
import type { ObserveSpec, ObserverMode, observe } from '../readiness/observer.js';
import { takeBaseline, type ProbeBaseline, type ProbeTarget } from '../readiness/probe.js';
import { OutputProjector } from '../projection/projection.js';
import type { ReadinessEvent, ReadinessState } from '../readiness/readiness.js';
import { decideSend, decideWait, planSend } from '../readiness/decide.js';
import { sendPayload } from './send-payload.js';
import { clampInt, type SendRequest, type WaitRequest } from './session-types.js';
import { longestLine, untilRaw } from './line-room.js';
import type { TtyModes } from '../../pty/termios.js';

/** The parts of a session a send or a wait reads and drives. */
export interface SendWaitTarget {
  readonly clock: Clock;
  /** Input for a running program (not the shell's line): the prompt empties what it leaves unread (agent terminals); 'busy' if it ended first. */
  writeToProgram(data: string): Promise<void>;
  /** An agent's write at the shell's line left text there unsubmitted (true) or submitted it (false). */
  agentLine(left: boolean): void;
  readonly history: StreamHistory;
  /** History text as the agent may read it (session.ts `agentSlice`): the person's private leases become a notice. */
  agentSlice(from: number, to?: number): string;
  readonly probeTarget: ProbeTarget;
  /** The reads a wait must see the program go past (session.ts `waitBaseline`). */
  waitBaseline(): ProbeBaseline | null;
  readonly dialect: ShellDialect | null;
  /** The keys that empty this shell's line editor on this platform (the dialect's `lineClear`). */
  readonly lineClear: LineClear | null;
  readonly maxInputBytes: number;
  /** Bytes of one line the terminal's line mode keeps (line-room.ts); null where there is none (Windows). */
  readonly canonicalRoom: number | null;
  /** The terminal's modes now (null: unreadable). */
  ttyModes(): Promise<TtyModes | null>;
  /** The wait bound of a call that gives none. */
  readonly defaultWaitMs: number;
  readiness(): ReadinessState;
  /** Throws unless the terminal can take a call (not exited, not closing). */
  assertUsable(): void;
  /** Whether the foreground program waits for input now. */
  probeNow(): Promise<unknown>;
  observe(spec: ObserveSpec): ReturnType<typeof observe>;
  feed(event: ReadinessEvent): void;
  write(data: string): Promise<void>;
  /** Starts the probe loop's looks for the new observer. */
  kick(): void;
  decodeCursor(cursor: string): StreamPosition;
  /** Where the last settled call ended: a wait without a cursor starts there. */
  lastSettled(): StreamPosition;
  settledAt(position: StreamPosition): void;
  result(
    projector: OutputProjector,
    status: SendResult['status'],
    evidence: Evidence,
    command: string | null,
    exitCode: number | null,
    startedAt: number,
    position: StreamPosition,
  ): SendResult;
}

export async function send(target: SendWaitTarget, req: SendRequest): Promise<SendResult> {
  target.assertUsable();
  const text = req.text ?? '';
  const keys = req.keys ? encodeKeys(req.keys) : '';
  if (!text && !keys) throw new TandemError('invalid_argument', 'text or keys is required.');
  const submit = req.submit ?? (req.text !== undefined && !req.keys);
  const startedAt = target.clock.now();
  const waitMs = clampInt(req.waitMs, target.defaultWaitMs, 0, DEFAULT_LIMITS.maxWaitMs);
  await roomForLine(target, text, req, waitMs);
  const decision = decideSend(target.readiness(), { text: Boolean(text), input: Boolean(req.input) });
  if (decision.kind === 'starting') throw new TandemError('busy', 'The terminal is still starting; wait for it and send again.');
  if (decision.kind === 'probe' && !(await target.probeNow())) {
    throw new TandemError('busy', 'A command is running and not waiting for input; wait for it, interrupt it, or pass input: true to type into it.');
  }
  const mode: ObserverMode = decision.kind === 'go' ? decision.mode : 'input';
  // Read after the probe: the state may have moved while it looked.
  const plan = planSend(target.readiness(), mode, Boolean(target.dialect?.backgroundReader));

  const typed = sendPayload(text, keys, {
    command: mode === 'command',
    submit,
    bracketedPaste: Boolean(target.dialect?.bracketedPaste),
    quotedInsert: Boolean(target.dialect?.quotedInsert),
  });
  const body = typed.body;
  // The shell runs what its line holds, so a judged line starts from an empty one (issue 23).
  const clear = req.clearLine && plan.atLine ? (target.lineClear?.keys ?? '') : '';
  const payload = clear + typed.payload;
  if (Buffer.byteLength(payload) > target.maxInputBytes) {
    throw new TandemError(
      'input_too_large',
      `Input of ${Buffer.byteLength(payload)} bytes exceeds the ${target.maxInputBytes}-byte limit; send it in smaller parts or write it to a file.`,
    );
  }
  // The person took the terminal while this call waited (a probe, the line editor): nothing goes.
  if (req.handoff?.aborted) throw tookOver();
  const baseline = plan.needsBaseline ? takeBaseline(target.probeTarget) : null;
  // Written first: the observer and the bookkeeping below happen while the shell reads it. No
  // output can be seen before this turn ends, so none is missed. A program that reads part of
  // input and ends leaves the rest for the prompt to empty.
  const toProgram = mode === 'input' && !plan.atLine;
  const written = toProgram ? target.writeToProgram(payload) : target.write(payload);
  const observer = target.observe({
    mode,
    command: mode === 'command' ? body : null,
    minEndSeq: plan.minEndSeq,
    collecting: plan.collectFromWrite,
    echo: plan.collectFromWrite ? body : null,
    baseline,
    // What waiting for the line editor took comes out of the call's bound.
    waitMs: Math.max(0, waitMs - (target.clock.now() - startedAt)),
    maxOutputBytes: req.maxOutputBytes,
    signal: req.signal,
    handoff: req.handoff,
  });
  // Submitted: a second command now gets `busy`, not typed into the same line.
  target.feed({ type: 'write', command: mode === 'command' && submit, submits: /[\r\n]/.test(typed.payload) });
  if (plan.atLine) target.agentLine(!/[\r\n]/.test(typed.payload));
  written.catch((error: unknown) => observer.reject(error));
  target.kick();
  // Input refused because its command ended first: the end the observer saw is no result of it.
  return toProgram ? observer.promise.then((result) => written.then(() => result)) : observer.promise;
}

const tookOver = () => new TandemError('user_control', 'The person took control of this terminal before this was written; nothing was sent.');

/** Bytes a send adds to its text's first or last line (bracketed-paste markers, the line-clear keys). */
const lineFraming = 16;

/**
 * A line longer than the terminal's line mode keeps (line-room.ts) is written only where it
 * arrives whole: at the shell's line once the line editor reads the terminal raw, to a program
 * that reads raw. Where the line mode would cut it, the call is refused and nothing is written.
 */
async function roomForLine(target: SendWaitTarget, text: string, req: SendRequest, waitMs: number): Promise<void> {
  const room = target.canonicalRoom;
  const longest = longestLine(text) + lineFraming;
  // Oversize text is refused below without a wait.
  if (room === null || longest <= room || Buffer.byteLength(text) > target.maxInputBytes) return;
  const phase = target.readiness().phase.kind;
  const tooLong = (who: string) =>
    new TandemError(
      'input_too_large',
      `${who} reads its input in the terminal's line mode, which keeps ${room} bytes of one line; this text has a line of ${longest - lineFraming} bytes. Send shorter lines, or write it to a file and run that.`,
    );
  if (phase === 'idle' || phase === 'continuation') {
    if (!target.dialect?.rawLineEditor) {
      // pwsh's line editor reads raw as well; sh (dash) has none: the line mode is its editor.
      if (target.dialect?.canonicalLine) throw tooLong(`This shell (${target.dialect.name})`);
      return;
    }
    const outcome = await untilRaw(() => target.ttyModes(), target.clock, { ms: waitMs, signals: [req.signal, req.handoff] });
    if (outcome === 'aborted') throw req.signal?.aborted ? (req.signal.reason ?? new Error('aborted')) : tookOver();
    if (outcome === 'timeout') {
      throw new TandemError(
        'busy',
        `The shell has not gone back to its line editor in ${waitMs} ms (its prompt hooks still run), and the terminal's line mode would cut a line this long; send it again.`,
      );
    }
    return;
  }
  // Input to a running program (a send that is not input gets its own answer below).
  if (phase !== 'running' || !req.input) return;
  const modes = await target.ttyModes();
  if (modes?.icanon) throw tooLong('The program');
}

export async function wait(target: SendWaitTarget, req: WaitRequest): Promise<SendResult> {
  const { history } = target;
  const from = req.since !== undefined ? target.decodeCursor(req.since) : target.lastSettled();
  const maxOutputBytes = clampInt(req.maxOutputBytes, DEFAULT_LIMITS.defaultOutputBytes, 1, DEFAULT_LIMITS.maxOutputBytes);
  // A command that ended after the cursor settles the wait at once.
  // The markers after the cursor: a result that reported an end is past it, though nothing was printed since.
  const events = history.eventsAfter(from);
  const end = events.find((event) => event.marker.kind === 'end');
  if (end && end.marker.kind === 'end') {
    const start = events.find((event) => event.marker.kind === 'start' && event.offset <= end.offset);
    const projector = new OutputProjector({ maxBytes: maxOutputBytes });
    projector.push(target.agentSlice(start ? start.offset : from.offset, end.offset));
    const after = { offset: end.offset, events: end.id + 1 };
    target.settledAt(after);
    return target.result(projector, 'done', 'marker', end.marker.command, end.marker.exitCode, target.clock.now(), after);
  }
  const decision = decideWait(target.readiness());
  if (decision.kind === 'exited') {
    const projector = new OutputProjector({ maxBytes: maxOutputBytes });
    projector.push(target.agentSlice(from.offset));
    return target.result(projector, 'exited', 'exit', null, decision.exitCode, target.clock.now(), history.position);
  }
  const observer = target.observe({
    mode: 'follow',
    command: null,
    minEndSeq: decision.minEndSeq,
    collecting: decision.collecting,
    echo: null,
    // Unseen output since the cursor: a program that waits now settles the wait at once.
    // Otherwise a read counts past the last write and the last reported wait: a program that
    // began waiting after its send's bound, printing nothing, settles it; the read the agent
    // was already told about does not (the wait waits for the next event).
    baseline: from.offset < history.offset ? null : target.waitBaseline(),
    waitMs: req.waitMs,
    maxOutputBytes,
    signal: req.signal,
    handoff: req.handoff,
  });
  // A command that began after the cursor: its output starts at its start marker, as above (the
  // line's echo before it is not output). A late approval's wait met it so.
  const begun = decision.begun ? events.find((event) => event.marker.kind === 'start') : undefined;
  if (observer.collecting) observer.projectorPush(target.agentSlice(begun ? begun.offset : from.offset));
  if (decision.continuation && from.offset < history.offset) observer.settle('waiting_input', 'continuation');
  target.kick();
  return observer.promise;
}
