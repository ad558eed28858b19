import { TandemError } from '../../shared/errors.js';
import { DEFAULT_LIMITS } from '../../shared/limits.js';
import type { Controller, TerminalInfo } from '../../shared/types.js';
import type { TerminalView } from '../../shared/contract.js';
import type { Clock } from '../clock.js';
import type { TerminalSession } from '../terminal/session/session.js';
import { ProgramTitle } from '../terminal/emulator/program-title.js';
import { hostPlatform } from '../pty/platform.js';
import { terminalProcessGroups } from '../pty/tree.js';
import { TerminalControl } from './terminal-control.js';
import { TerminalOps } from './terminal-ops.js';
import { Attachment, type FrameSink, outputFrom } from './attachment.js';
import type { FrameMark, SnapshotMarks } from '../../shared/command-marks.js';
import type { MarkUpdate } from '../terminal/emulator/command-marks.js';
import { noJournal, type TerminalJournal } from '../record/journal.js';
import { frameMaxChars, highWatermarkChars, lowWatermarkChars, maxBufferedChars, stalledAfterMs } from '../../shared/wire.js';

/** Reads arriving this close together are batched into one frame (of about `frameMaxChars`). */
export const frameBatchMs = 8;
/**
 * A viewer frame this large means output is streaming: the next reads are worth batching. Not
 * the PTY pump's `streamingChars` (src/main/pty/pump.ts, 32K posted in 10 ms), which decides how
 * often the pump thread posts reads; this one decides how frames to viewers are batched.
 */
const streamingFrameChars = 8 * 1024;
/** Mark news kept for a new viewer whose snapshot the parser had not reached them in (it lags a flood by a window at most). */
const recentMarksKept = 256;

export interface FlowOptions {
  /** A viewer acknowledging nothing this long while the PTY waits for it is dropped. */
  stalledAfterMs: number;
}

/** What the host knows about a terminal beyond its session; `agent` opened it or holds it. */
export type TerminalMeta = Pick<TerminalInfo, 'title' | 'origin' | 'agent' | 'agentConnected' | 'control' | 'shared'> & {
  /** The display name of the agent a person's terminal is handed to. */
  handedTo: string | null;
  /** Whose token it is handed to: authority follows the token, never the name. */
  handedToKey: string | null;
};

/**
 * A terminal as the host keeps it: the engine session, what the person and agents may do with
 * it, and its viewers with flow control. Output is batched once per event-loop turn.
 */
export class ManagedTerminal {
  readonly attachments = new Map<string, Attachment>();
  /** The latest attachment owns input and resize; the others are read-only. */
  private writer: Attachment | null = null;
  private pending: string[] = [];
  /** Command marks' news since the last flush, and the latest ones for new viewers. */
  private pendingMarks: MarkUpdate[] = [];
  private recentMarks: MarkUpdate[] = [];
  private pendingStart = 0;
  private offset = 0;
  private flushScheduled = false;
  private flushImmediate = false;
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private lastFlushAt = -Infinity;
  private lastFlushChars = 0;
  private pendingChars = 0;
  private paused = false;
  private stallTimer: ReturnType<typeof setTimeout> | null = null;
  private unsubscribe: () => void;
  private program!: ProgramTitle;
  /** The window title now was set by the person's output under their lease (TerminalOps hides it from agents). */
  titleIsPersons = false;
  /** The terminal's processes (pid to process group) when the person took the terminal: theirs are the others. */
  private processesBefore: Map<number, number> | null = null;
  /**
   * A lease handed back privately stays the person's until the agent's next write finds it done
   * (`agentWriting`): this says when it is, from the lines the person submitted and the processes
   * they started under the lease.
   */
  private leaseDone: (() => boolean) | null = null;
  /**
   * The person's submitted lines have all run once the shell has drawn this many prompts: a line
   * typed at a prompt ends at the next one, a line typed ahead while a command runs at the one
   * after (black-box round s42 N5 and s41 H5: Enter and hand-back in the same instant, and a
   * typed-ahead line the agent's Ctrl+C releases).
   */
  private owedPrompts = 0;
  /** Programs (process groups) seen reading the terminal under the lease: the Enters typed to them are theirs. */
  private readonly readers = new Set<number>();
  /** The person left typed text at the shell's prompt under their lease (not submitted, not erased). */
  private personLeftLine = false;
  /** Agent calls (send, wait, handoff) waiting on this terminal now. */
  private agentCalls = 0;
  /** Who drives this terminal, the handoff and the write queue: `meta.control` mirrors it. */
  readonly control: TerminalControl;
  /** What the agent layer may do with this terminal; it never reaches the session itself. */
  readonly ops: TerminalOps;
  /** The terminal's recording and timeline (src/main/record), or the no-op when not recorded. */
  journal: TerminalJournal = noJournal;
  /** Told once per shell when it exits (the host writes the tab for the next start). */
  onExited: (() => void) | null = null;

  constructor(
    public session: TerminalSession,
    public meta: TerminalMeta,
    private readonly clock: Clock,
    private readonly onChange: () => void,
    private readonly flow: FlowOptions = { stalledAfterMs },
    maxQueued: number = DEFAULT_LIMITS.maxQueuedOperations,
  ) {
    this.unsubscribe = this.wire(session);
    this.control = new TerminalControl(meta.control, maxQueued, (control: Controller) => {
      this.meta.control = control;
      this.leaseChanged(control);
      this.onChange();
    });
    this.ops = new TerminalOps(this, clock);
  }

  get id(): string {
    return this.session.id;
  }

  private wire(session: TerminalSession): () => void {
    this.offset = session.streamOffset;
    this.pendingStart = this.offset;
    const offOutput = session.onOutput((text) => this.onOutput(text));
    const offMarks = session.marks.onUpdate((update) => this.onMark(update));
    const program = new ProgramTitle(session.headless.terminal, () => hostPlatform.foregroundProgram(session.pid), this.clock, this.onChange);
    // A title set by the person's output under their lease stays theirs until another replaces it.
    this.titleIsPersons = false;
    const offTitle = session.headless.terminal.onTitleChange(() => {
      this.titleIsPersons = this.meta.origin === 'agent' && (session.personSpans.open || session.personSpans.covers(session.headless.parsedOffset));
    });
    this.program = program;
    let exited = false;
    const offState = session.onStateChange(() => {
      if (session.status === 'exited') this.flush();
      if (session.status === 'exited' && !exited) {
        exited = true;
        this.onExited?.();
      }
      program.stateChanged(session.status === 'idle');
      if (session.status === 'waiting_input' && session.personSpans.open) this.noteReader(hostPlatform.foregroundGroup(session.pid));
      this.onChange();
    });
    return () => {
      offOutput();
      offMarks();
      offState();
      program.dispose();
      offTitle.dispose();
    };
  }

  /** Reset: a fresh shell under the same id; viewers stay and see the new screen. */
  replaceSession(session: TerminalSession): void {
    this.unsubscribe();
    this.session = session;
    this.leaseDone = null;
    this.owedPrompts = 0;
    this.unsubscribe = this.wire(session);
    this.paused = false;
    // Reset under the person's lease: the new shell is theirs too until they hand back.
    if (this.control.controller === 'user') this.leaseChanged('user');
    // Viewers start over: a full reset, then everything the new shell printed while starting.
    const startup = session.outputSince(0, this.offset);
    for (const attachment of this.attachments.values()) {
      attachment.fromOffset = this.offset;
      attachment.send(`\x1bc${startup}`);
    }
  }

  view(): TerminalView {
    const s = this.session;
    return {
      id: s.id,
      title: this.meta.title,
      origin: this.meta.origin,
      agent: this.meta.agent,
      agentConnected: this.meta.agentConnected,
      control: this.meta.control,
      shared: this.meta.shared,
      shell: s.shell.name,
      integration: s.integration,
      pid: s.pid,
      cwd: s.cwd,
      cols: s.cols,
      rows: s.rows,
      status: s.status,
      exitCode: s.exitCode,
      lastCommand: s.lastCommand,
      handedTo: this.meta.handedTo,
      sandbox: s.sandbox,
      ...(s.toolFilesChanged.length > 0 ? { toolFilesChanged: [...s.toolFilesChanged] } : {}),
      program: s.status === 'exited' ? null : this.program.value,
      agentListening: this.agentCalls > 0,
      ...(this.leaseDone !== null ? { keptPrivate: true } : {}),
    };
  }

  // ---- output to viewers ----------------------------------------------------------------------

  private onOutput(text: string): void {
    this.pending.push(text);
    this.pendingChars += text.length;
    this.offset += text.length;
    if (this.attachments.size === 0) {
      this.pending = [];
      this.pendingChars = 0;
      this.pendingStart = this.offset;
      return;
    }
    if (this.pendingChars >= frameMaxChars) this.scheduleFlush(0);
    // A keystroke's echo goes out at once; a stream of full reads is batched into larger frames.
    else this.scheduleFlush(this.lastFlushChars >= streamingFrameChars && this.clock.now() - this.lastFlushAt < frameBatchMs ? frameBatchMs : 0);
  }

  private onMark(update: MarkUpdate): void {
    this.recentMarks.push(update);
    if (this.recentMarks.length > recentMarksKept) this.recentMarks.splice(0, this.recentMarks.length - recentMarksKept);
    if (this.attachments.size === 0) return;
    this.pendingMarks.push(update);
    this.scheduleFlush(0);
  }

  /** The marks at or after `from` (the frame's first character), at their positions in it. */
  private static frameMarks(updates: readonly MarkUpdate[], from: number, chars: number): FrameMark[] | undefined {
    let marks: FrameMark[] | undefined;
    for (const { offset, ...mark } of updates) {
      // At the attach boundary a mark may also be in the snapshot: views take news of a mark they know as news.
      if (offset < from) continue;
      (marks ??= []).push({ ...mark, at: Math.min(offset - from, chars) });
    }
    return marks;
  }

  private scheduleFlush(delayMs: number): void {
    if (this.flushScheduled && (delayMs > 0 || this.flushImmediate)) return;
    if (this.flushTimer) this.clock.clearTimeout(this.flushTimer);
    this.flushScheduled = true;
    this.flushImmediate = delayMs === 0;
    if (delayMs === 0) {
      this.flushTimer = null;
      setImmediate(() => this.flush());
    } else {
      this.flushTimer = this.clock.setTimeout(() => this.flush(), delayMs);
    }
  }

  private flush(): void {
    if (this.flushTimer) this.clock.clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.flushScheduled = false;
    this.lastFlushAt = this.clock.now();
    this.lastFlushChars = this.pendingChars;
    this.pendingChars = 0;
    if (this.pending.length === 0 && this.pendingMarks.length === 0) return;
    // The reads go as they are: the transport writes them into the frame one after another.
    const parts = this.pending;
    const start = this.pendingStart;
    const chars = this.offset - start;
    const updates = this.pendingMarks;
    this.pending = [];
    this.pendingMarks = [];
    this.pendingStart = this.offset;
    for (const attachment of [...this.attachments.values()]) {
      const skip = attachment.fromOffset - start;
      const marks = ManagedTerminal.frameMarks(updates, Math.max(start, attachment.fromOffset), Math.max(0, chars - Math.max(0, skip)));
      if (skip >= chars) {
        if (marks) attachment.send('', 0, marks);
        continue;
      }
      attachment.send(skip > 0 ? outputFrom(parts, skip) : parts, chars - Math.max(0, skip), marks);
      attachment.fromOffset = this.offset;
      if (attachment.behindChars > maxBufferedChars && this.someoneKeepsUp()) {
        this.drop(attachment, 'This view fell too far behind the terminal output and was detached; attach again to see the current screen.');
      }
    }
    this.updateFlow();
  }

  private someoneKeepsUp(): boolean {
    return [...this.attachments.values()].some((attachment) => attachment.behindChars < highWatermarkChars);
  }

  /** Pause the PTY when every viewer is behind; resume when one catches up. */
  private updateFlow(): void {
    const all = [...this.attachments.values()];
    const allBehind = all.length > 0 && all.every((attachment) => attachment.behindChars >= highWatermarkChars);
    if (allBehind && !this.paused) {
      this.paused = true;
      this.session.pause();
      this.armStallTimer();
    } else if (this.paused && (all.length === 0 || all.some((attachment) => attachment.behindChars <= lowWatermarkChars))) {
      this.paused = false;
      this.session.resume();
      if (this.stallTimer) this.clock.clearTimeout(this.stallTimer);
      this.stallTimer = null;
    }
  }

  private armStallTimer(): void {
    if (this.stallTimer) this.clock.clearTimeout(this.stallTimer);
    this.stallTimer = this.clock.setTimeout(() => {
      this.stallTimer = null;
      if (!this.paused) return;
      const now = this.clock.now();
      for (const attachment of [...this.attachments.values()]) {
        if (now - attachment.lastProgressAt >= this.flow.stalledAfterMs) {
          this.drop(attachment, 'This view stopped acknowledging output and was detached; attach again to see the current screen.');
        }
      }
      this.updateFlow();
      if (this.paused) this.armStallTimer();
    }, this.flow.stalledAfterMs);
  }

  private drop(attachment: Attachment, message: string): void {
    this.detach(attachment.id);
    attachment.close('capacity', message);
  }

  async attach(clientId: string, sink: FrameSink): Promise<{ attachment: Attachment; snapshot: string; marks: SnapshotMarks }> {
    this.flush();
    const snapshot = await this.session.snapshot();
    const { data, offset } = snapshot;
    const marks = this.session.marks.inSnapshot(snapshot);
    const attachment = new Attachment(clientId, this.id, offset, sink, this.clock.now());
    this.attachments.set(attachment.id, attachment);
    // Output the snapshot did not cover yet, already batched or still pending; the snapshot can
    // also cover part of what is pending (the parser ran ahead of the batch): that part is skipped.
    const missed = this.session.outputSince(offset, this.pendingStart);
    // Marks the parser had not reached go with that output (the pending ones with the next flush).
    const missedMarks = ManagedTerminal.frameMarks(
      this.recentMarks.filter((update) => update.offset <= this.pendingStart && !this.pendingMarks.includes(update)),
      offset,
      missed.length,
    );
    if (missed || missedMarks) attachment.send(missed, missed.length, missedMarks);
    attachment.fromOffset = Math.max(offset, this.pendingStart);
    if (this.pending.length > 0) this.scheduleFlush(0);
    this.writer?.setWritable(false);
    this.writer = attachment;
    return { attachment, snapshot: data, marks };
  }

  /**
   * The person's Clear: the emulator erases its scrollback and screen at the current output
   * offset (no output, so offsets and agents' cursors stay), and every viewer starts over from the
   * cleared snapshot as a fresh attach would: a full reset, the snapshot, then the output after
   * it. Nothing is written to the shell, which may be running a program.
   */
  async clearScrollback(): Promise<void> {
    const session = this.session;
    session.headless.clear();
    session.personSpans.clear(session.streamOffset);
    const { data, offset } = await session.snapshot();
    // A reset meanwhile replaced the shell, and its viewers already started over.
    if (this.session !== session) return;
    for (const attachment of this.attachments.values()) {
      // As in attach: the snapshot may cover part of what is pending, or miss what was flushed.
      attachment.send(`\x1bc${data}${session.outputSince(offset, this.pendingStart)}`);
      attachment.fromOffset = Math.max(offset, this.pendingStart);
    }
  }

  detach(attachmentId: string): boolean {
    const attachment = this.attachments.get(attachmentId);
    if (!attachment) return false;
    this.attachments.delete(attachmentId);
    if (this.writer === attachment) {
      const latest = [...this.attachments.values()].at(-1) ?? null;
      this.writer = latest;
      latest?.setWritable(true);
    }
    this.updateFlow();
    return true;
  }

  ack(attachmentId: string, seq: number): void {
    const attachment = this.attachments.get(attachmentId);
    if (!attachment) throw new TandemError('not_found', 'This view is no longer attached; attach again.');
    attachment.ack(seq, this.clock.now());
    this.updateFlow();
  }

  isWriter(attachmentId: string): boolean {
    return this.writer?.id === attachmentId;
  }

  // ---- control -------------------------------------------------------------------------------

  /**
   * The person's lease on an agent's terminal began or ended: what they do under it is kept from
   * the agent's reads unless they share it on hand-back (person-spans.ts). Their own terminals
   * are theirs to share or hand over whole.
   */
  private leaseChanged(control: Controller): void {
    if (this.meta.origin !== 'agent') return;
    // Taken again before the last lease ended: that lease's processes are still the person's.
    const pending = this.leaseDone !== null;
    this.leaseDone = null;
    const session = this.session;
    const spans = session.personSpans;
    if (control === 'user') {
      if (!pending) this.processesBefore = terminalProcessGroups(session.pid, session.id);
      this.owedPrompts = 0;
      this.personLeftLine = false;
      this.readers.clear();
      return spans.begin(session.streamOffset);
    }
    if (this.control.state.words?.shareOutput === true) return spans.end(session.streamOffset, true);
    // At the shell's prompt, every line they submitted run, and no process of theirs alive: a
    // loop of the shell's own or a program waiting for input is theirs still. What their
    // processes print later is theirs too: a job stopped with Ctrl+Z would redraw their screen at
    // the agent's `fg`, a background job, a process substitution or a setsid daemon print later,
    // a typed-ahead line start a job after the hand-back (black-box rounds s41 H3, s42 N2–N4,
    // s44). Without /proc: a prompt after a command that did not stop.
    const before = this.processesBefore;
    this.leaseDone = () => {
      if (session.status === 'exited') return true;
      if (session.status !== 'idle') return false;
      if (session.integration && session.promptsSeen < this.owedPrompts) return false;
      const now = before && terminalProcessGroups(session.pid, session.id);
      if (!before || !now) return !stoppedJob(session.lastCommandExitCode);
      return !personsProcessAlive(before, now, session.pid, hostPlatform.shellGroup(session.pid));
    };
  }

  /**
   * The agent is about to write: a lease handed back privately ends here if the person's lines
   * and jobs are done, so everything before this write (their typed-ahead line's output, the
   * prompt after it) stays theirs, and the agent's own command is read as usual.
   */
  agentWriting(): { clearLine: boolean } {
    // Text the person typed at the prompt and left there is not the agent's to complete or run
    // (black-box round s44): the agent's first write after the lease empties the line first.
    const clearLine = this.personLeftLine;
    this.personLeftLine = false;
    if (this.leaseDone?.()) {
      this.leaseDone = null;
      this.session.personSpans.end(this.session.streamOffset, false);
      this.onChange();
    }
    return { clearLine };
  }

  /** Marks an agent call waiting on this terminal until the returned function runs. */
  beginAgentCall(): () => void {
    let done = false;
    if (++this.agentCalls === 1) this.onChange();
    return () => {
      if (done) return;
      done = true;
      if (--this.agentCalls === 0) this.onChange();
    };
  }

  /** The person's input from the writing view, through the control machine and their lease. */
  async personInput(data: string, typed: boolean): Promise<void> {
    // Judged before the write, without waiting: the text of keys a program reads is not kept
    // (a password read with echo off among them); at the prompt the line editor echoes them.
    const hidden = typed && this.journal.enabled ? this.journal.programHoldsInput() : false;
    const effects = this.control.dispatch({ type: 'input', typed, offset: this.session.streamOffset });
    if (!effects.some((effect) => effect.type === 'write')) return;
    if (typed) this.journal.input({ who: 'person', handoff: this.meta.origin === 'agent' }, data, hidden);
    // Text an agent typed at the prompt and left there is not the person's to complete: the
    // line is emptied first, with the keys that empty it before a judged line.
    const clear = this.session.takeAgentLine();
    this.noteSubmit(data);
    await this.control.queue.underLease(() => this.session.write(clear + data));
  }

  /** Remembers a program (its process group) seen reading the terminal under the lease. */
  private noteReader(group: number | null): void {
    // The shell's own group runs its builtins (`read`) and its loops alike: not remembered.
    if (group === null || this.readers.has(group) || group === hostPlatform.shellGroup(this.session.pid)) return;
    if (this.readers.size >= maxReaders) this.readers.delete(this.readers.values().next().value!);
    this.readers.add(group);
  }

  /** A line the person submits under their lease runs after it: at the next prompt, or the one after if a command runs (typed ahead). */
  private noteSubmit(data: string): void {
    const session = this.session;
    if (this.meta.origin !== 'agent' || !session.personSpans.open) return;
    if (session.status === 'idle') {
      // What follows the last Enter, Ctrl+C or Ctrl+U stays in the line editor.
      const ends = /[\r\n\x03\x15]/.test(data);
      const tail = data.split(/[\r\n\x03\x15]/).at(-1) ?? '';
      this.personLeftLine = /[^\x00-\x1f\x7f]/.test(tail) || (!ends && this.personLeftLine);
    }
    if (!/[\r\n]/.test(data)) return;
    // A program reading input takes the line itself: one seen waiting, or seen reading the
    // terminal under this lease (a REPL busy with the last line when the next Enter comes), or
    // reading it as the key goes (a status can lag fast typing in vim or a REPL: round s44).
    if (session.status === 'waiting_input') return this.noteReader(hostPlatform.foregroundGroup(session.pid));
    if (session.status !== 'idle') {
      const group = hostPlatform.foregroundGroup(session.pid);
      if (group !== null && this.readers.has(group)) return;
      const reads = session.foregroundReadsTty();
      if (reads) this.noteReader(group);
      if (reads !== false) return;
    }
    const lines = data.split(/\r\n|\r|\n/).length - 1;
    const from = Math.max(this.owedPrompts, session.promptsSeen + (session.status === 'idle' ? 0 : 1));
    this.owedPrompts = Math.min(from + lines, session.promptsSeen + maxOwedPrompts);
  }

  dispose(): void {
    this.unsubscribe();
    if (this.flushTimer) this.clock.clearTimeout(this.flushTimer);
    if (this.stallTimer) this.clock.clearTimeout(this.stallTimer);
    for (const attachment of this.attachments.values()) attachment.close('not_found', 'The terminal was closed.');
    this.attachments.clear();
  }
}

/**
 * Whether a process the person started under their lease lives: one not there at the takeover,
 * outside the process groups the agent's jobs had then (a job's later children are its own),
 * the shell's own group counting as theirs (a process substitution, a subshell).
 */
function personsProcessAlive(before: Map<number, number>, now: Map<number, number>, shellPid: number, shellGroup: number): boolean {
  const agentGroups = new Set([...before.values()].filter((group) => group !== shellGroup));
  for (const [pid, group] of now) if (pid !== shellPid && !before.has(pid) && !agentGroups.has(group)) return true;
  return false;
}

/** Programs remembered as terminal readers under one lease, at most. */
const maxReaders = 64;

/** Lines typed ahead that keep a handed-back lease the person's, at most (a paste of many lines runs them on its own). */
const maxOwedPrompts = 16;

/** A shell reports a job stopped by SIGSTOP, SIGTSTP, SIGTTIN or SIGTTOU as 128 plus the signal (Linux numbers 19–22; macOS 17, 18, 21, 22). */
function stoppedJob(exitCode: number | null): boolean {
  return exitCode !== null && [145, 146, 147, 148, 149, 150].includes(exitCode);
}
