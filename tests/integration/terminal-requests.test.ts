/**
 * A program that asks the terminal something (a cursor position) and blocks reading the answer
 * is not waiting for a person. The host's emulator answers once it has parsed everything before
 * the request; with a backlog to parse (a loaded machine, or costly output just before) the
 * program sits in read() meanwhile, which the probe sees. pwsh does exactly this after a native
 * command: a loaded CI run reported `waiting_input` for `/bin/echo` (issue 22).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { hasCommand, makeHome, SessionPool } from './helpers.js';
import { procfs, runs } from '../support/capabilities.js';

/**
 * Replies on their way to the program, held while `on` (a loaded machine's slow delivery, made
 * certain), and the looks the session took meanwhile after the longest quiet period any evidence needs.
 */
const held = vi.hoisted(() => ({ on: false, replies: [] as Array<() => void>, quietLooks: 0 }));
vi.mock('../../src/main/pty/pump.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/main/pty/pump.js')>();
  return {
    ...real,
    spawnPty: async (...args: Parameters<typeof real.spawnPty>) => {
      const p = await real.spawnPty(...args);
      const write = p.write.bind(p);
      p.write = (data: string) => {
        if (held.on && /^\x1b\[\d+;\d+R$/.test(data)) held.replies.push(() => write(data));
        else write(data);
      };
      return p;
    },
  };
});
vi.mock('../../src/main/terminal/readiness/probe.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/main/terminal/readiness/probe.js')>();
  return {
    ...real,
    probeLook: (...args: Parameters<typeof real.probeLook>) => {
      if (held.on && held.replies.length > 0 && args[2] >= real.pollQuietMs) held.quietLooks += 1;
      return real.probeLook(...args);
    },
  };
});

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

describe.runIf(hasCommand('python3') && runs('a cursor-position request behind a parse backlog', procfs))('requests to the terminal', () => {
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

  it('a program whose answer has not reached it yet is running, however long the reply takes', async () => {
    // The cursor-position round trip of pwsh after each command, without the backlog: the
    // emulator answers at once, and the answer is slow to arrive. The program reads meanwhile,
    // with nothing printed: only a read after the reply was written is evidence. pwsh's
    // `echo still` came back `waiting_input` so in a full-suite run (issue 22).
    const path = join(home.home, 'ask-once.py');
    writeFileSync(path, script.replace(/sys\.stdout\.write\(.*\)\n/, "sys.stdout.write('\\x1b[6n')\n"));
    const t = await pool.open('bash');
    held.on = true;
    try {
      const sent = t.send({ text: `python3 ${path}`, waitMs: 60_000, maxOutputBytes: 256 });
      let settled: string | null = null;
      void sent.then((r) => (settled = r.status));
      // Several looks with the program in read() and the quiet long enough for any evidence:
      // two of them settled the send as waiting for input before.
      await expect.poll(() => settled !== null || held.quietLooks >= 4, { timeout: 60_000 }).toBe(true);
      expect(settled).toBeNull();
      held.on = false;
      for (const release of held.replies.splice(0)) release();
      const r = await sent;
      expect(r).toMatchObject({ status: 'done', exitCode: 0 });
      expect(r.output).toMatch(/answered \d+;\d+$/);
    } finally {
      held.on = false;
      for (const release of held.replies.splice(0)) release();
    }
  });
});
