/** terminal_read's line window: lines of the screen and live scrollback, the newest within a byte bound. */
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { trimRow } from './screen-text.js';

export interface LineWindow {
  lines: string[];
  lineBegin: number;
  lineEnd: number;
  totalLines: number;
}

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
