import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pty from 'node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxRefusedWriteDelayMs, pacedWrites } from '../../src/main/pty/pump.js';
import { until } from '../support/until.js';
import { SessionPool } from './helpers.js';
import { command, runs } from '../support/capabilities.js';

/** node:fs as node-pty and the PTY thread see it (a CommonJS object whose `write` can be wrapped). */
const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

/** Printable text that says where each byte belongs, so a lost, doubled or reordered piece shows. */
const pattern = (bytes: number, seed: string): string => {
  let text = '';
  for (let i = 0; text.length < bytes; i++) text += `${seed}${i.toString(36).padStart(6, '0')}.`;
  return text.slice(0, bytes);
};

/**
 * A program that puts its terminal in raw mode, says so, reads nothing until the test creates
 * GO, then copies exactly `bytes` bytes of its input into OUT: its PTY's input fills (4 KiB) and
 * refuses writes for as long as the test likes.
 */
const stalledReader = (dir: string, bytes: number): string =>
  `stty raw -echo; echo "re""ady"; while [ ! -e ${dir}/GO ]; do sleep 0.05; done; head -c ${bytes} > ${dir}/OUT; stty sane; echo "cop""ied"`;

const canRun = runs('the PTY write tests', command('stty'), command('head'));

describe.runIf(canRun)("input a program is not reading yet: the PTY's refused writes wait, and nothing is lost", () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tandem-pty-writes-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('retries a refused write after a pause, not on every event-loop turn, and delivers every byte in order', async () => {
    const case1 = join(dir, 'paced');
    fs.mkdirSync(case1);
    const total = 512 * 1024;
    const sent = pattern(total, 'p');
    const p = pty.spawn('/bin/sh', ['-c', stalledReader(case1, total)], { cols: 80, rows: 24, env: { ...process.env, LC_ALL: 'C' } });
    pacedWrites(p, maxRefusedWriteDelayMs);
    let output = '';
    p.onData((data) => (output += data));
    const original = fs.write;
    const tries = { refused: 0, accepted: 0 };
    // Counts each write the PTY thread's stream makes (node-pty's own would make thousands a second).
    fs.write = ((...args: Parameters<typeof fs.write>) => {
      const callback = args[args.length - 1] as (error: NodeJS.ErrnoException | null, written: number) => void;
      args[args.length - 1] = ((error: NodeJS.ErrnoException | null, written: number) => {
        if (error?.code === 'EAGAIN') tries.refused += 1;
        else if (!error) tries.accepted += 1;
        callback(error, written);
      }) as never;
      return (original as (...a: unknown[]) => void)(...args);
    }) as typeof fs.write;
    try {
      await until(() => output.includes('ready'), 'the program in raw mode');
      const started = performance.now();
      for (let offset = 0; offset < total; offset += 64 * 1024) p.write(sent.slice(offset, offset + 64 * 1024));
      // The PTY is full and the program reads nothing: the stream waits between tries.
      await until(() => tries.refused >= 20 && performance.now() - started >= 250, 'a quarter second of refused writes');
      const stalledMs = performance.now() - started;
      const { refused, accepted } = tries;
      // Each refused try waits at least 1 ms before the next: never more tries than milliseconds
      // passed (plus the accepted ones, which go on at once). A spin makes tens of thousands.
      expect(refused).toBeLessThanOrEqual(Math.ceil(stalledMs) + accepted + 1);
      writeFileSync(join(case1, 'GO'), '');
      await until(() => output.includes('copied'), 'the program copied its input', 60_000);
      expect(statSync(join(case1, 'OUT')).size).toBe(total);
      expect(readFileSync(join(case1, 'OUT'), 'latin1') === sent).toBe(true);
    } finally {
      fs.write = original;
      p.kill();
    }
  });

  it("through the PTY thread: a session's 256 KiB into a program not reading arrives whole once it reads, and another terminal answers meanwhile", async () => {
    const case2 = join(dir, 'session');
    fs.mkdirSync(case2);
    const pool = new SessionPool(dir);
    try {
      const [stalled, other] = await Promise.all([pool.open('bash'), pool.open('bash')]);
      const total = 256 * 1024;
      const sent = pattern(total, 's');
      const started = stalled.send({ text: stalledReader(case2, total), waitMs: 0 });
      await started;
      await until(() => stalled.screen.text.includes('ready'), 'the program in raw mode');
      // Four sends of 64 KiB (the input bound), queued behind the PTY's full buffer.
      for (let offset = 0; offset < total; offset += 64 * 1024) await stalled.write(sent.slice(offset, offset + 64 * 1024));
      // The PTY thread serves every terminal: while the first refuses its input, the second runs commands.
      expect(await other.send({ text: 'echo other-$((6*7))' })).toMatchObject({ status: 'done', exitCode: 0, output: 'other-42' });
      expect(existsSync(join(case2, 'OUT'))).toBe(false);
      writeFileSync(join(case2, 'GO'), '');
      await until(() => stalled.screen.text.includes('copied'), 'the program copied its input', 60_000);
      expect(statSync(join(case2, 'OUT')).size).toBe(total);
      expect(readFileSync(join(case2, 'OUT'), 'latin1') === sent).toBe(true);
    } finally {
      await pool.closeAll();
    }
  });
});
