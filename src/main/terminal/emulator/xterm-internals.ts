/**
 * The one place the host reaches inside @xterm/headless past its public API (the private
 * `_core`). Each reach says what the API lacks and where upstream stands; each checks the shape
 * it finds and returns null for another xterm.js, and its caller does without. The renderer has
 * its own for @xterm/xterm (src/renderer/src/terminal/xterm-internals.ts).
 * tests/unit/xterm-internals.test.ts fails if the installed xterm.js no longer has them.
 *
 * Upstream may move them: "Buffer.lines should be private" (xtermjs/xterm.js issue 5999) would
 * hide the line list both reaches use, and "better buffer trim handling" (issue 6121) proposes
 * batching the trim events cold history counts.
 */
import type { Terminal } from '@xterm/headless';

/** The normal buffer's line list as xterm.js 6 has it (src/common/CircularList.ts): its trim event. */
export interface LineTrims {
  onTrim(listener: (amount: number) => void): unknown;
}

/** The normal buffer as xterm.js 6 has it (src/common/buffer/Buffer.ts): its lines, and where the screen and the view start. */
export interface NormalBuffer {
  readonly lines: { readonly length: number; trimStart(amount: number): void };
  ybase: number;
  ydisp: number;
}

/** The one reach into `_core`: the normal buffer, whatever shape it has. */
function normalOf(terminal: Terminal): { lines?: Partial<LineTrims & NormalBuffer['lines']>; ybase?: unknown; ydisp?: unknown } | undefined {
  return (
    terminal as unknown as { _core?: { buffers?: { normal?: { lines?: Partial<LineTrims & NormalBuffer['lines']>; ybase?: unknown; ydisp?: unknown } } } }
  )._core?.buffers?.normal;
}

/**
 * The normal buffer's line list, for its trim event: the API tells when a marker's line leaves
 * (`IMarker.onDispose`) but has no event for the lines the scrollback drops, which cold history
 * keeps (emulator.ts `watchTrims`). A full reset replaces the list, so ask again after one.
 */
export function normalLines(terminal: Terminal): LineTrims | null {
  const lines = normalOf(terminal)?.lines;
  return typeof lines?.onTrim === 'function' ? (lines as LineTrims) : null;
}

/**
 * The normal buffer while the alternate one is shown, for `CSI 3 J` there: xterm erases the
 * normal buffer's saved lines (the behaviour microsoft/terminal issue 3686 asks for), xterm.js
 * only the active buffer's (its eraseInDisplay), and the alternate one has none; the API's only
 * way to drop scrollback, `clear()`, also moves the normal screen.
 */
export function normalBuffer(terminal: Terminal): NormalBuffer | null {
  const normal = normalOf(terminal);
  if (!normal || typeof normal.lines?.trimStart !== 'function' || typeof normal.lines.length !== 'number') return null;
  return typeof normal.ybase === 'number' && typeof normal.ydisp === 'number' ? (normal as NormalBuffer) : null;
}
