import type { Terminal } from '@xterm/xterm';

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
}

const enabled = typeof location !== 'undefined' && new URLSearchParams(location.search).has('test');
const terminals = new Map<string, Terminal>();

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
    locate: (id, text) => {
      const term = terminals.get(id);
      if (!term) return null;
      const buffer = term.buffer.active;
      for (let row = 0; row < term.rows; row++) {
        const col = buffer.getLine(buffer.viewportY + row)?.translateToString(true).indexOf(text) ?? -1;
        if (col >= 0) return { col, row, cols: term.cols, rows: term.rows };
      }
      return null;
    },
  };
  (window as unknown as { __tandemTest: TandemTestHook }).__tandemTest = hook;
}

export function exposeForTests(id: string, term: Terminal): () => void {
  if (!enabled) return () => undefined;
  terminals.set(id, term);
  return () => {
    if (terminals.get(id) === term) terminals.delete(id);
  };
}
