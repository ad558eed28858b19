import type { Terminal } from '@xterm/xterm';
import type { CommandMarksView } from './command-marks';

/**
 * A read-only window into the views for end-to-end tests, present only when the page was
 * opened with `?test` in its URL.
 */
export interface TandemTestHook {
  /** Every line of a terminal's buffer (scrollback and screen), right-trimmed. */
  screen(id: string): string | null;
  ids(): string[];
  /** One of the terminal's xterm.js options (minimumContrastRatio, fontFamily...). */
  option(id: string, name: string): unknown;
  /** Where `text` first shows on the screen: its cell (0-based, from the top of the viewport), and the grid's size. */
  locate(id: string, text: string): { col: number; row: number; cols: number; rows: number } | null;
  /** The viewport's first buffer line, the bottom's, and the buffer line where `text` first shows (or -1). */
  viewport(id: string, text?: string): { viewportY: number; baseY: number; line: number } | null;
  /** The view's command marks, oldest first: their buffer lines and how they ended. */
  /** For the bench (bench/figures/marks.ts): ms xterm.js spent parsing `data` and drawing the frame after it (not the wait for that frame). */
  timeWrite(id: string, data: string): Promise<{ parse: number; total: number }>;
  marks(id: string): Array<{ line: number; status: string; exitCode: number | null; command: string | null; output: string }> | null;
}

const enabled = typeof location !== 'undefined' && new URLSearchParams(location.search).has('test');
const terminals = new Map<string, Terminal>();
const markViews = new Map<string, CommandMarksView>();

function bufferText(term: Terminal): string {
  const buffer = term.buffer.active;
  const lines: string[] = [];
  for (let y = 0; y < buffer.length; y++) lines.push(buffer.getLine(y)?.translateToString(true) ?? '');
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines.join('\n');
}

if (enabled) {
  const hook: TandemTestHook = {
    screen: (id) => {
      const term = terminals.get(id);
      return term ? bufferText(term) : null;
    },
    ids: () => [...terminals.keys()],
    option: (id, name) => {
      const term = terminals.get(id);
      return term ? (term.options as Record<string, unknown>)[name] : undefined;
    },
    timeWrite: (id, data) => {
      const term = terminals.get(id);
      if (!term) return Promise.resolve({ parse: Number.NaN, total: Number.NaN });
      // Parsing, then the drawing frame's work up to here (from its start, not the wait for it).
      const start = performance.now();
      return new Promise((resolve) =>
        term.write(data, () => {
          const parsed = performance.now() - start;
          requestAnimationFrame((frameStart) => resolve({ parse: parsed, total: parsed + performance.now() - frameStart }));
        }),
      );
    },
    marks: (id) => {
      const marks = markViews.get(id);
      return marks
        ? marks.list.map((mark) => ({
            line: mark.start.line,
            status: mark.status,
            exitCode: mark.exitCode,
            command: mark.command,
            output: marks.outputText(mark),
          }))
        : null;
    },
    viewport: (id, text) => {
      const term = terminals.get(id);
      if (!term) return null;
      const buffer = term.buffer.active;
      let line = -1;
      for (let y = 0; text !== undefined && y < buffer.length && line < 0; y++) if (buffer.getLine(y)?.translateToString(true).includes(text)) line = y;
      return { viewportY: buffer.viewportY, baseY: buffer.baseY, line };
    },
    locate: (id, text) => {
      const term = terminals.get(id);
      if (!term) return null;
      const buffer = term.buffer.active;
      for (let row = 0; row < term.rows; row++) {
        const col =
          buffer
            .getLine(buffer.viewportY + row)
            ?.translateToString(true)
            .indexOf(text) ?? -1;
        if (col >= 0) return { col, row, cols: term.cols, rows: term.rows };
      }
      return null;
    },
  };
  (window as unknown as { __tandemTest: TandemTestHook }).__tandemTest = hook;
}

export function exposeForTests(id: string, term: Terminal, marks?: CommandMarksView): () => void {
  if (!enabled) return () => undefined;
  terminals.set(id, term);
  if (marks) markViews.set(id, marks);
  return () => {
    if (terminals.get(id) === term) terminals.delete(id);
    if (markViews.get(id) === marks) markViews.delete(id);
  };
}
