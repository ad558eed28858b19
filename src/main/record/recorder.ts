/**
 * One terminal's recording: its asciicast v3 file, written by the .cast writer's thread
 * (cast-writer.ts), and its timeline (timeline.ts) through a bounded sink (sink.ts). Output is
 * only queued where it arrives (an array push); once per `flushMs` on a timer of the injected
 * clock the batch goes to the writer as it was read, and the writer redacts it (output and typed
 * input each as a stream) and encodes it as one `o` event: a flood pays one message per tick,
 * never a call per read, and none of the text work on this thread.
 */
import { hostPlatform } from '../pty/platform.js';
import type { TtyModes } from '../pty/termios.js';
import type { Clock } from '../clock.js';
import type { TerminalSession } from '../terminal/session/session.js';
import { type Actor, actorName, type Allowance, type TerminalJournal } from './journal.js';
import { redact } from './redact.js';
import { type CastCode, type CastFile, castWriter } from './cast-writer.js';
import { AppendSink } from './sink.js';
import { type TimelineType, TimelineWriter } from './timeline.js';

/** Output is batched into one `o` event per this many ms (the clock's). */
export const flushMs = 16;
/** Output waiting for its batch, at most: past it (or past the writer's in-flight bound), output is skipped and a marker says how much. */
export const maxPendingOutputChars = 8 * 1024 * 1024;
/** How long an ended command's record waits for its line (bash sends it after the end marker). */
const commandLineWaitMs = 1000;
/** Kept back under the .cast's bound for the marker that says it was reached, and the exit. */
const castReserve = 4096;

export interface RecorderMeta {
  terminalId: string;
  title: string;
  origin: 'agent' | 'user';
  agent: string | null;
  shell: string;
  cwd: string | null;
  cols: number;
  rows: number;
  sandbox: unknown;
}

export interface RecorderOptions {
  castPath: string;
  timelinePath: string;
  maxCastBytes: number;
  maxTimelineBytes: number;
  clock: Clock;
  /** Wall time in ms since the epoch (the header's timestamp, the timeline's `at`). */
  wall: () => number;
  /** The terminal's tty modes now (tests inject; the default asks the platform). */
  ttyModes?: (session: TerminalSession) => Promise<TtyModes | null>;
}

export class TerminalRecorder implements TerminalJournal {
  readonly enabled = true;
  readonly cast: CastFile;
  /** The .cast's size once closed (the store's total counts it). */
  castBytes = 0;
  readonly timelineSink: AppendSink;
  readonly timeline: TimelineWriter;
  private readonly startedAt: number;
  private pending: string[] = [];
  private pendingChars = 0;
  private pendingAt = 0;
  private skippedChars = 0;
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private castStopped = false;
  /** Output was refused since the last batch the writer took: it must not join the text on either side. */
  private gap = false;
  /** The exit is written: the .cast takes nothing more while it closes. */
  private closing = false;
  private exitWritten = false;
  private lastTypist: string | null = null;
  private lastInputBy: Actor | null = null;
  private pendingSend: { by: Actor; line: string; allowed: Allowance } | null = null;
  private command: { t: number; at: string; by: Actor | null; line: string | null; allowed: Allowance | null; mark: number | null } | null = null;
  /** The session's newest command mark (its start comes just before the phase turns running). */
  private lastMark: number | null = null;
  private ended: ({ command: string | null } & Record<string, unknown>) | null = null;
  private endTimer: ReturnType<typeof setTimeout> | null = null;
  private session: TerminalSession | null = null;
  private unfollow: () => void = () => undefined;
  private closed = false;

  constructor(
    readonly meta: RecorderMeta,
    private readonly opts: RecorderOptions,
  ) {
    this.timelineSink = new AppendSink(opts.timelinePath, { maxBytes: opts.maxTimelineBytes, maxPendingBytes: 1024 * 1024 });
    this.timeline = new TimelineWriter(this.timelineSink);
    this.startedAt = opts.clock.now();
    this.cast = castWriter().open({
      path: opts.castPath,
      maxBytes: opts.maxCastBytes,
      reserve: castReserve,
      startAt: this.startedAt,
      stoppedMarker: `recording stopped: the ${Math.round(opts.maxCastBytes / 1048576)} MiB bound of this terminal's recording was reached (the timeline goes on)`,
      onStopped: (reason, message) => this.castStoppedBy(reason, message),
    });
    const header = {
      version: 3,
      term: { cols: meta.cols, rows: meta.rows, type: 'xterm-256color' },
      timestamp: Math.floor(opts.wall() / 1000),
      // A title is given by whoever opened the terminal, an agent too: it is redacted like output.
      title: redact(meta.title),
      command: meta.shell,
      tags: ['tandem', meta.origin === 'agent' ? `agent:${meta.agent ?? ''}` : 'person'],
    };
    this.cast.raw(`${JSON.stringify(header)}\n`);
    this.record('open', {
      terminal: meta.terminalId,
      title: redact(meta.title),
      origin: meta.origin,
      agent: meta.agent,
      shell: meta.shell,
      cwd: meta.cwd === null ? null : redact(meta.cwd),
      sandbox: meta.sandbox,
    });
  }

  /** Seconds since the recording began: the cast's and the timeline's time base. */
  private get t(): number {
    return (this.opts.clock.now() - this.startedAt) / 1000;
  }

  private at(): string {
    return new Date(this.opts.wall()).toISOString();
  }

  // ---- the session ------------------------------------------------------------------------

  /** Follows a session's output, size, commands and exit (again after a reset). */
  follow(session: TerminalSession, fromOffset: number | null = null): void {
    this.unfollow();
    if (this.session && this.session !== session) this.marker('shell reset');
    this.session = session;
    // What the shell printed before the host took the terminal (its first prompt).
    if (fromOffset !== null && session.streamOffset > fromOffset) this.output(session.outputSince(fromOffset));
    let cols = session.cols;
    let rows = session.rows;
    if (cols !== this.meta.cols || rows !== this.meta.rows) this.event('r', `${cols}x${rows}`);
    let phase = session.phase;
    let lastEnd = session.lastCommand?.finishedAt ?? null;
    const offOutput = session.onOutput((text) => this.output(text));
    const offMarks = session.marks.onUpdate((update) => {
      if (update.kind === 'start') this.lastMark = update.id;
    });
    const offState = session.onStateChange(() => {
      if (session.cols !== cols || session.rows !== rows) {
        cols = session.cols;
        rows = session.rows;
        this.event('r', `${cols}x${rows}`);
      }
      const now = session.phase;
      if (now === 'running' && phase !== 'running') this.commandStarted();
      phase = now;
      const done = session.lastCommand;
      if (done && done.finishedAt !== lastEnd) {
        lastEnd = done.finishedAt;
        this.commandEnded(done.command, done.exitCode, session.cwd);
      } else if (done && done.command !== null && this.ended && this.ended.command === null) {
        // bash names a command just after its end marker.
        this.ended.command = redact(done.command);
        this.finishCommand();
      }
      if (session.status === 'exited') this.exited(session.exitCode);
    });
    this.unfollow = () => {
      offOutput();
      offState();
      offMarks();
    };
  }

  output(text: string): void {
    if (this.castStopped || this.closing) return;
    if (this.pendingChars + text.length > maxPendingOutputChars) {
      this.skippedChars += text.length;
      return;
    }
    if (this.pending.length === 0) this.pendingAt = this.opts.clock.now();
    this.pending.push(text);
    this.pendingChars += text.length;
    this.flushTimer ??= this.opts.clock.setTimeout(() => this.flushOutput(false), flushMs);
  }

  /**
   * Posts the batched output as one `o` event. The writer may hold back its end (what may still
   * become a credential) for the next output, however late; `final` (the exit, the close) lets go of it.
   */
  flushOutput(final: boolean): void {
    if (this.flushTimer) this.opts.clock.clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const pieces = this.pending;
    const chars = this.pendingChars;
    this.pending = [];
    this.pendingChars = 0;
    // Output refused in an earlier batch (the writer was behind) is marked where it went missing.
    this.markSkipped();
    if ((pieces.length > 0 || final) && !this.closing && !this.castStopped) {
      // The writer joins, redacts and encodes (cast-writer.ts).
      if (this.cast.output(pieces, chars, this.pendingAt, final, this.gap)) this.gap = false;
      else if (!this.castStopped) {
        this.skippedChars += chars;
        this.gap = true;
      }
    }
    this.pendingAt = this.opts.clock.now();
    this.markSkipped();
  }

  /** The marker for output not kept; the count waits for a later batch while the disk stays behind. */
  private markSkipped(): void {
    if (this.skippedChars === 0 || this.castStopped || this.closing) return;
    if (this.write('m', `recording skipped ${this.skippedChars} characters of output (the disk was behind)`, this.opts.clock.now(), false))
      this.skippedChars = 0;
  }

  // ---- the journal port -----------------------------------------------------------------

  async inputHidden(): Promise<boolean> {
    const session = this.session;
    // At its prompt the shell's line editor echoes what is typed itself.
    if (!session || session.phase === 'idle' || session.status === 'exited') return false;
    const modes = await (this.opts.ttyModes ?? platformModes)(session);
    // Unknown modes (no stty, Windows) count as hidden: a password is never guessed visible.
    return modes === null || (!modes.echo && modes.icanon);
  }

  programHoldsInput(): boolean {
    const session = this.session;
    return session !== null && session.phase !== 'idle' && session.status !== 'exited';
  }

  input(by: Actor, data: string, hidden: boolean): void {
    this.lastInputBy = by;
    const typist = `input by ${actorName(by)}${by.handoff ? ' (handoff)' : ''}`;
    if (hidden) {
      this.marker(`input hidden: ${typist.slice('input by '.length)}`);
      this.record('input_hidden', { by: actorName(by), handoff: by.handoff === true });
      return;
    }
    if (typist !== this.lastTypist) {
      this.lastTypist = typist;
      this.marker(typist);
    }
    // Redacted in the writer, as a stream: a credential typed a key at a time is still one value.
    this.event('i', data);
  }

  send(by: Actor, line: string, allowed: Allowance): void {
    this.pendingSend = { by, line: redact(line), allowed };
    this.record('send', { by: actorName(by), handoff: by.handoff === true, line: redact(line), allowed });
  }

  settled(by: Actor, result: { status: string; evidence: string; exitCode: number | null; cwd: string | null }): void {
    if (result.status === 'done' || result.status === 'exited') return;
    const evidence = redact(result.evidence);
    this.record('wait', { by: actorName(by), status: result.status, evidence, cwd: result.cwd === null ? null : redact(result.cwd) });
    if (result.status === 'waiting_input') this.marker(`waiting for input (${evidence})`);
  }

  rejected(by: Actor, line: string, reason: string, decidedBy: 'deny_list' | 'person'): void {
    this.record('rejection', { by: actorName(by), line: redact(line), reason: redact(reason), decidedBy });
    this.marker(`rejected (${decidedBy === 'person' ? 'by the person' : 'deny list'}): ${redact(line).slice(0, 200)}`);
  }

  asked(by: Actor, line: string, why: string | null): void {
    this.record('approval_asked', { by: actorName(by), line: redact(line), why });
    this.marker(`approval asked: ${redact(line).slice(0, 200)}`);
  }

  handoff(kind: string, fields: { from?: string; to?: string; note?: string | null; accepted?: boolean }): void {
    const note = fields.note ? redact(fields.note) : (fields.note ?? null);
    this.record('handoff', { kind, ...fields, note });
    this.marker(`handoff ${kind}${fields.to ? ` to ${fields.to}` : ''}${note ? `: ${note.slice(0, 200)}` : ''}`);
  }

  policyChanged(fields: Record<string, unknown>): void {
    this.record('policy', fields);
  }

  // ---- commands, exit, close ----------------------------------------------------------------

  private commandStarted(): void {
    this.finishCommand();
    this.flushOutput(false);
    const send = this.pendingSend;
    this.pendingSend = null;
    // The command is the last typist's: an agent's judged line carries how it was allowed.
    const by = this.lastInputBy;
    const fromSend = send && by && by.who === 'agent' && actorName(send.by) === actorName(by);
    this.command = { t: this.t, at: this.at(), by, line: fromSend ? send.line : null, allowed: fromSend ? send.allowed : null, mark: this.lastMark };
    this.lastMark = null;
    this.marker(`command start${by ? ` by ${actorName(by)}` : ''}${fromSend ? `: ${send.line.slice(0, 200)}` : ''}`);
  }

  private commandEnded(line: string | null, exitCode: number | null, cwd: string | null): void {
    this.finishCommand();
    this.flushOutput(false);
    const started = this.command;
    this.command = null;
    const command = line !== null ? redact(line) : (started?.line ?? null);
    // A directory's name is output like any other (a folder named `GITHUB_TOKEN=…`).
    cwd = cwd === null ? null : redact(cwd);
    this.marker(`command end: exit ${exitCode ?? 'unknown'}${cwd ? ` · ${cwd}` : ''}`);
    this.ended = {
      by: started?.by ? actorName(started.by) : null,
      handoff: started?.by?.handoff === true,
      command,
      allowed: started?.allowed ?? null,
      start: started?.t ?? null,
      startedAt: started?.at ?? null,
      end: this.t,
      endedAt: this.at(),
      exitCode,
      cwd,
      sandbox: this.meta.sandbox,
      // The command's mark in the terminal's views (the timeline jumps to it); a reset renumbers.
      mark: started?.mark ?? null,
    };
    // Its line may follow the end marker (bash): the record waits for it, the next command, the close, or this.
    if (command !== null) this.finishCommand();
    else this.endTimer = this.opts.clock.setTimeout(() => this.finishCommand(), commandLineWaitMs);
  }

  /** Writes the ended command's record, once. */
  private finishCommand(): void {
    if (this.endTimer) this.opts.clock.clearTimeout(this.endTimer);
    this.endTimer = null;
    const ended = this.ended;
    this.ended = null;
    if (ended) this.record('command', ended);
  }

  private exited(exitCode: number | null): void {
    if (this.exitWritten) return;
    this.exitWritten = true;
    this.flushOutput(true);
    this.write('x', String(exitCode ?? ''), this.opts.clock.now(), true);
  }

  /** The terminal left the host: the rest of the output, the exit, the `close` record, then the files. */
  async close(cause: string, exitCode: number | null): Promise<void> {
    if (this.closing) return;
    this.finishCommand();
    this.flushOutput(true);
    this.exited(exitCode);
    this.closing = true;
    this.unfollow();
    // The writer has answered for everything before the exit: a bound it reached is in the timeline before `close`.
    await this.cast.drained();
    this.record('close', { cause, exitCode });
    // The timeline's last hash, kept in the .cast (a comment line, which v3 readers skip): an edit
    // of the timeline's last record has no next line to break, so it is checked against this.
    const head = this.timeline.head;
    this.cast.raw(`# timeline-head ${head.count} ${head.hash ?? ''}\n`);
    this.closed = true;
    const [castBytes] = await Promise.all([this.cast.close(), this.timelineSink.close()]);
    this.castBytes = castBytes;
  }

  /** Everything recorded so far is on disk. */
  async flushed(): Promise<void> {
    this.flushOutput(false);
    await Promise.all([this.cast.drained(), this.timelineSink.flushed()]);
  }

  get live(): boolean {
    return !this.closed;
  }

  // ---- writing ----------------------------------------------------------------------------

  private marker(label: string): void {
    this.event('m', label);
  }

  private event(code: CastCode, data: string, at = this.opts.clock.now()): void {
    if (this.closing) return;
    // Output already batched goes first: events stay in the order they happened.
    if (code !== 'o' && this.pending.length > 0) this.flushOutput(false);
    this.write(code, data, at, false);
  }

  /** Posts one event to the writer; false when it was not taken (the recording stopped, or the writer is behind). */
  private write(code: CastCode, data: string, at: number, reserved: boolean): boolean {
    if (this.castStopped && !reserved) return false;
    return this.cast.event(code, data, at, reserved);
  }

  /** The writer stopped the .cast: its bound was reached (it wrote the marker), or the disk failed. */
  private castStoppedBy(reason: 'size' | 'disk', message: string | null): void {
    if (this.castStopped) return;
    this.castStopped = true;
    this.pending = [];
    this.pendingChars = 0;
    this.record('recording', { state: 'stopped', reason, ...(message ? { message } : {}) });
  }

  private record(type: TimelineType, fields: Record<string, unknown>): void {
    if (this.closed) return;
    this.timeline.append(type, this.t, this.at(), fields);
  }
}

/** The platform's modes for the session's terminal (stty on POSIX, nothing on Windows). */
function platformModes(session: TerminalSession): Promise<TtyModes | null> {
  const tty = hostPlatform.ttyPath(session.pid, undefined);
  return tty ? hostPlatform.ttyModes(tty) : Promise.resolve(null);
}
