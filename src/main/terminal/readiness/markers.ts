/**
 * Shell-integration markers: private OSC sequences `ESC ] 7771 ; <secret> ; <kind> ; <fields> BEL`.
 * The secret reaches the shell only through a deleted 0600 rc file, so a program's output cannot
 * forge a marker; sequences with a wrong secret pass through as ordinary output.
 */
import { parseRedirectReport, type RedirectReport } from '../../shells/redirect-report.js';

export const MARKER_OSC = 7771;
const PREFIX = `\x1b]${MARKER_OSC};`;
/**
 * The prefix after its ESC. Coloured output has an ESC every few characters and `]` rarely, so
 * searching for this and checking the character before skips ahead far faster than searching
 * for the ESC (27 times on a coloured `yes` flood).
 */
const AFTER_ESC = PREFIX.slice(1);

/** The next marker prefix at or after `from`, or -1. */
function findPrefix(data: string, from: number): number {
  for (let at = data.indexOf(AFTER_ESC, from + 1); at >= 0; at = data.indexOf(AFTER_ESC, at + 1)) {
    if (data.charCodeAt(at - 1) === 0x1b) return at - 1;
  }
  return -1;
}
const BEL = '\x07';
/**
 * A marker longer than this is not ours (ours carry at most a bounded command line and a cwd):
 * an unterminated prefix holds back at most this much output before it is released as text.
 */
export const maxMarkerChars = 16 * 1024;

export type MarkerEvent =
  | { kind: 'start'; seq: number; command: string | null }
  | { kind: 'end'; seq: number; exitCode: number | null; cwd: string | null; command: string | null }
  | { kind: 'continuation' }
  /** bash: the command line of a finished command, read from history after its end marker. */
  | { kind: 'line'; seq: number; command: string }
  /** What could redirect a program name after command `seq`; null: the same as the last report. */
  | { kind: 'redirects'; seq: number; report: RedirectReport | null }
  /**
   * Agent terminals (bash, zsh): command `seq` ended and the prompt begins (P), before the shell
   * looks at its drain flag; then, when the flag is there, it asks for the flag's fence (F) and
   * empties its input up to it (tandem.bash `__tandem_drain`).
   */
  | { kind: 'prompt' | 'fence'; seq: number };

/** Segments of one scanned chunk, in stream order: plain text and markers. */
export type ScanPart = { text: string } | { marker: MarkerEvent };

/** Percent-decoding of the few characters the shells escape (%, BEL, ESC, newline, ;). */
export function decodeField(value: string): string {
  return value.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function parseInteger(value: string | undefined): number | null {
  if (value === undefined || !/^-?\d+$/.test(value)) return null;
  return Number(value);
}

/** Parses the body after the secret. Unknown shapes return null (and are dropped as corrupt). */
export function parseMarkerBody(body: string): MarkerEvent | null {
  const [kind, ...rest] = body.split(';');
  switch (kind) {
    case 'S': {
      const seq = parseInteger(rest[0]);
      if (seq === null) return null;
      const command = rest.length > 1 ? decodeField(rest.slice(1).join(';')) : null;
      return { kind: 'start', seq, command: command || null };
    }
    case 'E':
    case 'R': {
      // E: fields percent-encoded by the shell; R: raw cwd (POSIX sh cannot encode), cwd last.
      const seq = parseInteger(rest[0]);
      if (seq === null) return null;
      const exitCode = parseInteger(rest[1]);
      const encodedCommand = kind === 'E' ? (rest[2] ?? '') : '';
      const rawCwd = kind === 'E' ? rest.slice(3).join(';') : rest.slice(2).join(';');
      const cwd = rawCwd === '' ? null : kind === 'E' ? decodeField(rawCwd) : rawCwd;
      const command = encodedCommand === '' ? null : decodeField(encodedCommand);
      return { kind: 'end', seq, exitCode, cwd, command };
    }
    case 'C':
      return { kind: 'continuation' };
    case 'D': {
      const seq = parseInteger(rest[0]);
      if (seq === null) return null;
      if (rest.length === 2 && rest[1] === '=') return { kind: 'redirects', seq, report: null };
      const report = parseRedirectReport(rest.slice(1), decodeField);
      return report ? { kind: 'redirects', seq, report } : null;
    }
    case 'L': {
      const seq = parseInteger(rest[0]);
      if (seq === null) return null;
      return { kind: 'line', seq, command: decodeField(rest.slice(1).join(';')) };
    }
    case 'P':
    case 'F': {
      const seq = parseInteger(rest[0]);
      return seq === null || rest.length !== 1 ? null : { kind: kind === 'P' ? 'prompt' : 'fence', seq };
    }
    default:
      return null;
  }
}

/**
 * Streaming scanner. Hot path: every PTY chunk passes through `scan`, so the common case
 * (no marker, no partial prefix at the end) is one search and no copies.
 */
export class MarkerScanner {
  private readonly secretPrefix: string;
  private carry = '';

  constructor(secret: string) {
    this.secretPrefix = `${PREFIX}${secret};`;
  }

  scan(chunk: string): ScanPart[] {
    let data = this.carry.length > 0 ? this.carry + chunk : chunk;
    this.carry = '';
    const parts: ScanPart[] = [];
    let pos = 0;
    for (;;) {
      const at = findPrefix(data, pos);
      if (at < 0) break;
      const end = data.indexOf(BEL, at + PREFIX.length);
      // Our bodies never hold ESC (the shells percent-encode it), and a terminal aborts an OSC at
      // ESC: a prefix that a program printed without finishing is output, and scanning restarts
      // at the next ESC, so it can neither swallow nor wrap the genuine marker that follows.
      const esc = data.indexOf('\x1b', at + PREFIX.length);
      if (esc >= 0 && (end < 0 || esc < end)) {
        if (esc > pos) parts.push({ text: data.slice(pos, esc) });
        pos = esc;
        continue;
      }
      if (end < 0) {
        if (data.length - at <= maxMarkerChars) {
          this.carry = data.slice(at);
          data = data.slice(0, at);
        }
        break;
      }
      const sequence = data.slice(at, end + 1);
      if (sequence.startsWith(this.secretPrefix)) {
        if (at > pos) parts.push({ text: data.slice(pos, at) });
        const marker = parseMarkerBody(sequence.slice(this.secretPrefix.length, -1));
        if (marker) parts.push({ marker });
        pos = end + 1;
      } else {
        // Not ours (wrong or missing secret): ordinary output, which stays in the stream.
        if (end + 1 > pos) parts.push({ text: data.slice(pos, end + 1) });
        pos = end + 1;
      }
    }
    if (this.carry === '') {
      // Keep a possible partial prefix at the end for the next chunk.
      const tailStart = Math.max(pos, data.length - PREFIX.length + 1);
      const esc = data.indexOf('\x1b', tailStart);
      if (esc >= 0 && PREFIX.startsWith(data.slice(esc))) {
        this.carry = data.slice(esc);
        data = data.slice(0, esc);
      }
    }
    if (data.length > pos) parts.push({ text: pos === 0 ? data : data.slice(pos) });
    return parts;
  }

  /** Whatever is held back at the end of the stream is plain output. */
  flush(): string {
    const rest = this.carry;
    this.carry = '';
    return rest;
  }
}
