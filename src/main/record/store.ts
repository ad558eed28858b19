/**
 * Where recordings live: `<state dir>/recordings/` (0700), two files per terminal run, 0600:
 * `<stamp>-<terminal id>.cast` (asciicast v3) and `<stamp>-<terminal id>.timeline.jsonl`.
 * Bounded by the person's settings: per terminal (the recorder stops its .cast there), in all
 * and by age (the oldest finished recordings go first, at start and every `pruneEveryMs`).
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { TandemError } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import { type RecorderMeta, TerminalRecorder } from './recorder.js';
import { type TimelineVerification, verifyTimeline } from './timeline.js';

export interface RecordingBounds {
  /** Recording on or off (new terminals). */
  recording: boolean;
  /** One terminal's .cast, in MiB. */
  recordingMaxMiB: number;
  /** Every recording together, in MiB. */
  recordingTotalMiB: number;
  /** Days a finished recording is kept. */
  recordingDays: number;
}

/** One terminal's timeline, at most (its own bound: it goes on after the .cast stopped). */
export const maxTimelineBytes = 4 * 1024 * 1024;
/** What one export returns of a .cast at most (from its start, cut at a line): the WebSocket drops a client 16 MiB behind. */
export const maxExportCastBytes = 8 * 1024 * 1024;
export const pruneEveryMs = 60 * 60 * 1000;
const dayMs = 24 * 60 * 60 * 1000;
const namePattern = /^(\d{8}T\d{6}\d{3}Z-[A-Za-z0-9_-]{1,64})\.(cast|timeline\.jsonl)$/;
const idPattern = /^\d{8}T\d{6}\d{3}Z-[A-Za-z0-9_-]{1,64}$/;

export interface RecordingInfo {
  id: string;
  terminalId: string;
  title: string;
  startedAt: string;
  castBytes: number;
  timelineBytes: number;
  live: boolean;
}

export interface RecordingExport {
  id: string;
  cast: string;
  castTruncated: boolean;
  timeline: string;
  timelineTruncated: boolean;
  verification: TimelineVerification;
}

/** One page of a .cast (readCast): `text` is whole lines from byte `offset`; `nextOffset` is null once the file's end is reached. */
export interface RecordingCastPage {
  id: string;
  text: string;
  offset: number;
  nextOffset: number | null;
  /** The file's size when the page was read (a live recording grows). */
  size: number;
  /** Bytes of one event line longer than a page, left out (its offset is passed: the replay goes on without it). */
  skippedBytes: number;
}

export interface StoreOptions {
  clock: Clock;
  wall?: () => number;
  bounds: () => RecordingBounds;
}

export class RecordingStore {
  private readonly live = new Map<string, TerminalRecorder>();
  private readonly wall: () => number;
  private pruneTimer: ReturnType<typeof setTimeout> | null = null;
  private pruning: Promise<string[]> | null = null;
  /** Bytes of the recordings finished since the last prune began. */
  private finishedBytes = 0;

  constructor(
    readonly dir: string,
    private readonly opts: StoreOptions,
  ) {
    this.wall = opts.wall ?? Date.now;
  }

  private ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
  }

  /** Prunes now and then every hour (the injected clock's). */
  start(): Promise<string[]> {
    const again = () => {
      this.pruneTimer = this.opts.clock.setTimeout(() => {
        void this.prune().finally(again);
      }, pruneEveryMs);
    };
    if (!this.pruneTimer) again();
    return this.prune();
  }

  /** A recorder for a new terminal, or null when recording is off (or the directory cannot be made). */
  open(meta: RecorderMeta): TerminalRecorder | null {
    const bounds = this.opts.bounds();
    if (!bounds.recording) return null;
    try {
      this.ensureDir();
    } catch {
      return null;
    }
    const stamp = new Date(this.wall()).toISOString().replace(/[-:.]/g, '');
    const id = `${stamp}-${meta.terminalId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)}`;
    const recorder = new TerminalRecorder(meta, {
      castPath: join(this.dir, `${id}.cast`),
      timelinePath: join(this.dir, `${id}.timeline.jsonl`),
      maxCastBytes: bounds.recordingMaxMiB * 1024 * 1024,
      maxTimelineBytes,
      clock: this.opts.clock,
      wall: this.wall,
    });
    this.live.set(id, recorder);
    return recorder;
  }

  /** Live recorders of one agent's terminals (policy and sandbox changes go to each). */
  recordersOf(agent: string): TerminalRecorder[] {
    return [...this.live.values()].filter((recorder) => recorder.live && recorder.meta.agent === agent);
  }

  /**
   * The terminal closed: its recorder finishes its files and the store forgets it. Once the
   * recordings finished since the last prune add up to a twentieth of the total bound, it prunes
   * now, not at the next hour: an agent opening and closing terminals that each fill their own
   * bound wrote 586 MiB in a minute against a 500 MiB setting (black-box round s39).
   */
  async finish(recorder: TerminalRecorder, cause: string, exitCode: number | null): Promise<void> {
    await recorder.close(cause, exitCode);
    for (const [id, live] of this.live) if (live === recorder) this.live.delete(id);
    this.finishedBytes += recorder.castBytes + recorder.timelineSink.size;
    if (this.finishedBytes * 20 >= this.opts.bounds().recordingTotalMiB * 1024 * 1024) {
      this.finishedBytes = 0;
      await this.prune();
    }
  }

  private async files(): Promise<Map<string, { cast: number; timeline: number; mtime: number }>> {
    const groups = new Map<string, { cast: number; timeline: number; mtime: number }>();
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return groups;
    }
    for (const name of names) {
      const match = namePattern.exec(name);
      if (!match) continue;
      const info = await stat(join(this.dir, name)).catch(() => null);
      if (!info?.isFile()) continue;
      const group = groups.get(match[1]!) ?? { cast: 0, timeline: 0, mtime: 0 };
      if (match[2] === 'cast') group.cast = info.size;
      else group.timeline = info.size;
      group.mtime = Math.max(group.mtime, info.mtimeMs);
      groups.set(match[1]!, group);
    }
    return groups;
  }

  /** Removes finished recordings past the age bound, then the oldest output, then the oldest timelines, until the total fits. */
  prune(): Promise<string[]> {
    this.pruning ??= this.pruneNow().finally(() => (this.pruning = null));
    return this.pruning;
  }

  private async pruneNow(): Promise<string[]> {
    this.finishedBytes = 0;
    const bounds = this.opts.bounds();
    const groups = [...(await this.files()).entries()].sort((a, b) => a[1].mtime - b[1].mtime || a[0].localeCompare(b[0]));
    const removed: string[] = [];
    let total = groups.reduce((sum, [, g]) => sum + g.cast + g.timeline, 0);
    const oldest = this.wall() - bounds.recordingDays * dayMs;
    const maxTotal = bounds.recordingTotalMiB * 1024 * 1024;
    for (const [id, group] of groups) {
      if (this.live.has(id) || group.mtime >= oldest) continue;
      await Promise.all([rm(join(this.dir, `${id}.cast`), { force: true }), rm(join(this.dir, `${id}.timeline.jsonl`), { force: true })]);
      total -= group.cast + group.timeline;
      group.cast = group.timeline = 0;
      removed.push(id);
    }
    // Over the total, the output (.cast) goes first, oldest first, and the timelines (a few
    // kilobytes: what ran, who approved it) only once no .cast is left to go: output enough to
    // fill the bound (an agent's flood in new terminals) no longer erases the record of what that
    // agent did before (black-box round 13).
    for (const kind of ['cast', 'timeline'] as const) {
      for (const [id, group] of groups) {
        if (total <= maxTotal) return removed;
        if (this.live.has(id) || group[kind] === 0) continue;
        await rm(join(this.dir, kind === 'cast' ? `${id}.cast` : `${id}.timeline.jsonl`), { force: true });
        total -= group[kind];
        group[kind] = 0;
        if (!removed.includes(id)) removed.push(id);
      }
    }
    return removed;
  }

  async list(): Promise<RecordingInfo[]> {
    const out: RecordingInfo[] = [];
    for (const [id, group] of await this.files()) {
      const header = await readHead(join(this.dir, `${id}.cast`), 4096);
      let title = '';
      try {
        title = String((JSON.parse(header.text.split('\n')[0]!) as { title?: unknown }).title ?? '');
      } catch {
        // A .cast without a readable header still lists.
      }
      const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-(.*)$/.exec(id)!;
      out.push({
        id,
        terminalId: m[8]!,
        title,
        startedAt: `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`,
        castBytes: group.cast,
        timelineBytes: group.timeline,
        live: this.live.has(id),
      });
    }
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** A recording by its id, or the newest of a terminal id: the .cast from its start (bounded) and the whole timeline, verified. */
  async export(idOrTerminal: string): Promise<RecordingExport> {
    const id = await this.resolve(idOrTerminal);
    const recorder = this.live.get(id);
    if (recorder) await recorder.flushed();
    const cast = await readHead(join(this.dir, `${id}.cast`), maxExportCastBytes);
    const timeline = await readHead(join(this.dir, `${id}.timeline.jsonl`), maxTimelineBytes + 1);
    // A finished recording's .cast ends with the timeline's head (recorder.ts close).
    const kept = /^# timeline-head (\d+) ([0-9a-f]{64})$/m.exec(cast.text.slice(-200));
    const head = recorder ? recorder.timeline.head : kept ? { count: Number(kept[1]), hash: kept[2]! } : undefined;
    let verification = verifyTimeline(timeline.text, head);
    if (verification.ok && !recorder && !timeline.truncated) {
      const lastLine = timeline.text.trimEnd().split('\n').at(-1) ?? '';
      if (!/"type":"close"/.test(lastLine))
        verification = {
          ok: false,
          records: verification.records,
          firstBad: verification.records + 1,
          reason: 'the timeline of a finished terminal ends without its close record: records were removed from its end (or Tandem stopped without closing it)',
        };
    }
    return { id, cast: cast.text, castTruncated: cast.truncated, timeline: timeline.text, timelineTruncated: timeline.truncated, verification };
  }

  /**
   * A .cast in pages, for a replay or an export past the 8 MiB of `export`: at most
   * `maxExportCastBytes` of whole lines from `offset` (0, or a `nextOffset` of the page before:
   * a line's start). A line longer than a page is left out and counted in `skippedBytes`.
   */
  async readCast(idOrTerminal: string, offset: number): Promise<RecordingCastPage> {
    const id = await this.resolve(idOrTerminal);
    await this.live.get(id)?.flushed();
    const handle = await open(join(this.dir, `${id}.cast`), 'r').catch(() => null);
    if (!handle) throw new TandemError('not_found', `The recording "${id}" has no .cast.`);
    try {
      const size = (await handle.stat()).size;
      if (offset > size) throw new TandemError('invalid_argument', `offset ${offset} is past the end of the .cast (${size} bytes).`);
      if (offset > 0) {
        const before = Buffer.alloc(1);
        await handle.read(before, 0, 1, offset - 1);
        if (before[0] !== 0x0a) throw new TandemError('invalid_argument', 'offset must be 0 or the start of a line (a nextOffset of readRecordingCast).');
      }
      let skippedBytes = 0;
      let at = offset;
      for (;;) {
        const buffer = Buffer.alloc(Math.min(size - at, maxExportCastBytes));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
        const whole = at + bytesRead >= size;
        const end = whole ? bytesRead : buffer.subarray(0, bytesRead).lastIndexOf(0x0a) + 1;
        if (end > 0 || whole) {
          const nextOffset = at + end >= size ? null : at + end;
          return { id, text: buffer.subarray(0, end).toString('utf8'), offset: at, nextOffset, size, skippedBytes };
        }
        // One line longer than a page: find its end and go on after it.
        let lineEnd = at + bytesRead;
        const probe = Buffer.alloc(64 * 1024);
        for (;;) {
          const { bytesRead: n } = await handle.read(probe, 0, probe.length, lineEnd);
          if (n === 0) break;
          const nl = probe.subarray(0, n).indexOf(0x0a);
          if (nl >= 0) {
            lineEnd += nl + 1;
            break;
          }
          lineEnd += n;
        }
        skippedBytes += lineEnd - at;
        at = lineEnd;
        if (at >= size) return { id, text: '', offset: at, nextOffset: null, size, skippedBytes };
      }
    } finally {
      await handle.close();
    }
  }

  private async resolve(idOrTerminal: string): Promise<string> {
    if (idPattern.test(idOrTerminal)) {
      if ((await this.files()).has(idOrTerminal)) return idOrTerminal;
    } else if (/^[A-Za-z0-9_-]{1,64}$/.test(idOrTerminal)) {
      const ids = [...(await this.files()).keys()].filter((id) => id.endsWith(`-${idOrTerminal}`)).sort();
      if (ids.length > 0) return ids.at(-1)!;
    } else {
      throw new TandemError('invalid_argument', 'id must be a recording id (listRecordings) or a terminal id: letters, digits, - and _.');
    }
    throw new TandemError('not_found', `No recording "${idOrTerminal}"; listRecordings shows the ones kept.`);
  }

  /** Stops pruning; live recorders finish with their terminals (host shutdown closes them). */
  dispose(): void {
    if (this.pruneTimer) this.opts.clock.clearTimeout(this.pruneTimer);
    this.pruneTimer = null;
  }
}

/** The first `max` bytes of a file, cut at its last whole line when cut at all. */
async function readHead(path: string, max: number): Promise<{ text: string; truncated: boolean }> {
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return { text: '', truncated: false };
  try {
    const size = (await handle.stat()).size;
    const buffer = Buffer.alloc(Math.min(size, max));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    let text = buffer.subarray(0, bytesRead).toString('utf8');
    const truncated = size > max;
    if (truncated) text = text.slice(0, text.lastIndexOf('\n') + 1);
    return { text, truncated };
  } finally {
    await handle.close();
  }
}
