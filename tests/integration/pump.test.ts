import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { readStat, sampleForeground } from '../../src/main/pty/proc.js';
import * as nodePty from 'node-pty';
import { maxAheadChars, type PtyProcess, ptyReader, pullPending, spawnPty } from '../../src/main/pty/pump.js';
import { procfs, runs, unixPty } from '../support/capabilities.js';
import { gate } from '../support/gate.js';
import { until } from '../support/until.js';

// The thread pumps Unix PTYs (Windows reads ConPTY on the main thread); two checks look into /proc.
const pumped = runs('PTY pump thread', unixPty);
const lookIntoProc = pumped && runs('PTY pump thread: sync checks that watch a blocked read in /proc', procfs);

const opts = { name: 'xterm-256color', cols: 80, rows: 24, cwd: '/', env: { ...process.env, PATH: process.env.PATH ?? '/usr/bin:/bin' } };
const flood = ['-c', 'yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000000'];

/** Blocks this thread (timers, messages, everything) for `ms`. */
function blockThread(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function exitOf(p: PtyProcess): Promise<{ exitCode: number; signal: number }> {
  return new Promise((resolve) => p.onExit(resolve));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The process has exited: gone, or a zombie nobody reaped yet. */
function exited(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  return readStat(pid)?.state === 'Z';
}

describe.runIf(pumped)('PTY pump thread', () => {
  const live: PtyProcess[] = [];
  afterEach(() => {
    for (const p of live.splice(0)) p.kill('SIGKILL');
  });

  it('reads PTYs on its own thread, with output before the exit code', async () => {
    expect(ptyReader()).toBe('thread');
    // Exiting right after the print: the last bytes still in the kernel arrive before the exit.
    const p = await spawnPty('/bin/sh', ['-c', 'head -c 3000000 /dev/zero | tr "\\0" x; exit 7'], opts);
    let chars = 0;
    p.onData((data) => (chars += data.length));
    const exit = await exitOf(p);
    expect(exit.exitCode).toBe(7);
    expect(chars).toBe(3_000_000);
  });

  it('posts a stream in batches of many reads, and a lone line after a quiet spell at once', async () => {
    // A PTY read holds at most a few KiB (the line discipline's buffer): a flood posted read by
    // read costs both threads a message each. While output streams the pump batches it.
    // The quiet spell lasts until the whole stream has arrived here (a gate, not a sleep a busy
    // main thread could outlast, so the stream's tail and the line would share a post).
    const g = gate();
    const p = await spawnPty(
      '/bin/sh',
      ['-c', `head -c 20000000 /dev/zero | tr "\\0" x; until [ -e ${g.path} ]; do sleep 0.05; done; printf lone-line; sleep 100`],
      opts,
    );
    live.push(p);
    const sizes: number[] = [];
    let received = 0;
    let text = '';
    p.onData((data) => {
      sizes.push(data.length);
      received += data.length;
      if (data.includes('lone-line')) text = data;
    });
    await until(() => received >= 20_000_000, 'the stream');
    g.open();
    await until(() => text !== '', 'the lone line');
    g.dispose();
    expect(text).toContain('lone-line');
    const streamed = sizes.slice(0, -1).reduce((sum, n) => sum + n, 0);
    expect(streamed).toBe(20_000_000);
    // Posted read by read, the mean would stay below 4 KiB.
    expect(streamed / (sizes.length - 1)).toBeGreaterThan(8 * 1024);
    expect(text).toBe('lone-line');
  });

  it.runIf(lookIntoProc)('syncs: what a program printed before it blocked has arrived once sync resolves (needs /proc)', async () => {
    const p = await spawnPty('/bin/sh', ['-c', 'printf before-the-wait; read x'], opts);
    live.push(p);
    let text = '';
    p.onData((data) => (text += data));
    // Look at /proc without yielding (as a starved loop would): nothing can be delivered meanwhile.
    const deadline = Date.now() + 10_000;
    let blocked = false;
    while (!blocked && Date.now() < deadline) blocked = sampleForeground(p.pid, p.ptsName!)?.threads.some((t) => t.kind === 'read') ?? false;
    expect(blocked).toBe(true);
    expect(text).toBe('');
    // The slave's bytes reach the master through the kernel's flip-buffer worker
    // (tty_flip_buffer_push queues it), so a program blocked after its write does not mean the
    // master holds them yet: on a saturated machine the worker can run after one sync's turns
    // (a loaded .ci/run saw ''). What sync promises is what the master held; a few syncs give the
    // worker its turn, and the bytes then come once, whole, by a sync and not by waiting.
    for (let i = 0; i < 5 && text === ''; i += 1) await p.sync();
    expect(text).toBe('before-the-wait');
  });

  it.runIf(lookIntoProc)('sync delivers what the PTY held before it resolves (a waiting look is confirmed after it; needs /proc)', async () => {
    const p = await spawnPty('/bin/sh', ['-c', 'read a; printf "got-%s" "$a"; read b'], opts);
    live.push(p);
    let text = '';
    p.onData((data) => (text += data));
    const reader = () => sampleForeground(p.pid, p.ptsName!)?.threads.find((t) => t.pid === p.pid && t.kind === 'read');
    await expect.poll(() => reader()?.syscr ?? null).not.toBeNull();
    const wrote = () => Number(/^wchar:\s*(\d+)/m.exec(readFileSync(`/proc/${p.pid}/io`, 'utf8'))?.[1] ?? 0);
    const before = wrote();
    p.write('hi\n');
    // Without yielding (so nothing is delivered meanwhile): until sh has printed and blocks in
    // its next read (a read seen before the print could be the first one, still taking bytes).
    const deadline = Date.now() + 5000;
    while (!(wrote() > before && reader()) && Date.now() < deadline) blockThread(1);
    expect(wrote()).toBeGreaterThan(before);
    expect(text).not.toContain('got-hi');
    await p.sync();
    expect(text).toContain('got-hi');
  });

  it('stops reading while the main thread is blocked, once a bounded amount waits for it', async () => {
    const p = await spawnPty('/bin/sh', flood, opts);
    live.push(p);
    let chars = 0;
    p.onData((data) => (chars += data.length));
    await expect.poll(() => chars).toBeGreaterThan(1_000_000);
    // Unbounded, a second of `yes` would queue tens of megabytes for this thread.
    const before = chars;
    blockThread(1000);
    // Count what was read during the block alone: pausing before this thread yields stops the
    // reads that consuming the backlog would allow (the pump gets the pause before any
    // 'consumed'), and sync delivers everything posted before it. A slow machine cannot add to it.
    p.pause();
    await p.sync();
    expect(maxAheadChars).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(chars - before).toBeLessThan(8 * 1024 * 1024);
    // And it reads on once this thread consumed the backlog (a pump still holding would not).
    const after = chars;
    p.resume();
    await expect.poll(() => chars).toBeGreaterThan(after + 1_000_000);
  });

  it('pauses and resumes reading for flow control', async () => {
    const p = await spawnPty('/bin/sh', flood, opts);
    live.push(p);
    let chars = 0;
    p.onData((data) => (chars += data.length));
    await expect.poll(() => chars).toBeGreaterThan(100_000);
    p.pause();
    // Everything posted before the pause has arrived once sync resolves.
    await p.sync();
    const paused = chars;
    // Nothing arriving has no event: a fixed look, which a slow machine only lengthens.
    await sleep(300);
    expect(chars).toBe(paused);
    p.resume();
    await expect.poll(() => chars).toBeGreaterThan(paused + 100_000);
  });

  it('writes, resizes and signals through the thread', async () => {
    const p = await spawnPty('/bin/sh', ['-c', 'stty -echo; printf ready; read line; stty size; echo "got:$line"; sleep 100'], opts);
    live.push(p);
    let out = '';
    p.onData((data) => (out += data));
    await expect.poll(() => out).toContain('ready');
    p.resize(100, 40);
    p.write('hello\r');
    await expect.poll(() => out).toMatch(/40 100\r\ngot:hello/);
    const exit = exitOf(p);
    p.kill('SIGTERM');
    expect((await exit).signal).toBe(15);
  });

  it('keeps the last output of a shell that exits while reading is paused, on the thread and inline', async () => {
    // node-pty destroys its stream 200 ms after the exit unless it saw end-of-file: paused
    // for flow control over that, the shell's last bytes went with it.
    for (const mode of ['thread', 'inline'] as const) {
      if (mode === 'inline') process.env.TANDEM_PTY_THREAD = '0';
      try {
        expect(ptyReader()).toBe(mode);
        const p = await spawnPty('/bin/sh', ['-c', 'sleep 0.3; head -c 3000 /dev/zero | tr "\\0" y; exit 7'], opts);
        p.pause();
        let chars = 0;
        p.onData((data) => (chars += (data.match(/y/g) ?? []).length));
        const exit = exitOf(p);
        // Paused over the exit (waited for, not guessed), then over node-pty's 200 ms timer after
        // it, which has no event: a slow machine only lengthens the pause.
        await until(() => exited(p.pid), 'the shell to exit');
        await sleep(1000);
        p.resume();
        expect((await exit).exitCode).toBe(7);
        // All of it, once, by the time the exit is reported.
        expect(chars, mode).toBe(3000);
      } finally {
        delete process.env.TANDEM_PTY_THREAD;
      }
    }
  });

  it('reads inline with TANDEM_PTY_THREAD=0', async () => {
    process.env.TANDEM_PTY_THREAD = '0';
    try {
      expect(ptyReader()).toBe('inline');
      const p = await spawnPty('/bin/sh', ['-c', 'echo inline-ok'], opts);
      let out = '';
      p.onData((data) => (out += data));
      expect((await exitOf(p)).exitCode).toBe(0);
      await expect.poll(() => out).toContain('inline-ok');
    } finally {
      delete process.env.TANDEM_PTY_THREAD;
    }
  });

  it.runIf(lookIntoProc)('hands a sync what the kernel holds for the master, through node-pty, before any loop turn', async () => {
    // Linux moves a program's output to the master later, on a kernel worker; epoll may not
    // report it yet when a confirming look runs. pullPending reads it now (src/main/pty/pump.ts).
    const p = nodePty.spawn('/bin/sh', ['-c', 'echo started; sleep 0.2; printf "q\\303\\251? "; exec sleep 30'], opts);
    try {
      let out = '';
      p.onData((data) => (out += data));
      await until(() => out.includes('started'), 'the stream to run');
      out = '';
      // From here this thread never turns its loop: the output can only come from pullPending.
      const execed = () => readFileSync(`/proc/${p.pid}/cmdline`, 'utf8') === 'sleep\u000030\u0000';
      const deadline = Date.now() + 30_000;
      while (!execed() && Date.now() < deadline) blockThread(20);
      expect(execed()).toBe(true);
      expect(out).toBe('');
      pullPending(p);
      expect(out).toBe('qé? ');
      // Nothing more was waiting: a second pull reads nothing and does not fail.
      pullPending(p);
      expect(out).toBe('qé? ');
    } finally {
      p.kill('SIGKILL');
    }
  });
});
