/**
 * Transcripts: a closed terminal's tab kept read-only (its last screen and bounded scrollback,
 * its last known info) until the person dismisses it, and the tabs of the last session brought
 * back after a restart. Kept in memory (bounded in number and size, dropped after the person's
 * `transcriptKeepHours`) and, with a state directory, as one 0600 file per terminal in
 * `<state>/transcripts/` (0700): written when a terminal closes or the host stops, and for live
 * terminals every `saveEveryMs`, so a crash leaves the tabs of its last minute.
 *
 * Only what the UI showed is written: the serialized screen (as the tab drew it) and the roster
 * fields. Never the raw output stream, the environment or typed input.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, constants, mkdirSync } from 'node:fs';
import { open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { terminalInfoSchema, type TerminalView } from '../../shared/contract.js';
import { TandemError } from '../../shared/errors.js';
import type { Clock } from '../clock.js';

/** Transcripts kept at once; past this the oldest goes first. */
export const maxTranscripts = 20;
/** Characters of one transcript's snapshot: the newest part, cut at a line. */
export const maxTranscriptChars = 512 * 1024;
/** How often live terminals' tabs are written, for a crash. */
export const saveEveryMs = 60_000;
/** How often expired transcripts are looked for. */
export const sweepEveryMs = 60_000;
/** A transcript file larger than this is not read (a snapshot of the bound, escaped, fits well). */
const maxFileBytes = 4 * maxTranscriptChars + 64 * 1024;
const hourMs = 60 * 60 * 1000;
const idPattern = /^[A-Za-z0-9_-]{1,64}$/;

/** Why a tab is a transcript: an agent closed it, its shell had exited, Tandem's sweep closed it (its agent long gone), or it is from the last session. */
export type TranscriptReason = 'closed' | 'exited' | 'unattended' | 'restored';

export interface Transcript {
  info: TerminalView;
  snapshot: string;
  reason: TranscriptReason;
  /** The agent that closed it, or null. */
  by: string | null;
  /** Wall-clock milliseconds of the close (or of the last save, for a live terminal's file). */
  at: number;
}

const fileSchema = z.object({
  version: z.literal(1),
  /** `live`: written while the terminal ran; every file is `restored` once read back. */
  reason: z.enum(['closed', 'exited', 'unattended', 'restored', 'live']),
  by: z.string().max(200).nullable(),
  at: z.number(),
  info: terminalInfoSchema,
  snapshot: z.string().max(maxTranscriptChars),
});

export interface TranscriptOptions {
  /** `<state>/transcripts`, or null to keep them in memory only. */
  dir: string | null;
  clock: Clock;
  wall?: () => number;
  /** The person's setting: hours a transcript stays (0: none are kept). */
  keepHours: () => number;
  max?: number;
}

/** The newest `maxTranscriptChars` of a snapshot, from the start of a line. */
export function boundSnapshot(snapshot: string, max = maxTranscriptChars): string {
  if (snapshot.length <= max) return snapshot;
  const tail = snapshot.slice(snapshot.length - max);
  const line = tail.indexOf('\n');
  return line >= 0 ? tail.slice(line + 1) : tail;
}

/** A transcript as the roster shows it: ended, with nobody connected or driving it. */
function transcriptView(t: Transcript): TerminalView {
  return {
    ...t.info,
    status: 'exited',
    agentConnected: false,
    agentListening: false,
    control: 'user',
    program: null,
    transcript: { reason: t.reason, by: t.by, at: new Date(t.at).toISOString() },
  };
}

export class TranscriptStore {
  private readonly kept = new Map<string, Transcript>();
  /** Views of transcripts (attachment id -> terminal and client): they take no input. */
  private readonly attachments = new Map<string, { id: string; clientId: string }>();
  private readonly wall: () => number;
  private readonly max: number;
  private sweepTimer: ReturnType<typeof setTimeout> | null = null;
  private writes: Promise<void> = Promise.resolve();
  private disposed = false;

  constructor(private readonly opts: TranscriptOptions) {
    this.wall = opts.wall ?? Date.now;
    this.max = opts.max ?? maxTranscripts;
    if (opts.dir) {
      mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
      chmodSync(opts.dir, 0o700);
    }
  }

  get enabled(): boolean {
    return this.opts.keepHours() > 0;
  }

  /** Reads the last session's files: each becomes a `restored` transcript (newest `max`, unexpired); the rest are removed. */
  async load(): Promise<void> {
    const dir = this.opts.dir;
    if (dir) {
      const found: Transcript[] = [];
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        const id = name.endsWith('.json') ? name.slice(0, -5) : '';
        const t = idPattern.test(id) ? await readTranscript(join(dir, name), id) : null;
        if (t) found.push(t);
        else await rm(join(dir, name), { force: true, recursive: true });
      }
      found.sort((a, b) => a.at - b.at);
      for (const t of found) if (!this.kept.has(t.info.id)) this.kept.set(t.info.id, { ...t, reason: 'restored' });
    }
    await this.sweep();
    this.scheduleSweep();
  }

  private scheduleSweep(): void {
    if (this.disposed) return;
    this.sweepTimer = this.opts.clock.setTimeout(() => {
      void this.sweep().finally(() => this.scheduleSweep());
    }, sweepEveryMs);
  }

  /** Drops expired transcripts and those past the count (oldest first). Returns whether any went. */
  async sweep(): Promise<boolean> {
    const keepMs = this.opts.keepHours() * hourMs;
    const now = this.wall();
    const gone: string[] = [];
    for (const [id, t] of this.kept) if (now - t.at >= keepMs) gone.push(id);
    const left = [...this.kept.values()].filter((t) => !gone.includes(t.info.id)).sort((a, b) => a.at - b.at);
    for (const t of left.slice(0, Math.max(0, left.length - this.max))) gone.push(t.info.id);
    for (const id of gone) this.remove(id);
    await this.writes;
    if (gone.length > 0) this.onChange?.();
    return gone.length > 0;
  }

  /** Told when a sweep dropped transcripts (the host sends a roster). */
  onChange: (() => void) | null = null;

  /** A closed terminal's tab stays; written to the state directory. */
  add(t: Omit<Transcript, 'snapshot' | 'at'> & { snapshot: string; at?: number }): void {
    if (!this.enabled) {
      this.forget(t.info.id);
      return;
    }
    const transcript: Transcript = { ...t, snapshot: boundSnapshot(t.snapshot), at: t.at ?? this.wall() };
    this.kept.delete(transcript.info.id);
    this.kept.set(transcript.info.id, transcript);
    this.write(transcript.info.id, { ...transcript });
    const over = this.kept.size - this.max;
    if (over > 0) for (const id of [...this.kept.keys()].slice(0, over)) this.remove(id);
  }

  /** A live terminal's tab as it is now, for the next start (not listed now: the terminal is). */
  saveLive(info: TerminalView, snapshot: string): void {
    if (!this.enabled) return;
    this.write(info.id, { info, snapshot: boundSnapshot(snapshot), reason: 'live', by: null, at: this.wall() });
  }

  /** A terminal whose tab should not come back (the person closed it). */
  forget(id: string): void {
    if (!this.opts.dir || !idPattern.test(id)) return;
    const path = join(this.opts.dir, `${id}.json`);
    this.writes = this.writes.then(() => rm(path, { force: true })).catch(() => undefined);
  }

  has(id: string): boolean {
    return this.kept.has(id);
  }

  views(): TerminalView[] {
    return [...this.kept.values()].map(transcriptView);
  }

  /** The person's Dismiss. */
  dismiss(id: string): void {
    if (!this.kept.has(id)) throw new TandemError('not_found', `No transcript with id "${id}"; it was dismissed already or has expired.`);
    this.remove(id);
  }

  private remove(id: string): void {
    this.kept.delete(id);
    for (const [attachmentId, a] of this.attachments) if (a.id === id) this.attachments.delete(attachmentId);
    this.forget(id);
  }

  /** A view of a transcript: its snapshot, read-only. */
  attach(id: string, clientId: string): { attachmentId: string; snapshot: string; view: TerminalView } {
    const t = this.kept.get(id);
    if (!t) throw new TandemError('not_found', `No terminal with id "${id}"; list the terminals to see the current ones.`);
    const attachmentId = randomBytes(12).toString('base64url');
    this.attachments.set(attachmentId, { id, clientId });
    // The cursor hidden: nothing will type at it.
    return { attachmentId, snapshot: `${t.snapshot}\x1b[?25l`, view: transcriptView(t) };
  }

  /** Whether this attachment (of this client, when given) views a transcript. */
  isTranscriptView(attachmentId: string, clientId?: string): boolean {
    const a = this.attachments.get(attachmentId);
    return a !== undefined && (clientId === undefined || a.clientId === clientId);
  }

  /** Input and resize to a transcript's view are refused: nothing runs behind it. */
  refuse(attachmentId: string, clientId?: string): void {
    if (!this.isTranscriptView(attachmentId, clientId)) return;
    const id = this.attachments.get(attachmentId)!.id;
    throw new TandemError(
      'exited',
      `Terminal "${this.kept.get(id)?.info.title ?? id}" was closed: its tab is a read-only transcript. Open a new shell to type.`,
    );
  }

  detach(attachmentId: string, clientId?: string): boolean {
    if (!this.isTranscriptView(attachmentId, clientId)) return false;
    this.attachments.delete(attachmentId);
    return true;
  }

  detachClient(clientId: string): void {
    for (const [attachmentId, a] of this.attachments) if (a.clientId === clientId) this.attachments.delete(attachmentId);
  }

  private write(id: string, record: Omit<z.input<typeof fileSchema>, 'version'>): void {
    const dir = this.opts.dir;
    if (!dir || !idPattern.test(id)) return;
    const text = JSON.stringify({ version: 1, ...record });
    const path = join(dir, `${id}.json`);
    const temp = join(dir, `.${id}.${randomBytes(6).toString('hex')}.tmp`);
    // One write at a time, in order: a later save of the same tab always lands last.
    this.writes = this.writes
      .then(async () => {
        await writeFile(temp, text, { mode: 0o600, flag: 'wx' });
        await rename(temp, path);
      })
      .catch(() => rm(temp, { force: true }).catch(() => undefined));
  }

  /** Resolves once every write and removal asked for so far is on disk. */
  flush(): Promise<void> {
    return this.writes;
  }

  dispose(): void {
    this.disposed = true;
    if (this.sweepTimer) this.opts.clock.clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
  }
}

/** One file, if it is a regular file of a sane size holding a valid transcript of this id. */
async function readTranscript(path: string, id: string): Promise<Transcript | null> {
  try {
    // Not followed through a symlink, and checked on the descriptor that is read.
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const stats = await handle.stat();
      if (!stats.isFile() || stats.size > maxFileBytes) return null;
      const parsed = fileSchema.safeParse(JSON.parse(await handle.readFile('utf8')));
      if (!parsed.success || parsed.data.info.id !== id) return null;
      const { info, snapshot, by, at } = parsed.data;
      return { info, snapshot, by, at, reason: 'restored' };
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}
