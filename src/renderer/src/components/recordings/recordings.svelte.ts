/**
 * The Recordings panel's state: whether it is open, the list the host keeps, the recording being
 * replayed. Loading reads the host's `exportRecording` (timeline, its verification, the first
 * 8 MiB of the .cast) and then `readRecordingCast` pages for the rest, so an hour-long recording
 * replays and exports whole.
 */
import type { OpResult, TandemApi } from '../../../../shared/contract';
import { connection } from '../../lib/connection.svelte';
import { type Problem, toProblem } from '../../lib/problem';
import { downloadText, exportNames, replayMaxBytes, utf8Length } from './cast';

export type RecordingInfo = OpResult<'listRecordings'>['recordings'][number];
type Verification = OpResult<'exportRecording'>['verification'];

export interface LoadedRecording {
  id: string;
  title: string;
  cast: string;
  timeline: string;
  verification: Verification;
  timelineTruncated: boolean;
  /** Bytes of event lines the host left out (one line longer than a page). */
  skippedBytes: number;
  /** Set when the replay loaded only the first `loaded` bytes of the .cast's `total`. */
  replayCut: { loaded: number; total: number } | null;
}

export type LoadState =
  | { state: 'idle' }
  | { state: 'loading'; loaded: number; total: number }
  | { state: 'error'; problem: Problem }
  | { state: 'ready'; recording: LoadedRecording };

interface LoadedParts extends Omit<LoadedRecording, 'cast'> {
  /** The .cast in the pages it came in (an export makes its Blob of them: no one huge string). */
  parts: string[];
}

/** Reads a recording: the export, then the .cast's pages after its first 8 MiB, up to `maxBytes`. */
export async function loadRecording(api: TandemApi, id: string, progress: (loaded: number, total: number) => void, maxBytes = Infinity): Promise<LoadedParts> {
  const exported = await api.call('exportRecording', { id });
  const parts = [exported.cast];
  let skippedBytes = 0;
  let replayCut: LoadedParts['replayCut'] = null;
  if (exported.castTruncated) {
    let offset: number | null = utf8Length(exported.cast);
    while (offset !== null) {
      const page: OpResult<'readRecordingCast'> = await api.call('readRecordingCast', { id: exported.id, offset });
      const end = page.offset + utf8Length(page.text) + page.skippedBytes;
      if (end > maxBytes) {
        replayCut = { loaded: page.offset, total: page.size };
        break;
      }
      parts.push(page.text);
      skippedBytes += page.skippedBytes;
      progress(end, page.size);
      offset = page.nextOffset;
    }
  }
  let title = '';
  try {
    title = String((JSON.parse(exported.cast.slice(0, exported.cast.indexOf('\n'))) as { title?: unknown }).title ?? '');
  } catch {
    // The replay says the header is unreadable.
  }
  return {
    id: exported.id,
    title,
    parts,
    timeline: exported.timeline,
    verification: exported.verification,
    timelineTruncated: exported.timelineTruncated,
    skippedBytes,
    replayCut,
  };
}

class RecordingsStore {
  open = $state(false);
  list = $state.raw<RecordingInfo[]>([]);
  listing = $state(false);
  listProblem = $state<Problem | null>(null);
  /** The recording shown in the replay, by id. */
  selected = $state<string | null>(null);
  load = $state.raw<LoadState>({ state: 'idle' });
  /** An export in progress (its id), and the last export's problem. */
  exporting = $state<string | null>(null);
  exportProblem = $state<Problem | null>(null);
  /** Said over the list when a tab asked for its terminal's recording and there is none. */
  notice = $state<string | null>(null);
  private generation = 0;

  /** Opens the panel; with a terminal id, replays that terminal's newest recording. */
  show(terminalId?: string): void {
    this.open = true;
    this.notice = null;
    void this.refresh().then(() => {
      if (!terminalId || this.listProblem) return;
      const newest = this.list.filter((r) => r.terminalId === terminalId).at(-1);
      if (newest) this.replay(newest.id);
      else this.notice = 'This terminal has no recording: recording was off when it opened, or its recording was removed (Settings bound its size and age).';
    });
  }

  toggle(): void {
    if (this.open) this.close();
    else this.show();
  }

  close(): void {
    this.open = false;
    this.selected = null;
    this.generation += 1;
    this.load = { state: 'idle' };
  }

  async refresh(): Promise<void> {
    const api = connection.api;
    if (!api) return;
    this.listing = true;
    this.listProblem = null;
    try {
      this.list = (await api.call('listRecordings', {})).recordings;
    } catch (error) {
      this.listProblem = toProblem(error);
    } finally {
      this.listing = false;
    }
  }

  replay(id: string): void {
    const api = connection.api;
    if (!api) return;
    const generation = ++this.generation;
    this.selected = id;
    const info = this.list.find((r) => r.id === id);
    this.load = { state: 'loading', loaded: 0, total: info?.castBytes ?? 0 };
    loadRecording(
      api,
      id,
      (loaded, total) => {
        if (generation === this.generation) this.load = { state: 'loading', loaded, total };
      },
      replayMaxBytes,
    ).then(
      ({ parts, ...loaded }) => {
        if (generation === this.generation) this.load = { state: 'ready', recording: { ...loaded, cast: parts.join('') } };
      },
      (error: unknown) => {
        if (generation === this.generation) this.load = { state: 'error', problem: toProblem(error) };
      },
    );
  }

  /** Back to the list (narrow windows show one or the other). */
  back(): void {
    this.generation += 1;
    this.selected = null;
    this.load = { state: 'idle' };
  }

  /** Downloads a recording's .cast and timeline; the one already loaded is not read again. */
  async export(id: string): Promise<void> {
    const api = connection.api;
    if (!api || this.exporting) return;
    this.exporting = id;
    this.exportProblem = null;
    try {
      // The recording on screen is saved as loaded, unless it was cut for the replay or is still growing.
      const live = this.list.find((r) => r.id === id)?.live ?? true;
      const shown = this.load.state === 'ready' && this.load.recording.id === id && !this.load.recording.replayCut && !live ? this.load.recording : null;
      const loaded = shown ? { ...shown, parts: [shown.cast] } : await loadRecording(api, id, () => undefined);
      const names = exportNames(loaded.id, loaded.title || (this.list.find((r) => r.id === id)?.title ?? ''));
      downloadText(names.cast, loaded.parts, 'application/x-asciicast');
      downloadText(names.timeline, [loaded.timeline], 'application/jsonl');
    } catch (error) {
      this.exportProblem = toProblem(error);
    } finally {
      this.exporting = null;
    }
  }
}

export const recordings = new RecordingsStore();
