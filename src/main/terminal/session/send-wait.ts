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
import { commandBegun, type ReadinessEvent, type ReadinessState } from '../readiness/readiness.js';
import { sendPayload } from './send-payload.js';
import { clampInt, type SendRequest, type WaitRequest } from './session-types.js';

/** The parts of a session a send or a wait reads and drives. */
export interface SendWaitTarget {
  readonly clock: Clock;
  readonly history: StreamHistory;
  readonly probeTarget: ProbeTarget;
  /** The reads a wait must see the program go past (session.ts `waitBaseline`). */
  waitBaseline(): ProbeBaseline | null;
  readonly integrationLevel: 'full' | 'end-only' | 'none';
  readonly dialect: ShellDialect | null;
  /** The keys that empty this shell's line editor on this platform (the dialect's `lineClear`). */
  readonly lineClear: LineClear | null;
  readonly maxInputBytes: number;
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
  let mode: ObserverMode;
  if (target.readiness().phase.kind === 'starting') throw new TandemError('busy', 'The terminal is still starting; wait for it and send again.');
  if (target.readiness().phase.kind === 'idle' && text) mode = 'command';
  else if (target.readiness().phase.kind === 'running' && !req.input && !(await target.probeNow())) {
    throw new TandemError('busy', 'A command is running and not waiting for input; wait for it, interrupt it, or pass input: true to type into it.');
  } else mode = 'input';

  const typed = sendPayload(text, keys, {
    command: mode === 'command',
    submit,
    bracketedPaste: Boolean(target.dialect?.bracketedPaste),
    quotedInsert: Boolean(target.dialect?.quotedInsert),
  });
  const body = typed.body;
  // The shell runs what its line holds, so a judged line starts from an empty one (issue 23).
  const atLine = target.readiness().phase.kind === 'idle' || target.readiness().phase.kind === 'continuation';
  const clear = req.clearLine && atLine ? (target.lineClear?.keys ?? '') : '';
  const payload = clear + typed.payload;
  if (Buffer.byteLength(payload) > target.maxInputBytes) {
    throw new TandemError(
      'input_too_large',
      `Input of ${Buffer.byteLength(payload)} bytes exceeds the ${target.maxInputBytes}-byte limit; send it in smaller parts or write it to a file.`,
    );
  }
  const endOnly = target.integrationLevel === 'end-only';
  const ready = target.readiness();
  const phase = ready.phase;
  const running = phase.kind === 'running' ? phase.seq : null;
  const minEndSeq = mode === 'input' && running !== null ? running : ready.lastStartSeq + 1;
  // Finishing a continued line is a command: its output starts at its start marker, after
  // the shell's redraw of the line.
  const completesLine = phase.kind === 'continuation' && !endOnly;
  const collectFromWrite = (mode === 'input' && !completesLine) || endOnly;
  // After its own start marker a new command's reads are post-write by construction;
  // input to a running program, and shells without start markers, need proof of consumption,
  // whose baseline is taken before the write.
  const baseline = mode === 'command' && !endOnly && !target.dialect?.backgroundReader ? null : takeBaseline(target.probeTarget);
  // Written first: the observer and the bookkeeping below happen while the shell reads it. No
  // output can be seen before this turn ends, so none is missed.
  const written = target.write(payload);
  const observer = target.observe({
    mode,
    command: mode === 'command' ? body : null,
    minEndSeq,
    collecting: collectFromWrite,
    echo: collectFromWrite ? body : null,
    baseline,
    waitMs: req.waitMs,
    maxOutputBytes: req.maxOutputBytes,
    signal: req.signal,
    handoff: req.handoff,
  });
  // Submitted: a second command now gets `busy`, not typed into the same line.
  target.feed({ type: 'write', command: mode === 'command' && submit, submits: /[\r\n]/.test(typed.payload) });
  written.catch((error: unknown) => observer.reject(error));
  target.kick();
  return observer.promise;
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
    projector.push(history.slice(start ? start.offset : from.offset, end.offset));
    const after = { offset: end.offset, events: end.id + 1 };
    target.settledAt(after);
    return target.result(projector, 'done', 'marker', end.marker.command, end.marker.exitCode, target.clock.now(), after);
  }
  const ready = target.readiness();
  const phase = ready.phase;
  if (phase.kind === 'exited') {
    const projector = new OutputProjector({ maxBytes: maxOutputBytes });
    projector.push(history.slice(from.offset));
    return target.result(projector, 'exited', 'exit', null, phase.exitCode, target.clock.now(), history.position);
  }
  const running = commandBegun(ready);
  const observer = target.observe({
    mode: 'follow',
    command: null,
    minEndSeq: running && phase.kind === 'running' && phase.seq !== null ? phase.seq : ready.lastStartSeq + 1,
    collecting: running || target.integrationLevel !== 'full',
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
  const begun = running ? events.find((event) => event.marker.kind === 'start') : undefined;
  if (observer.collecting) observer.projectorPush(history.slice(begun ? begun.offset : from.offset));
  if (phase.kind === 'continuation' && from.offset < history.offset) observer.settle('waiting_input', 'continuation');
  target.kick();
  return observer.promise;
}
