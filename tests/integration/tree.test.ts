import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import * as pty from 'node-pty';
import { readStat } from '../../src/main/pty/proc';
import { findTerminalProcesses, teardownTree } from '../../src/main/pty/tree';
import { procfs, runs } from '../support/capabilities';
import { waitFor } from '../support/until.js';

const withProc = runs('process-tree teardown', procfs);
// Every sleep gets a unique duration like 1003.<nonce>: found by cmdline, not by the env marker
// under test, and swept in afterAll whatever happens.
const nonce = String(Math.floor(Math.random() * 1e9));
let counter = 0;
const token = () => `${1000 + ++counter}.${nonce}`;

interface Shell {
  pty: pty.IPty;
  id: string;
}
const shells: Shell[] = [];

function spawnShell(): Shell {
  const id = randomUUID();
  const p = pty.spawn('bash', ['--norc', '--noprofile', '-i'], {
    cols: 120,
    rows: 24,
    cwd: process.cwd(),
    env: { ...process.env, TANDEM_TERMINAL_ID: id } as Record<string, string>,
  });
  const shell = { pty: p, id };
  shells.push(shell);
  return shell;
}

function pidsWithArg(arg: string): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(arg)) out.push(Number(name));
    } catch {
      // exited
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  const state = readStat(pid)?.state;
  return state !== undefined && state !== 'Z';
}

/** Orphans become zombies of pid 1, which reaps when it likes (over a second on some VMs). */
async function waitForReaped(pid: number): Promise<void> {
  const errno = () => {
    try {
      process.kill(pid, 0);
      return 'alive';
    } catch (e) {
      return (e as NodeJS.ErrnoException).code;
    }
  };
  await waitFor(errno, (code) => code === 'ESRCH');
}

/** Runs a command line in the shell and returns the pid of the sleep it started. */
async function startSleeper(shell: Shell, command: (sleep: string) => string): Promise<number> {
  const t = token();
  await waitFor(
    () => readStat(shell.pty.pid)?.tpgid,
    (g) => g === shell.pty.pid,
  ); // prompt is up
  shell.pty.write(`${command(`sleep ${t}`)}\r`);
  const [pid] = await waitFor(
    () => pidsWithArg(t).filter((p) => readStat(p)?.comm === 'sleep'),
    (p) => p.length === 1,
  );
  return pid!;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

afterEach(async () => {
  for (const s of shells.splice(0)) {
    await teardownTree({ rootPid: s.pty.pid, terminalId: s.id, graceMs: 200 });
    killQuietly(s.pty.pid);
  }
});

afterAll(() => {
  if (!withProc) return;
  for (const name of fs.readdirSync('/proc')) {
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(`.${nonce}\0`)) killQuietly(Number(name));
    } catch {
      // not a process, or exited
    }
  }
});

describe.runIf(withProc)('process-tree teardown (needs /proc)', () => {
  const cases: Array<[string, (sleep: string) => string, 'child' | 'stopped' | 'escaped']> = [
    ['background job', (s) => `${s} &`, 'child'],
    ['nohup background job', (s) => `nohup ${s} >/dev/null 2>&1 &`, 'child'],
    ['stopped background job', (s) => `${s} &`, 'stopped'],
    ['setsid', (s) => `setsid ${s}`, 'escaped'],
    ['double-forked daemon', (s) => `( (${s} &) & )`, 'escaped'],
    ['setsid -f daemon', (s) => `setsid -f ${s}`, 'escaped'],
  ];

  for (const [name, command, where] of cases) {
    it(`kills a ${name}`, async () => {
      const shell = spawnShell();
      const pid = await startSleeper(shell, command);
      const ppid = readStat(pid)?.ppid;
      if (where === 'escaped') expect(ppid).not.toBe(shell.pty.pid);
      else expect(ppid).toBe(shell.pty.pid);
      if (where === 'stopped') {
        process.kill(pid, 'SIGSTOP'); // from here: `kill -STOP $!` could stop bash before its exec
        await waitFor(
          () => readStat(pid)?.state,
          (st) => st === 'T',
        );
      }
      expect(findTerminalProcesses(shell.pty.pid, shell.id)).toEqual(expect.arrayContaining([shell.pty.pid, pid]));

      const { orphans } = await teardownTree({ rootPid: shell.pty.pid, terminalId: shell.id });
      expect(orphans).toEqual([]);
      expect(alive(pid)).toBe(false);
      expect(alive(shell.pty.pid)).toBe(false);
      await waitForReaped(pid);
    });
  }

  it('SIGKILLs a process that ignores SIGTERM (and SIGHUP) after the grace period', async () => {
    const shell = spawnShell();
    const pid = await startSleeper(shell, (s) => `bash -c "trap '' TERM HUP; ${s}; :"`);
    const start = Date.now();
    const { orphans } = await teardownTree({ rootPid: shell.pty.pid, terminalId: shell.id, graceMs: 300 });
    expect(Date.now() - start).toBeGreaterThanOrEqual(300);
    expect(orphans).toEqual([]);
    expect(alive(pid)).toBe(false);
  });

  it('retries after the shell is gone: session and env marker still find the leftovers', async () => {
    const shell = spawnShell();
    const daemon = await startSleeper(shell, (s) => `setsid -f ${s}`);
    const orphanedJob = await startSleeper(shell, (s) => `( (${s} &) & )`);
    // The outer subshell was a foreground job: until bash takes the terminal back, its group
    // (the sleeper's) is the terminal's, and the kernel hangs it up when bash dies.
    await waitFor(
      () => readStat(shell.pty.pid)?.tpgid,
      (g) => g === shell.pty.pid,
    );
    killQuietly(shell.pty.pid); // what node-pty's kill does: the shell only
    await waitFor(
      () => alive(shell.pty.pid),
      (a) => !a,
    );
    // Both survive their shell (states printed if not, to tell a killer from a misread).
    const state = (pid: number) => ({ alive: alive(pid), stat: readStat(pid) });
    expect({ daemon: state(daemon), orphanedJob: state(orphanedJob) }).toMatchObject({ daemon: { alive: true }, orphanedJob: { alive: true } });

    expect((await teardownTree({ rootPid: shell.pty.pid, terminalId: shell.id })).orphans).toEqual([]);
    expect(alive(daemon) || alive(orphanedJob)).toBe(false);
    expect((await teardownTree({ rootPid: shell.pty.pid, terminalId: shell.id })).orphans).toEqual([]);
  });

  it("leaves another terminal's processes alone", async () => {
    const a = spawnShell();
    const b = spawnShell();
    const sleepA = await startSleeper(a, (s) => `setsid -f ${s}`);
    const sleepB = await startSleeper(b, (s) => `setsid -f ${s}`);
    expect(findTerminalProcesses(a.pty.pid, a.id)).not.toContain(sleepB);
    await teardownTree({ rootPid: a.pty.pid, terminalId: a.id });
    expect(alive(sleepA)).toBe(false);
    expect(alive(sleepB)).toBe(true);
    expect(alive(b.pty.pid)).toBe(true);
    // A stale root pid that now belongs to another terminal is not ours to kill.
    expect(findTerminalProcesses(b.pty.pid, a.id)).toEqual([]);
  });

  it('never includes this process or its ancestors', () => {
    const found = findTerminalProcesses(process.pid, 'no-such-terminal');
    expect(found).not.toContain(process.pid);
    expect(found).not.toContain(process.ppid);
    expect(found).not.toContain(1);
  });
});
