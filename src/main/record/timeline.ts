/**
 * The timeline: one JSON object a line (JSONL), each carrying `prev`, the SHA-256 of the line
 * before it (hex, over the line's UTF-8 bytes without its newline; null on the first). A record
 * changed, inserted, removed or moved breaks the chain at the first line after it, which
 * `verifyTimeline` names. The chain alone cannot see the end changed (cut, appended to, the last
 * record edited): `verifyTimeline` takes the expected count and last hash, from the writer while
 * it runs (export of a live terminal), else from the `# timeline-head` line the .cast ends with.
 */
import { createHash } from 'node:crypto';
import type { AppendSink } from './sink.js';

export type TimelineType =
  | 'open'
  | 'close'
  | 'command'
  | 'send'
  | 'wait'
  | 'rejection'
  | 'approval_asked'
  | 'handoff'
  | 'policy'
  | 'sandbox'
  | 'input_hidden'
  | 'recording'
  | 'truncated';

export interface TimelineRecord {
  seq: number;
  type: TimelineType;
  /** Seconds since the recording began: the same time base as the .cast's events, for seeking. */
  t: number;
  /** Wall time, ISO 8601. */
  at: string;
  prev: string | null;
  [field: string]: unknown;
}

export function lineHash(line: string): string {
  return createHash('sha256').update(line, 'utf8').digest('hex');
}

/** Bytes kept back under the bound for the one `truncated` record. */
const truncatedRoom = 512;

export class TimelineWriter {
  private seq = 0;
  private last: string | null = null;
  private full = false;

  constructor(private readonly sink: AppendSink) {}

  /** Records written, and the hash of the last: what a live export verifies the file against. */
  get head(): { count: number; hash: string | null } {
    return { count: this.seq, hash: this.last };
  }

  append(type: TimelineType, t: number, at: string, fields: Record<string, unknown>): void {
    if (this.full) return;
    let line = this.line(type, t, at, fields);
    let bytes = Buffer.byteLength(line) + 1;
    if (bytes > this.sink.room - truncatedRoom || this.sink.backedUp(bytes)) {
      // Past its bound (or the disk is behind): one record says so, and the timeline ends.
      this.full = true;
      line = this.line('truncated', t, at, { reason: bytes > this.sink.room - truncatedRoom ? 'size' : 'disk_behind' });
      bytes = Buffer.byteLength(line) + 1;
    }
    if (!this.sink.write(`${line}\n`, bytes)) return;
    this.seq += 1;
    this.last = lineHash(line);
  }

  private line(type: TimelineType, t: number, at: string, fields: Record<string, unknown>): string {
    return JSON.stringify({ seq: this.seq + 1, type, t: Math.round(t * 1e6) / 1e6, at, ...fields, prev: this.last });
  }
}

export interface TimelineVerification {
  ok: boolean;
  /** Records read (lines up to the first bad one). */
  records: number;
  /** The 1-based line number of the first record that is not what the chain says, or null. */
  firstBad: number | null;
  reason: string | null;
}

/**
 * Checks a timeline's chain: every line parses, numbers itself one after the last, and carries
 * the hash of the line before. `expect` (a live writer's head) also catches lines cut off the end.
 */
export function verifyTimeline(text: string, expect?: { count: number; hash: string | null }): TimelineVerification {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let prev: string | null = null;
  const bad = (index: number, reason: string): TimelineVerification => ({ ok: false, records: index, firstBad: index + 1, reason });
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    let record: Partial<TimelineRecord>;
    try {
      record = JSON.parse(line) as Partial<TimelineRecord>;
    } catch {
      return bad(i, 'not JSON');
    }
    if (record === null || typeof record !== 'object') return bad(i, 'not a record');
    if (record.prev !== prev) return bad(i, i === 0 ? 'the first record must have prev null: records before it were removed' : "prev is not the hash of the line before: that line or this one was changed, or lines were removed, inserted or moved here");
    if (record.seq !== i + 1) return bad(i, `seq ${String(record.seq)} where ${i + 1} belongs`);
    prev = lineHash(line);
  }
  if (expect) {
    if (lines.length < expect.count) return bad(lines.length, `${expect.count - lines.length} record(s) missing at the end`);
    if (lines.length === expect.count && prev !== expect.hash) return bad(lines.length - 1, 'the last record is not the one written');
    if (lines.length > expect.count) return bad(expect.count, `${lines.length - expect.count} record(s) added after the last one written`);
  }
  return { ok: true, records: lines.length, firstBad: null, reason: null };
}
