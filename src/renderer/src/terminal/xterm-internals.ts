/**
 * The one place the view reaches inside @xterm/xterm past its public API (the private `_core`).
 * It checks the shape it finds and returns null for another xterm.js; its caller does without.
 * The host has its own for @xterm/headless (src/main/terminal/emulator/xterm-internals.ts), and
 * tests/unit/xterm-internals.test.ts fails if the installed xterm.js no longer has them.
 *
 * Why: command marks keep their own line numbers instead of one xterm.js marker each (10,000
 * markers cost every frame), so they must follow the lines as xterm.js's markers do: the API has
 * `IMarker` for one line and no event for lines trimmed, inserted (a reflow, `CSI L`) or deleted.
 * Upstream may move it: "Buffer.lines should be private" (xtermjs/xterm.js issue 5999).
 */
import type { IDisposable, Terminal } from '@xterm/xterm';

/** The normal buffer's line list inside xterm.js 6 (src/common/CircularList.ts): the events its markers follow. */
export interface LineList {
  readonly length: number;
  onTrim(listener: (amount: number) => void): IDisposable;
  onInsert(listener: (event: { index: number; amount: number }) => void): IDisposable;
  onDelete(listener: (event: { index: number; amount: number }) => void): IDisposable;
}

/** The normal buffer's line list, or null where this xterm.js has no such events. A full reset replaces it. */
export function normalLines(term: Terminal): LineList | null {
  const core = (term as unknown as { _core?: { buffers?: { normal?: { lines?: LineList } } } })._core;
  const lines = core?.buffers?.normal?.lines;
  return lines && typeof lines.onTrim === 'function' && typeof lines.onInsert === 'function' && typeof lines.onDelete === 'function' ? lines : null;
}
