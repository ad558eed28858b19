/** terminal_read: lines of the screen and live scrollback, or the output since a cursor, the newest within a byte bound. */
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { DEFAULT_LIMITS } from '../../../shared/limits.js';
import type { TerminalStatus } from '../../../shared/types.js';
import { type Clock, waitFor } from '../../clock.js';
import type { Emulator } from './emulator.js';
import type { StreamHistory } from './history.js';
import { OutputProjector } from '../projection/projection.js';
import { trimRow } from './screen-text.js';
import { clampInt, type ReadRequest, type TerminalRead } from '../session/session-types.js';

export interface LineWindow {
  lines: string[];
  lineBegin: number;
  lineEnd: number;
  totalLines: number;
}

/** Only a safety bound: the parser's own progress decides how long a read waits. */
const readCatchUpMs = 10_000;

/** `count` lines ending `offset` lines back from the newest, trimmed from the top to `maxBytes`. */
export function readLines(terminal: HeadlessTerminal, req: { offset?: number; count: number; maxBytes: number }): LineWindow {
  const buffer = terminal.buffer.active;
  const totalLines = buffer.length;
  const lineEnd = Math.max(0, totalLines - (req.offset ?? 0));
  let lineBegin = Math.max(0, lineEnd - req.count);
  const lines: string[] = [];
  for (let y = lineBegin; y < lineEnd; y++) lines.push(trimRow(buffer.getLine(y)?.translateToString(true) ?? ''));
  // Keep the newest lines within the byte bound.
  let bytes = 0;
  let keep = lines.length;
  while (keep > 0 && bytes + Buffer.byteLength(lines[keep - 1]!) + 1 <= req.maxBytes) bytes += Buffer.byteLength(lines[--keep]!) + 1;
  lineBegin += keep;
  return { lines: lines.slice(keep), lineBegin, lineEnd, totalLines };
}

/** The parts of a session terminal_read looks at. */
export interface ReadSource {
  readonly clock: Clock;
  readonly emulator: Emulator;
  readonly history: StreamHistory;
  rows(): number;
  decodeCursor(cursor: string): number;
  /** Stream text in `[from, history end)` as the agent may read it: the person's private output replaced (person-spans.ts). */
  agentSlice(from: number): string;
  /** The buffer agents read lines from once the person has taken the terminal (person-spans.ts), brought up to date; null: the emulator's. */
  agentBuffer(): Promise<HeadlessTerminal | null>;
  cursor(): string;
  status(): TerminalStatus;
}

/**
 * terminal_read: lines of the screen and live scrollback (`offset`/`count` lines back from
 * the newest), or the output since a cursor; the newest text within `maxBytes`.
 */
export async function readTerminal(src: ReadSource, req: ReadRequest): Promise<TerminalRead> {
  // The screen catches up with what arrived before this call (a flood holds that back no longer
  // than one flood window); output after it is not waited for. A time bound alone read a
  // half-parsed screen on a loaded machine (blank lines where a finished echo was: the soak).
  await waitFor(src.clock, { ms: readCatchUpMs, until: src.emulator.parsed() });
  const maxBytes = clampInt(req.maxBytes, DEFAULT_LIMITS.defaultOutputBytes, 1, DEFAULT_LIMITS.maxOutputBytes);
  const terminal = (await src.agentBuffer()) ?? src.emulator.terminal;
  let window: LineWindow;
  if (req.since !== undefined) {
    const projector = new OutputProjector({ maxBytes });
    projector.push(src.agentSlice(src.decodeCursor(req.since)));
    const totalLines = terminal.buffer.active.length;
    window = { lines: projector.snapshot().output.split('\n'), lineBegin: totalLines, lineEnd: totalLines, totalLines };
  } else {
    window = readLines(terminal, { offset: req.offset, count: req.count ?? src.rows(), maxBytes });
  }
  return {
    text: window.lines.join('\n'),
    lineBegin: window.lineBegin,
    lineEnd: window.lineEnd,
    totalLines: window.totalLines,
    cursor: src.cursor(),
    screen: { row: terminal.buffer.active.cursorY, col: terminal.buffer.active.cursorX, altScreen: terminal.buffer.active.type === 'alternate' },
    status: src.status(),
  };
}
