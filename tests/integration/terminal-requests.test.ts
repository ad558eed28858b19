/**
 * A program that asks the terminal something (a cursor position) and blocks reading the answer
 * is not waiting for a person. The host's emulator answers once it has parsed everything before
 * the request; with a backlog to parse (a loaded machine, or costly output just before) the
 * program sits in read() meanwhile, which the probe sees. pwsh does exactly this after a native
 * command: a loaded CI run reported `waiting_input` for `/bin/echo` (issue 22).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasCommand, makeHome, SessionPool } from './helpers.js';
import { procfs, runs } from '../support/capabilities.js';

const home = makeHome();
const pool = new SessionPool(home.home);
afterAll(async () => {
  await pool.closeAll();
  home.cleanup();
});

// Colour changes cost the parser far more than their size: about 700 KB, below the flood rate,
// keeps the emulator busy well past the probe's quiet period on any machine.
const script = `
import os, sys, termios, tty
fd = 0
saved = termios.tcgetattr(fd)
tty.setcbreak(fd)
sys.stdout.write(''.join('\\x1b[3%dm%d' % (i % 8, i) for i in range(100000)) + '\\x1b[0m\\r\\n\\x1b[6n')
sys.stdout.flush()
reply = b''
while not reply.endswith(b'R'):
    reply += os.read(fd, 1)
termios.tcsetattr(fd, termios.TCSADRAIN, saved)
print('answered', reply[2:-1].decode())
`;

describe.runIf(hasCommand('python3') && runs('a cursor-position request behind a parse backlog', procfs))(
  'requests to the terminal',
  { timeout: 60_000 },
  () => {
    it('a program reading the answer to its cursor-position request is running, not waiting for input', async () => {
      const path = join(home.home, 'ask-cursor.py');
      writeFileSync(path, script);
      const t = await pool.open('bash');
      for (let i = 0; i < 3; i++) {
        const r = await t.send({ text: `python3 ${path}`, waitMs: 30_000, maxOutputBytes: 256 });
        expect(r).toMatchObject({ status: 'done', exitCode: 0 });
        expect(r.output).toMatch(/answered \d+;\d+$/);
      }
    });
  },
);
