import { describe, expect, it } from 'vitest';
import { wrapNodePty } from '../../src/main/pty/pump.js';
import { conptyOptions, windowsBuildNumber, windowsPtyInfo } from '../../src/main/pty/win-pty.js';
import { conptyChunkSpacingMs, writeSpaced } from '../../src/main/pty/win-input.js';
import {
  createdWithin,
  creationSlackMs,
  fileTimeToMs,
  msToFileTime,
  parseProcessRows,
  survivors,
  teardownWindowsTree,
  treeOf,
  type WinProcess,
} from '../../src/main/pty/win-tree.js';
import { findGitBash, gitBashCandidates, isWslLauncher } from '../../src/main/shells/git-bash.js';
import { dialectFor } from '../../src/main/shells/resolve.js';

describe('ConPTY choice', () => {
  it('reads the build from os.release()', () => {
    expect(windowsBuildNumber('10.0.22631')).toBe(22631);
    expect(windowsBuildNumber('garbage')).toBe(0);
  });

  it('asks for the bundled ConPTY, and refuses a Windows that would silently get winpty', () => {
    expect(conptyOptions('10.0.19045')).toEqual({ useConpty: true, useConptyDll: true });
    expect(() => conptyOptions('10.0.17763')).toThrow(/Windows 10 version 1903 \(build 18309\) or later.*build 17763/);
  });

  it("gives xterm's windowsPty on Windows only", () => {
    expect(windowsPtyInfo('win32', '10.0.26100')).toEqual({ backend: 'conpty', buildNumber: 26100 });
    expect(windowsPtyInfo('linux', '6.1.0')).toBeUndefined();
  });
});

/** A clock whose timers run when the test says. */
function manualClock() {
  let now = 0;
  const timers: Array<{ at: number; fn: () => void }> = [];
  return {
    setTimeout: (fn: () => void, ms: number) => timers.push({ at: now + ms, fn }),
    async advance(ms: number) {
      now += ms;
      for (let due = timers.filter((t) => t.at <= now); due.length > 0; due = timers.filter((t) => t.at <= now)) {
        for (const t of due) {
          timers.splice(timers.indexOf(t), 1);
          t.fn();
        }
        await Promise.resolve();
        await Promise.resolve();
      }
    },
  };
}

describe('spaced ConPTY input', () => {
  it('writes the first chunk at once and each next one 5 ms later, whole escape sequences only', async () => {
    const clock = manualClock();
    const written: string[] = [];
    const data = `${'a'.repeat(48)}\x1b[200~${'b'.repeat(60)}\x1b[201~\r`;
    const done = writeSpaced(data, (chunk) => written.push(chunk), clock);
    expect(written).toHaveLength(1);
    await clock.advance(conptyChunkSpacingMs - 1);
    expect(written).toHaveLength(1);
    // A protocol reply written meanwhile lands between chunks.
    written.push('\x1b[1;1R');
    await clock.advance(1);
    expect(written).toHaveLength(3);
    for (let i = 0; i < 10 && written.length < 5; i++) await clock.advance(conptyChunkSpacingMs);
    await done;
    expect(written.filter((chunk) => chunk !== '\x1b[1;1R').join('')).toBe(data);
    expect(written[1]).toBe('\x1b[1;1R');
    expect(written.some((chunk) => /\x1b\[20[01]$|^0~|^1~/.test(chunk))).toBe(false);
  });
});

describe('Windows process trees', () => {
  const rows = parseProcessRows(
    ['100,4,1000,pwsh.exe', '101,100,1001,ping.exe', '102,101,1002,conhost.exe', '103,55,1003,explorer.exe', '104,100,900,reused.exe', 'junk line', ''].join(
      '\r\n',
    ),
  );

  it('parses rows and walks parentage, skipping a child older than its parent (a reused pid)', () => {
    expect(rows).toHaveLength(5);
    expect(treeOf(rows, 100).map((row) => row.pid)).toEqual([100, 101, 102]);
  });

  it('finds the leftovers of a shell that already exited', () => {
    expect(
      treeOf(
        rows.filter((row) => row.pid !== 100),
        100,
        1000,
      ).map((row) => row.pid),
    ).toEqual([101, 102]);
  });

  it('leaves out a process that took the pid of a root that is gone, and what it started', () => {
    const now = parseProcessRows(['101,100,1001,ping.exe', '100,7,5000,chrome.exe', '105,100,5001,chrome.exe'].join('\n'));
    expect(treeOf(now, 100, 1000).map((row) => row.pid)).toEqual([101]);
    expect(treeOf(now, 100).map((row) => row.pid)).toEqual([100, 105]);
  });

  it('takes a creation time as the shell only inside the window recorded at its spawn', () => {
    const spawned = Date.UTC(2026, 0, 1);
    const window = { notBeforeMs: spawned, notAfterMs: spawned + 300 };
    expect(fileTimeToMs(msToFileTime(spawned))).toBe(spawned);
    expect(createdWithin(msToFileTime(spawned + 150), window)).toBe(true);
    expect(createdWithin(msToFileTime(spawned - creationSlackMs - 1), window)).toBe(false);
    expect(createdWithin(msToFileTime(spawned + 300 + creationSlackMs + 1), window)).toBe(false);
  });

  it('never tears down pid 0 or System (what node-pty reports before ConPTY connects)', async () => {
    const listed: string[] = [];
    const killed: number[] = [];
    const rows: WinProcess[] = parseProcessRows(['0,0,1,System Idle Process', '4,0,1,System', '150,4,2,Registry', '480,4,3,smss.exe'].join('\n'));
    const table = { list: async () => (listed.push('list'), rows), kill: (pid: number) => void killed.push(pid) };
    const window = { notBeforeMs: 0, notAfterMs: Date.now() };
    for (const rootPid of [0, 4]) expect(await teardownWindowsTree({ rootPid, rootCreated: window }, table)).toEqual({ orphans: [] });
    // Nor a root whose creation was never recorded: it cannot be told from a reused pid.
    expect(await teardownWindowsTree({ rootPid: 150, rootCreated: null }, table)).toEqual({ orphans: [] });
    expect(listed).toEqual([]);
    expect(killed).toEqual([]);
  });

  it('counts as surviving only the same pid with the same creation time', () => {
    const before = treeOf(rows, 100);
    expect(
      survivors(before, [
        { pid: 101, ppid: 100, created: 1001, name: 'ping.exe' },
        { pid: 102, ppid: 1, created: 5000, name: 'other.exe' },
      ]).map((row) => row.pid),
    ).toEqual([101]);
  });
});

describe("node-pty's Windows pid", () => {
  it('is 0 until ConPTY connects, then read from node-pty; the window of its creation is kept', () => {
    const fake = {
      pid: 0,
      onData: (listener: (data: string) => void) => ((emit = listener), { dispose() {} }),
      onExit: () => ({ dispose() {} }),
      write() {},
      resize() {},
      pause() {},
      resume() {},
      kill() {},
    };
    let emit: (data: string) => void = () => {};
    let wall = 1_000;
    const wrapped = wrapNodePty(fake, 1_000, () => wall);
    expect(wrapped.pid).toBe(0);
    expect(wrapped.created).toBeNull();
    wall = 1_250;
    fake.pid = 6120;
    emit('\x1b[c');
    wall = 9_000;
    expect(wrapped.pid).toBe(6120);
    expect(wrapped.created).toEqual({ notBeforeMs: 1_000, notAfterMs: 1_250 });
  });
});

describe('Git Bash, not WSL', () => {
  const env = {
    ProgramFiles: 'C:\\Program Files',
    'ProgramFiles(x86)': 'C:\\Program Files (x86)',
    LOCALAPPDATA: 'C:\\Users\\p\\AppData\\Local',
    USERPROFILE: 'C:\\Users\\p',
  };

  it('looks where Git for Windows installs, and beside git.exe on PATH', () => {
    const paths = gitBashCandidates(env, 'D:\\Tools\\Git\\cmd\\git.exe');
    expect(paths[0]).toBe('D:\\Tools\\Git\\bin\\bash.exe');
    expect(paths).toContain('C:\\Program Files\\Git\\bin\\bash.exe');
    expect(paths).toContain('C:\\Users\\p\\AppData\\Local\\Programs\\Git\\bin\\bash.exe');
    expect(paths).toContain('C:\\Users\\p\\scoop\\apps\\git\\current\\bin\\bash.exe');
    expect(findGitBash(env, null, (path) => path === 'C:\\Program Files (x86)\\Git\\bin\\bash.exe')).toBe('C:\\Program Files (x86)\\Git\\bin\\bash.exe');
    expect(findGitBash(env, null, () => false)).toBeNull();
  });

  it('gives the WSL launchers no integration', () => {
    expect(isWslLauncher('C:\\Windows\\System32\\bash.exe')).toBe(true);
    expect(isWslLauncher('C:\\Windows\\System32\\wsl.exe')).toBe(true);
    expect(isWslLauncher('C:\\Program Files\\Git\\bin\\bash.exe')).toBe(false);
    expect(dialectFor('C:\\Windows\\System32\\bash.exe')).toBeNull();
    expect(dialectFor('C:\\Program Files\\Git\\bin\\bash.exe')?.name).toBe('bash');
  });
});
