/**
 * Reading a Tandem recording for replay (docs/recordings.md): the .cast (asciicast v3) and its
 * timeline. The player gets the cast's events with its idle pauses shortened and with only the
 * markers a person seeks to (commands, approvals, rejections, handoffs, waits): the k-th marker
 * the player knows is `entries[k]`, so `player.seek({ marker: k })` lands on that entry.
 */

/** What a replay loads of a .cast at most (a recording may be up to 1 GiB: settings' recordingMaxMiB); an export takes all of it. */
export const replayMaxBytes = 64 * 1024 * 1024;

/** Pauses longer than this (seconds) are shortened to it in the replay. */
export const idleLimitS = 2;

export type EntryKind = 'command' | 'approval' | 'rejection' | 'handoff' | 'waiting' | 'notice';

export interface ReplayEntry {
  kind: EntryKind;
  /** The marker's own text. */
  label: string;
  /** What the list shows: the command line when it is known, otherwise the marker's text. */
  text: string;
  /** Who sent it (commands), when known. */
  by: string | null;
  exitCode: number | null;
  /** Seconds since the recording began (the timeline's `t`). */
  t: number;
  /** Seconds in the replay (pauses shortened): where the player lands. */
  playT: number;
}

export interface ParsedCast {
  header: { version: number; term?: { cols?: number; rows?: number }; timestamp?: number; title?: string } & Record<string, unknown>;
  /** The player's input: the header, then events with absolute-to-relative intervals, markers filtered. */
  playerData: unknown[];
  entries: ReplayEntry[];
  /** Seconds of the whole recording (real time), and of the replay. */
  duration: number;
  playDuration: number;
  /** Lines that were not JSON (a cut last line); 0 for a whole file. */
  badLines: number;
  /** The recorder stopped at its size bound, or skipped output: what its markers say. */
  cuts: string[];
}

const seekable: [RegExp, EntryKind][] = [
  [/^command start/, 'command'],
  [/^approval asked/, 'approval'],
  [/^rejected/, 'rejection'],
  [/^handoff/, 'handoff'],
  [/^waiting for input/, 'waiting'],
  [/^(shell reset|recording stopped|recording skipped)/, 'notice'],
];

function kindOf(label: string): EntryKind | null {
  for (const [pattern, kind] of seekable) if (pattern.test(label)) return kind;
  return null;
}

interface CommandRecord {
  command: string | null;
  start: number | null;
  by: string | null;
  exitCode: number | null;
}

/** The timeline's command records (the command line of the person's commands lives only there). */
export function timelineCommands(timeline: string): CommandRecord[] {
  const out: CommandRecord[] = [];
  for (const line of timeline.split('\n')) {
    if (!line.includes('"type":"command"')) continue;
    try {
      const record = JSON.parse(line) as { type?: string; command?: unknown; start?: unknown; by?: unknown; exitCode?: unknown };
      if (record.type !== 'command') continue;
      out.push({
        command: typeof record.command === 'string' ? record.command : null,
        start: typeof record.start === 'number' ? record.start : null,
        by: typeof record.by === 'string' ? record.by : null,
        exitCode: typeof record.exitCode === 'number' ? record.exitCode : null,
      });
    } catch {
      // A broken record is the verification's to report; the replay goes on without it.
    }
  }
  return out;
}

/** Parses a .cast for the player, and lists what can be sought to. Throws when it has no asciicast v3 header. */
export function parseCast(cast: string, timeline: string): ParsedCast {
  const lines = cast.split('\n');
  let header: ParsedCast['header'];
  try {
    header = JSON.parse(lines[0] ?? '') as ParsedCast['header'];
  } catch {
    throw new Error('The recording has no readable header.');
  }
  if (header?.version !== 3) throw new Error(`The recording is not asciicast v3 (version ${String(header?.version)}).`);
  const commands = timelineCommands(timeline).filter((c) => c.start !== null);
  let nextCommand = 0;
  const events: unknown[] = [];
  const entries: ReplayEntry[] = [];
  const cuts: string[] = [];
  let t = 0;
  let playT = 0;
  // Time carried over from dropped markers to the next event kept.
  let carried = 0;
  let badLines = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line[0] !== '[') {
      if (line !== '' && line[0] !== '#') badLines += 1;
      continue;
    }
    let event: [number, string, unknown];
    try {
      event = JSON.parse(line) as [number, string, unknown];
    } catch {
      badLines += 1;
      continue;
    }
    const interval = typeof event[0] === 'number' && event[0] > 0 ? event[0] : 0;
    t += interval;
    const code = event[1];
    const data = typeof event[2] === 'string' ? event[2] : String(event[2] ?? '');
    let kind: EntryKind | null = null;
    if (code === 'm') {
      kind = kindOf(data);
      if (/^recording (stopped|skipped)/.test(data)) cuts.push(data);
      if (!kind) {
        carried += interval;
        continue;
      }
    }
    const wait = Math.min(carried + interval, idleLimitS);
    carried = 0;
    playT += wait;
    events.push([Math.round(wait * 1e6) / 1e6, code, data]);
    if (kind) {
      const entry: ReplayEntry = { kind, label: data, text: data, by: null, exitCode: null, t, playT };
      if (kind === 'command') {
        const by = /^command start by ([^:]+)/.exec(data);
        entry.by = by ? by[1]! : null;
        // The timeline's record of this command: the first not yet taken that started by now (its `t` and the cast's agree to the µs).
        while (nextCommand < commands.length && commands[nextCommand]!.start! < t - 0.5) nextCommand += 1;
        const record = commands[nextCommand];
        if (record && Math.abs(record.start! - t) <= 0.5) {
          nextCommand += 1;
          entry.exitCode = record.exitCode;
          entry.by = record.by ?? entry.by;
          if (record.command) entry.text = record.command;
        }
        if (entry.text === data) {
          const line = /^command start[^:]*: (.*)$/.exec(data);
          entry.text = line ? line[1]! : 'command (its line is not known)';
        }
      }
      entries.push(entry);
    }
  }
  return { header, playerData: [header, ...events], entries, duration: t, playDuration: playT, badLines, cuts };
}

/** The UTF-8 length of a string (the host's pages count bytes). */
export function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** A file name part from a title: letters, digits, dashes. */
export function slug(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40)
      .toLowerCase() || 'terminal'
  );
}

/** The names an export is saved under: `tandem-<title>-<recording id>.cast` and `….timeline.jsonl`. */
export function exportNames(id: string, title: string): { cast: string; timeline: string } {
  const base = `tandem-${slug(title)}-${id}`;
  return { cast: `${base}.cast`, timeline: `${base}.timeline.jsonl` };
}

/**
 * Saves text as a file through the browser's download (a Blob and an `<a download>`): the same
 * path in `tandem serve` and in Electron's renderer, where the download asks where to save.
 */
export function downloadText(name: string, parts: string[], type: string): void {
  const url = URL.createObjectURL(new Blob(parts, { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.rel = 'noopener';
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // The download has read the Blob by the next tasks; a minute leaves room for a slow disk.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Bytes as a person reads them. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Seconds as m:ss or h:mm:ss. */
export function formatClock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
