import type { Terminal } from '@xterm/xterm';

/**
 * A read-only window into the views for end-to-end tests, present only when the page was
 * opened with `?test` in its URL.
 */
export interface TandemTestHook {
  /** Every line of a terminal's buffer (scrollback and screen), right-trimmed. */
  screen(id: string): string | null;
  ids(): string[];
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
