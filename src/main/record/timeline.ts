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
  'open' | 'close' | 'command' | 'send' | 'wait' | 'rejection' | 'approval_asked' | 'handoff' | 'policy' | 'input_hidden' | 'recording' | 'truncated';

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
    if (record.prev !== prev)
      return bad(
        i,
        i === 0
          ? 'the first record must have prev null: records before it were removed'
          : 'prev is not the hash of the line before: that line or this one was changed, or lines were removed, inserted or moved here',
      );
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

// ---- reading timelines for the app's Timeline panel (the `timeline` operation) ------------------

/** Records the `timeline` operation returns at most (the newest; `limit` may ask for fewer). */
export const maxTimelineRecords = 5000;
/** Recordings an agent's timeline reads at most (its newest): each is one file read and verified. */
export const maxAgentRecordings = 40;

/** What reading timelines needs of the store (store.ts `RecordingStore`). */
export interface TimelineSource {
  list(): Promise<{ id: string; terminalId: string; startedAt: string; live: boolean }[]>;
  export(id: string): Promise<{ id: string; timeline: string; timelineTruncated: boolean; verification: TimelineVerification }>;
}

export interface TimelineChain extends TimelineVerification {
  recordingId: string;
  terminalId: string;
  live: boolean;
}

export interface TimelineRead {
  /** Oldest first (newest last), each with the recording and terminal it came from; `fileLine` is its line in that file. */
  records: (TimelineRecord & { recordingId: string; terminalId: string; fileLine: number })[];
  /** Each recording read, with whether its hash chain holds (`firstBad`: the line where it breaks). */
  chains: TimelineChain[];
  /** Older records were left out (past `limit`). */
  truncated: boolean;
}

/** A JSONL timeline's records; a line that does not parse is left out (the verification names it). */
export function parseTimeline(text: string): { record: TimelineRecord; line: number }[] {
  const out: { record: TimelineRecord; line: number }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    try {
      const record = JSON.parse(line) as TimelineRecord;
      if (record && typeof record === 'object' && typeof record.type === 'string') out.push({ record, line: i + 1 });
    } catch {
      // Named by verifyTimeline.
    }
  }
  return out;
}

/** Whether a record is about this agent: by it, handed to or from it, or in a terminal it opened. */
function aboutAgent(record: TimelineRecord, agent: string): boolean {
  const named = `agent:${agent}`;
  return record.by === named || record.to === named || record.from === named || record.agent === agent;
}

/**
 * One terminal's timeline (its newest recording), or one agent's across its terminals' (the
 * terminals it opened, and the records by it or handed to it in others), newest last, at most
 * `limit` records, with each chain's verification.
 */
export async function readTimelines(source: TimelineSource, what: { terminalId?: string; agent?: string; limit?: number }): Promise<TimelineRead> {
  const limit = Math.min(what.limit ?? maxTimelineRecords, maxTimelineRecords);
  const all = await source.list();
  let chosen: typeof all;
  if (what.terminalId !== undefined) {
    const newest = all.filter((r) => r.terminalId === what.terminalId).at(-1);
    chosen = newest ? [newest] : [];
  } else chosen = all.slice(-maxAgentRecordings);
  const records: TimelineRead['records'] = [];
  const chains: TimelineChain[] = [];
  for (const info of chosen) {
    let exported: Awaited<ReturnType<TimelineSource['export']>>;
    try {
      exported = await source.export(info.id);
    } catch {
      continue; // Pruned since the list was read.
    }
    const parsed = parseTimeline(exported.timeline);
    const agent = what.agent;
    const opened = agent !== undefined && parsed[0]?.record.type === 'open' && parsed[0].record.agent === agent;
    const kept = agent === undefined || opened ? parsed : parsed.filter(({ record }) => aboutAgent(record, agent));
    if (kept.length === 0 && agent !== undefined) continue;
    chains.push({ recordingId: info.id, terminalId: info.terminalId, live: info.live, ...exported.verification });
    for (const { record, line } of kept) records.push({ ...record, recordingId: info.id, terminalId: info.terminalId, fileLine: line });
  }
  // Across terminals, by wall time (each file is already in order; a stable sort keeps it).
  if (chosen.length > 1) records.sort((a, b) => String(a.at).localeCompare(String(b.at)));
  const truncated = records.length > limit;
  return { records: truncated ? records.slice(-limit) : records, chains, truncated };
}
