import { execFileSync, spawn as spawnChild } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as pty from 'node-pty';
import { childrenOf, descendants, foregroundPgid, foregroundReads, readStat, sampleForeground, ttyOf, type ForegroundSample } from '../../src/main/pty/proc';
import { classifySyscall } from '../../src/main/pty/syscalls';
import { readTtyModes, type TtyModes } from '../../src/main/pty/termios';
import { teardownTree } from '../../src/main/pty/tree';
import { procfs, runs } from '../support/capabilities';
import { waitFor } from '../support/until.js';

const withProc = runs('/proc foreground probe', procfs);

interface Term {
  pty: pty.IPty;
  id: string;
  tty: string;
}

const terms: Term[] = [];

function spawn(file: string, args: string[]): Term {
  const id = randomUUID();
  const p = pty.spawn(file, args, {
    cols: 80,
    rows: 24,
    cwd: process.cwd(),
    env: { ...process.env, TANDEM_TERMINAL_ID: id } as Record<string, string>,
  });
  const term = { pty: p, id, tty: (p as unknown as { ptsName: string }).ptsName };
  terms.push(term);
  return term;
}

afterEach(async () => {
  for (const t of terms.splice(0)) {
    await teardownTree({ rootPid: t.pty.pid, terminalId: t.id, graceMs: 200 });
    try {
      t.pty.kill('SIGKILL');
    } catch {
      // already exited
    }
  }
});

const sample = (t: Term) => () => sampleForeground(t.pty.pid, t.tty);
const has = (kind: string) => (s: ForegroundSample | null) => !!s && s.threads.some((th) => th.kind === kind && th.watchesTty);

describe('classifySyscall', () => {
  it('maps x64 and arm64 numbers', () => {
    expect(classifySyscall(0, 'x64')).toBe('read');
    expect(classifySyscall(270, 'x64')).toBe('select');
    expect(classifySyscall(7, 'x64')).toBe('poll');
    expect(classifySyscall(281, 'x64')).toBe('epoll');
    expect(classifySyscall(230, 'x64')).toBe('other');
    expect(classifySyscall(63, 'arm64')).toBe('read');
    expect(classifySyscall(73, 'arm64')).toBe('poll');
    expect(classifySyscall(72, 'arm64')).toBe('select');
    expect(classifySyscall(22, 'arm64')).toBe('epoll');
    expect(classifySyscall(0, 'arm64')).toBe('other');
  });
});

describe.runIf(withProc)('/proc foreground probe (needs /proc)', () => {
  it('parses stat with spaces and parens in comm', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-stat-'));
    const exe = path.join(dir, 'x) (y z');
    fs.symlinkSync(execFileSync('which', ['sleep'], { encoding: 'utf8' }).trim(), exe);
    const child = spawnChild(exe, ['100']);
    try {
      const st = await waitFor(
        () => readStat(child.pid!),
        (st) => st?.state === 'S',
      );
      expect(st).toMatchObject({ pid: child.pid, comm: 'x) (y z', ppid: process.pid });
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true });
    }
    expect(readStat(2 ** 22 + 1)).toBeNull();
  });

  it('bash read: blocked in read on the tty, tree helpers agree', async () => {
    const t = spawn('bash', ['--norc', '--noprofile', '-c', 'read x; :']);
    const s = await waitFor(sample(t), has('read'));
    expect(s?.tpgid).toBe(t.pty.pid);
    expect(s?.members).toEqual([t.pty.pid]);
    expect(s?.inspectable).toBe(true);
    expect(foregroundPgid(t.pty.pid)).toBe(t.pty.pid);
    expect(ttyOf(t.pty.pid)).toBe(t.tty);
    expect(childrenOf(process.pid)).toContain(t.pty.pid);
    expect(descendants(process.pid)).toContain(t.pty.pid);
  });

  it('python select.select on stdin: poll via select', async () => {
    const t = spawn('python3', ['-c', 'import select,sys; select.select([sys.stdin],[],[])']);
    await waitFor(sample(t), has('poll'));
  });

  it('python select.poll on fd 0: poll via the pollfd array', async () => {
    // register(0) alone asks for POLLOUT too, and a tty is always writable: POLLIN only.
    const t = spawn('python3', ['-c', 'import select; p=select.poll(); p.register(0, select.POLLIN); p.poll()']);
    await waitFor(sample(t), has('poll'));
  });

  it('python polling only a pipe is not waiting for input', async () => {
    const t = spawn('python3', ['-c', 'import os,select; p=select.poll(); r,w=os.pipe(); p.register(r); p.poll()']);
    const s = await waitFor(sample(t), (s) => !!s && s.threads.some((th) => th.state === 'S'));
    expect(s?.threads.some((th) => th.watchesTty)).toBe(false);
  });

  it('node stdin listener: epoll with the tty in the watched set', async () => {
    const t = spawn(process.execPath, ['-e', 'process.stdin.on("data", () => {})']);
    const s = await waitFor(sample(t), has('poll'));
    expect(s?.threads.length).toBeGreaterThan(1); // libuv threadpool and V8 workers are sampled too
    expect(s?.inspectable).toBe(true);
  });

  it('sleep: blocked, but not on the terminal', async () => {
    const t = spawn('sleep', ['100']);
    const s = await waitFor(sample(t), (s) => !!s && s.threads.length > 0 && s.threads.every((th) => th.state === 'S'));
    expect(s?.threads.map((th) => [th.kind, th.watchesTty])).toEqual([['other', false]]);
  });

  it('tpgid follows a foreground job, and the shell waits in pselect6 at its prompt', async () => {
    const t = spawn('bash', ['--norc', '--noprofile', '-i']);
    const shell = t.pty.pid;
    await waitFor(sample(t), (s) => has('poll')(s) && s?.tpgid === shell);
    t.pty.write('sleep 100\r');
    // The job's process is bash until it execs sleep: wait for the exec, not just the fork.
    const s = await waitFor(sample(t), (s) => !!s && s.tpgid !== shell && s.members.length === 1 && readStat(s.members[0]!)?.comm === 'sleep');
    expect(s?.members).not.toContain(shell);
    expect(readStat(s!.members[0]!)?.comm).toBe('sleep');
    t.pty.write('\x03');
    await waitFor(
      () => foregroundPgid(shell),
      (g) => g === shell,
    );
  });

  it('syscr advances once input is consumed, with the reader blocked again', async () => {
    const t = spawn('bash', ['--norc', '--noprofile', '-c', 'while read x; do :; done']);
    const before = await waitFor(sample(t), has('read'));
    const syscr = before!.threads[0]!.syscr!;
    expect(syscr).toBeGreaterThan(0);
    t.pty.write('hello\r');
    await waitFor(sample(t), (s) => has('read')(s) && s!.threads[0]!.syscr! > syscr);
  });

  it('foregroundReads, the write baseline, has the group and read counters the full sample has', async () => {
    const t = spawn('bash', ['--norc', '--noprofile', '-i']);
    const shell = t.pty.pid;
    await waitFor(sample(t), (s) => has('poll')(s) && s?.tpgid === shell);
    t.pty.write('python3 -c "import threading,sys; threading.Thread(target=lambda: __import__(\'time\').sleep(100)).start(); sys.stdin.readline()"\r');
    const full = await waitFor(sample(t), (s) => has('read')(s) && s!.tpgid !== shell && s!.threads.length === 2);
    const lean = foregroundReads(shell)!;
    expect(lean.tpgid).toBe(full!.tpgid);
    // Both threads of the foreground job, and not the shell's: the counters of the same threads.
    expect(lean.threads.map((thread) => thread.tid).sort()).toEqual(full!.threads.map((thread) => thread.tid).sort());
    const reader = full!.threads.find((thread) => thread.kind === 'read')!;
    const before = lean.threads.find((thread) => thread.tid === reader.tid)!.syscr!;
    expect(before).toBeGreaterThan(0);
    // The line read moves the reader's counter (the other thread sleeps on, so the job stays).
    t.pty.write('hello\r');
    await waitFor(
      () => foregroundReads(shell),
      (after) => (after?.threads.find((thread) => thread.tid === reader.tid)?.syscr ?? 0) > before,
    );
    expect(foregroundReads(process.pid * 1000 + 7)).toBeNull();
  });

  it('getpass reads /dev/tty and shows -echo icanon', async () => {
    const t = spawn('python3', ['-c', 'import getpass; getpass.getpass()']);
    await waitFor(sample(t), has('read'));
    const modes = await waitFor<TtyModes | null>(
      () => readTtyModes(t.tty),
      (m) => m?.echo === false,
    );
    expect(modes).toEqual({ echo: false, icanon: true, isig: true });
  });

  it('a raw-mode program shows -isig', async () => {
    const t = spawn('python3', ['-c', 'import tty,sys; tty.setraw(0); sys.stdin.read(1)']);
    const modes = await waitFor<TtyModes | null>(
      () => readTtyModes(t.tty),
      (m) => m?.isig === false,
    );
    expect(modes?.icanon).toBe(false);
  });

  it('readTtyModes returns null for a path that is not a tty', async () => {
    expect(await readTtyModes('/nonexistent/tty')).toBeNull();
  });
});
