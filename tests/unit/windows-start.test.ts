/**
 * The instance lock on Windows, where a process's start time can only be read by starting
 * PowerShell (0.5 to 2 s). Fakes are unavoidable here: this host is not Windows, so the platform
 * is reported as win32 and `execFileSync` records what would have been started (answering for
 * PowerShell with the start time the test gives). The lock file, its write time and the pid
 * checks are real.
 */
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const started = vi.hoisted(() => ({ calls: [] as string[][], answerMs: null as number | null }));

vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  return {
    ...real,
    execFileSync: (file: string, args: string[]) => {
      started.calls.push([file, ...args]);
      if (file === 'powershell.exe' && started.answerMs !== null) return `${started.answerMs}\r\n`;
      throw new Error(`${file} is not on this machine`);
    },
  };
});

vi.mock('../../src/main/pty/platform.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/main/pty/platform.js')>();
  return { ...real, hostPlatform: { ...real.hostPlatform, os: 'win32' } };
});

const { InstanceConflictError, InstanceLock } = await import('../../src/main/host/instance.js');
const { lockClockSlackMs, ownStartTime } = await import('../../src/main/host/process-start.js');

let home = '';
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'tandem-win-lock-'));
  started.calls = [];
  started.answerMs = null;
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** A lock left by another instance: `pid` alive (this test's parent), written `writtenMs`. */
function foreignLock(writtenMs: number): string {
  const path = join(home, 'instance.lock');
  writeFileSync(path, JSON.stringify({ pid: process.ppid, started: null }));
  utimesSync(path, writtenMs / 1000, writtenMs / 1000);
  return path;
}

describe('the instance lock on Windows', () => {
  it('is taken at start without starting any process (no PowerShell before the window)', () => {
    expect(ownStartTime('win32')).toBeNull();
    const lock = new InstanceLock({ TANDEM_HOME: home });
    lock.acquire();
    expect(started.calls).toEqual([]);
    expect(JSON.parse(readFileSync(join(home, 'instance.lock'), 'utf8'))).toEqual({ pid: process.pid, started: null });
    lock.release();
  });

  it('refuses a found lock whose owner started before it wrote the lock, asking PowerShell only then', () => {
    const writtenMs = Date.now() - 60_000;
    foreignLock(writtenMs);
    started.answerMs = writtenMs - 5_000;
    expect(() => new InstanceLock({ TANDEM_HOME: home }).acquire()).toThrow(InstanceConflictError);
    expect(started.calls).toHaveLength(1);
    expect(started.calls[0]![0]).toBe('powershell.exe');
    expect(started.calls[0]!.at(-1)).toContain(`Get-Process -Id ${process.ppid}`);
  });

  it('takes over a lock whose pid now names a process started after the lock was written', () => {
    const writtenMs = Date.now() - 60_000;
    const path = foreignLock(writtenMs);
    started.answerMs = writtenMs + lockClockSlackMs + 1_000;
    const lock = new InstanceLock({ TANDEM_HOME: home });
    lock.acquire();
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ pid: process.pid, started: null });
    lock.release();
  });
});
