/**
 * Full-screen programs as an agent reads them (screen-text.ts): real vim and less in a real
 * PTY, the result is the compact screen.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { command, runs } from '../support/capabilities.js';
import { hasCommand, makeHome, SessionPool } from './helpers.js';

const home = makeHome();
const pool = new SessionPool(home.home);
afterAll(async () => {
  await pool.closeAll();
  home.cleanup();
});

const vim = hasCommand('vim') ? 'vim' : hasCommand('vi') ? 'vi' : null;
if (!vim) console.warn('screens tests: no vim or vi installed, skipping the vim case');
if (!hasCommand('less')) console.warn('screens tests: no less installed, skipping the less case');

describe('screens for agents', () => {
  it.runIf(vim !== null || runs('the vim screen cost', command('vi', 'vim or vi')))(
    'vim on an empty file in 120x32 costs at most 300 bytes, filler counted',
    async () => {
      const t = await pool.open('bash', { cols: 120, rows: 32 });
      const r = await t.send({ text: `${vim} empty.txt`, waitMs: 15_000 });
      expect(r.status).toBe('waiting_input');
      expect(t.screen.altScreen).toBe(true);
      expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(300);
      expect(r.output).toMatch(/^~ ×\d+$/m);
      expect(r.output).toContain('empty.txt');
      // Nothing painted as padding survives at a row's end.
      for (const row of r.output.split('\n')) expect(row).toBe(row.replace(/ +$/, ''));
      // The count is the screen's: every row but the cursor line and the message line is `~`.
      const count = Number(/^~ ×(\d+)$/m.exec(r.output)![1]);
      expect(count).toBe(30);
      // terminal_read keeps its rows (line numbers) but trims them too.
      const read = await t.read({ count: 32 });
      expect(read.text.split('\n').filter((row) => row === '~')).toHaveLength(30);
      expect(read.text).not.toMatch(/ +$/m);
      const quit = await t.send({ keys: ['Escape', ':', 'q', 'Enter'], submit: false, waitMs: 10_000 });
      expect(quit.status).toBe('done');
    },
  );

  it.runIf(runs('the less screen check', command('less')))('less shows repeated content rows one by one, never merged', async () => {
    const lines = [...Array<string>(40).fill('GET /health 200'), 'last line'];
    writeFileSync(join(home.home, 'log.txt'), `${lines.join('\n')}\n`);
    const t = await pool.open('bash', { cols: 120, rows: 20 });
    const r = await t.send({ text: 'less log.txt', waitMs: 15_000 });
    expect(r.status).toBe('waiting_input');
    const rows = r.output.split('\n');
    // 19 rows of the file and less's prompt row: each repeated row is there, no count.
    expect(rows.filter((row) => row === 'GET /health 200')).toHaveLength(19);
    expect(r.output).not.toContain('×');
    const quit = await t.send({ keys: ['q'], submit: false, waitMs: 10_000 });
    expect(quit.status).toBe('done');
  });
});
