import { endStatus, type FrameMark, markCommandMaxChars, type MarkStatus, type SnapshotMarks } from '../../../shared/command-marks.js';
import type { Emulator, EmulatorSnapshot, LineRef } from './emulator.js';

/** The most marks a terminal keeps: a command a line in a full default scrollback (10,000 lines). */
export const maxCommandMarks = 10_000;

interface Mark {
  id: number;
  /** The shell's command number, to match the end and the command line to the start. */
  seq: number;
  command: string | null;
  status: MarkStatus;
  exitCode: number | null;
  start: LineRef;
  end: LineRef | null;
  /** The host interrupted it, or the person typed Ctrl+C while it ran. */
  interruptSent: boolean;
}

/** A mark's news at an output offset, for the views (ManagedTerminal puts it into a frame). */
export type MarkUpdate = Omit<FrameMark, 'at'> & { offset: number };

function cut(command: string | null): string | null {
  return command === null ? null : command.slice(0, markCommandMaxChars);
}

/**
 * A terminal's command marks (issue 29): one per command the shell integration's start marker
 * announced, with how it ended. Fed only by the session's marker scanner, so only Tandem's own
 * markers make one. The emulator follows each mark's lines; marks whose lines left the
 * scrollback go, and at most `cap` are kept.
 */
export class CommandMarks {
  private readonly marks: Mark[] = [];
  private nextId = 1;
  private readonly listeners = new Set<(update: MarkUpdate) => void>();

  constructor(
    private readonly emulator: Emulator,
    private readonly cap = maxCommandMarks,
  ) {}

  onUpdate(listener: (update: MarkUpdate) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private get running(): Mark | undefined {
    const last = this.marks.at(-1);
    return last && (last.status === 'running' || last.status === 'waiting_input') ? last : undefined;
  }

  private emit(mark: Mark, kind: MarkUpdate['kind'], offset: number): void {
    const update: MarkUpdate = { id: mark.id, kind, offset, command: mark.command, status: mark.status, exitCode: mark.exitCode };
    for (const listener of this.listeners) listener(update);
  }

  /** A start marker at output offset `offset`. */
  start(offset: number, seq: number, command: string | null): void {
    // A command that never ended (the shell was replaced, a marker lost) does not run on forever.
    const stale = this.running;
    if (stale) this.finish(stale, offset, null, 'success');
    const mark: Mark = {
      id: this.nextId++,
      seq,
      command: cut(command),
      status: 'running',
      exitCode: null,
      start: this.emulator.lineAt(offset, 'command'),
      end: null,
      interruptSent: false,
    };
    this.marks.push(mark);
    while (this.marks.length > this.cap) this.drop(this.marks.shift()!);
    this.dropGone();
    this.emit(mark, 'start', offset);
  }

  /** An end marker: the exit code says success, failure or interrupted. */
  end(offset: number, seq: number, exitCode: number | null, command: string | null): void {
    const mark = this.running;
    if (!mark || mark.seq !== seq) return;
    if (command) mark.command = cut(command);
    this.finish(mark, offset, exitCode, endStatus(exitCode, mark.interruptSent));
  }

  private finish(mark: Mark, offset: number, exitCode: number | null, status: MarkStatus): void {
    mark.status = status;
    mark.exitCode = exitCode;
    mark.end = this.emulator.lineAt(offset, 'cursor');
    this.emit(mark, 'end', offset);
  }

  /** bash's command line, read from its history after the end marker. */
  line(offset: number, seq: number, command: string): void {
    const mark = this.marks.findLast((m) => m.seq === seq);
    if (!mark || mark.command === cut(command)) return;
    mark.command = cut(command);
    this.emit(mark, 'status', offset);
  }

  /** An interrupt went to the running command (the host's, or Ctrl+C typed). */
  interrupted(): void {
    const mark = this.running;
    if (mark) mark.interruptSent = true;
  }

  /** The readiness state: the running command waits for input, or runs again. */
  waiting(offset: number, waiting: boolean): void {
    const mark = this.running;
    const status: MarkStatus = waiting ? 'waiting_input' : 'running';
    if (!mark || mark.status === status) return;
    mark.status = status;
    this.emit(mark, 'status', offset);
  }

  /** The marks a snapshot shows (those whose line it holds), in its line numbers; marks gone from the scrollback are dropped. */
  inSnapshot(snapshot: EmulatorSnapshot): SnapshotMarks {
    const list: SnapshotMarks['list'] = [];
    this.dropGone();
    for (const mark of this.marks) {
      const line = snapshot.lineOf(mark.start);
      if (line === null) continue;
      const endLine = mark.end ? snapshot.lineOf(mark.end) : null;
      list.push({ id: mark.id, command: mark.command, status: mark.status, exitCode: mark.exitCode, line, endLine });
    }
    return { cursorLine: snapshot.cursorLine, list };
  }

  /** Marks kept now (bounded by the cap). */
  get size(): number {
    return this.marks.length;
  }

  /** Marks whose line left the scrollback go (oldest first: lines leave in order). */
  private dropGone(): void {
    while (this.marks.length > 0 && this.emulator.gone(this.marks[0]!.start)) this.drop(this.marks.shift()!);
  }

  private drop(mark: Mark): void {
    this.emulator.release(mark.start);
    if (mark.end) this.emulator.release(mark.end);
  }

  dispose(): void {
    this.listeners.clear();
    this.marks.length = 0;
  }
}
