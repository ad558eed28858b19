import type { Clock } from '../../clock.js';
import type { MarkerEvent } from '../readiness/markers.js';
import { packOldest, packQuietMs, type PackedText } from './packed-text.js';

/** A marker as it happened in the stream: its offset in the marker-free output and its number (counted from 0). */
export interface StreamEvent {
  offset: number;
  /** The number of events recorded before this one: markers at one offset keep their order. */
  id: number;
  at: number;
  marker: MarkerEvent;
}

/**
 * A point in the stream: `offset` characters of output and the first `events` markers lie before
 * it. A marker takes no output, so an offset alone cannot tell a result that reported a command's
 * end from one taken just before that end, with nothing printed between (a wait after `done`
 * returned the same end again).
 */
export interface StreamPosition {
  offset: number;
  events: number;
}

export interface CommandRecord {
  command: string | null;
  exitCode: number | null;
  cwd: string | null;
}

/**
 * The marker-free output stream with absolute offsets, bounded: the oldest text goes first.
 * Cursors handed to agents are offsets into this stream, so a wait can resume exactly. Older
 * text is deflated in blocks once output pauses (packed-text.ts), one block per timer turn.
 */
export class StreamHistory {
  private chunks: Array<string | PackedText> = [];
  private starts: number[] = [];
  private retainedChars = 0;
  private end = 0;
  private readonly events: StreamEvent[] = [];
  private recorded = 0;
  private packTimer: ReturnType<typeof setTimeout> | null = null;
  private appendedSincePack = false;

  constructor(
    private readonly maxChars: number,
    private readonly maxEvents = 512,
    /** Packing of old text needs a clock; without one everything stays plain. */
    private readonly clock: Clock | null = null,
  ) {}

  /** Where the stream is now: all output and every marker so far lie before it. */
  get position(): StreamPosition {
    return { offset: this.end, events: this.recorded };
  }

  /** The position just before the first marker at `offset` (a cursor that names only an offset). */
  positionAt(offset: number): StreamPosition {
    const first = this.events.find((event) => event.offset >= offset);
    return { offset, events: first ? first.id : this.recorded };
  }

  get offset(): number {
    return this.end;
  }

  /** The oldest offset still retained. */
  get floor(): number {
    return this.starts[0] ?? this.end;
  }

  append(text: string): void {
    if (text.length === 0) return;
    this.chunks.push(text);
    this.starts.push(this.end);
    this.end += text.length;
    this.retainedChars += text.length;
    while (this.retainedChars > this.maxChars && this.chunks.length > 1) {
      this.retainedChars -= this.chunks.shift()!.length;
      this.starts.shift();
    }
    this.appendedSincePack = true;
    this.schedulePack(packQuietMs);
  }

  private schedulePack(ms: number): void {
    if (!this.clock || this.packTimer) return;
    this.packTimer = this.clock.setTimeout(() => {
      this.packTimer = null;
      // Output still flowing: look again after another quiet period.
      if (this.appendedSincePack) {
        this.appendedSincePack = false;
        return this.schedulePack(packQuietMs);
      }
      if (packOldest(this.chunks, this.starts, this.end)) this.schedulePack(0);
    }, ms);
    // Nothing here must keep a process alive.
    (this.packTimer as { unref?: () => void }).unref?.();
  }

  /** Text in [from, to), clipped to what is retained. */
  slice(from: number, to = this.end): string {
    const begin = Math.max(from, this.floor);
    if (begin >= to) return '';
    const parts: string[] = [];
    for (let i = 0; i < this.chunks.length; i++) {
      const start = this.starts[i]!;
      const chunk = this.chunks[i]!;
      const stop = start + chunk.length;
      if (stop <= begin) continue;
      if (start >= to) break;
      const text = typeof chunk === 'string' ? chunk : chunk.text();
      parts.push(text.slice(Math.max(0, begin - start), Math.min(text.length, to - start)));
    }
    return parts.join('');
  }

  record(marker: MarkerEvent, at: number): StreamEvent {
    const event = { offset: this.end, id: this.recorded++, at, marker };
    this.events.push(event);
    if (this.events.length > this.maxEvents) this.events.shift();
    return event;
  }

  /** bash sends a finished command's line after its end marker: attach it to that end. */
  attachCommand(seq: number, command: string): void {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const event = this.events[i]!;
      if (event.marker.kind === 'end' && event.marker.seq === seq) {
        event.marker = { ...event.marker, command: event.marker.command ?? command };
        return;
      }
    }
  }

  eventsSince(offset: number): StreamEvent[] {
    return this.events.filter((event) => event.offset >= offset);
  }

  /** The markers after a position, oldest first. */
  eventsAfter(position: StreamPosition): StreamEvent[] {
    return this.events.filter((event) => event.id >= position.events && event.offset >= position.offset);
  }

  /** Commands that ended at or after `offset`, oldest first (for hand-back summaries). */
  commandsSince(offset: number): CommandRecord[] {
    const records: CommandRecord[] = [];
    for (const event of this.events) {
      if (event.offset < offset || event.marker.kind !== 'end') continue;
      records.push({ command: event.marker.command, exitCode: event.marker.exitCode, cwd: event.marker.cwd });
    }
    return records;
  }
}
