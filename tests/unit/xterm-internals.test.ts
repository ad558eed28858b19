// The two adapters that reach inside xterm.js past its API (src/main/terminal/emulator/xterm-internals.ts
// for @xterm/headless, src/renderer/src/terminal/xterm-internals.ts for @xterm/xterm). Both
// return null for a shape they do not know, and their callers then do without (no cold history,
// marks that do not follow scrolling), which no other test would notice: these fail instead when
// an upgrade of the installed xterm.js moves what they reach.
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import xtermBrowser from '@xterm/xterm';
import type { Terminal as BrowserTerminal } from '@xterm/xterm';
import { describe, expect, it } from 'vitest';
import { normalBuffer, normalLines as hostNormalLines } from '../../src/main/terminal/emulator/xterm-internals.js';
import { normalLines as viewNormalLines } from '../../src/renderer/src/terminal/xterm-internals.js';

const { Terminal: Headless } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };
const { Terminal: Browser } = xtermBrowser as unknown as { Terminal: typeof BrowserTerminal };

function write(term: { write(data: string, done: () => void): void }, data: string): Promise<void> {
  return new Promise((resolve) => term.write(data, resolve));
}

const lines = (count: number): string => Array.from({ length: count }, (_, i) => `line ${i}\r\n`).join('');

describe('the host adapter (@xterm/headless)', () => {
  it('hears the lines the scrollback drops', async () => {
    const term = new Headless({ rows: 5, cols: 20, scrollback: 10, allowProposedApi: true });
    const list = hostNormalLines(term);
    expect(list).not.toBeNull();
    let trimmed = 0;
    list!.onTrim((amount) => (trimmed += amount));
    await write(term, lines(30));
    // 30 lines and the cursor's empty one in 15 rows (5 on screen, 10 saved).
    expect(trimmed).toBe(16);
    term.dispose();
  });

  it('erases the normal buffer’s scrollback from under the alternate screen, as the emulator does for CSI 3 J there', async () => {
    const term = new Headless({ rows: 5, cols: 20, scrollback: 100, allowProposedApi: true });
    await write(term, lines(20));
    const normal = normalBuffer(term);
    expect(normal).not.toBeNull();
    expect(normal!.lines.length).toBe(term.buffer.normal.length);
    expect(normal!.ybase).toBe(term.buffer.normal.baseY);
    await write(term, '\x1b[?1049h');
    expect(term.buffer.active.type).toBe('alternate');
    const rows = normal!.lines.length - term.rows;
    normal!.lines.trimStart(rows);
    normal!.ybase -= rows;
    normal!.ydisp -= rows;
    await write(term, '\x1b[?1049l');
    expect(term.buffer.normal.length).toBe(term.rows);
    expect(term.buffer.normal.baseY).toBe(0);
    expect(term.buffer.normal.getLine(0)?.translateToString(true)).toBe('line 16');
    term.dispose();
  });

  it('says null for a terminal without those internals', () => {
    const other = { buffer: {} } as unknown as HeadlessTerminal;
    expect(hostNormalLines(other)).toBeNull();
    expect(normalBuffer(other)).toBeNull();
  });
});

describe('the view adapter (@xterm/xterm)', () => {
  it('hears lines trimmed, inserted and deleted in the normal buffer', async () => {
    // The view's Terminal parses without a DOM until open(): enough for its buffer's events.
    const term = new Browser({ rows: 5, cols: 20, scrollback: 10, allowProposedApi: true });
    const list = viewNormalLines(term);
    expect(list).not.toBeNull();
    const events: string[] = [];
    list!.onTrim((amount) => events.push(`trim ${amount}`));
    list!.onInsert(({ index, amount }) => events.push(`insert ${index} ${amount}`));
    list!.onDelete(({ index, amount }) => events.push(`delete ${index} ${amount}`));
    await write(term, lines(16));
    expect(events.filter((e) => e.startsWith('trim')).length).toBeGreaterThan(0);
    events.length = 0;
    // CSI L on the screen's second row: a line inserted there, the bottom one deleted.
    await write(term, '\x1b[2;1H\x1b[L');
    expect(events).toContain(`insert ${term.buffer.normal.baseY + 1} 1`);
    term.dispose();
  });

  it('says null for a terminal without those internals', () => {
    expect(viewNormalLines({} as unknown as BrowserTerminal)).toBeNull();
  });
});
