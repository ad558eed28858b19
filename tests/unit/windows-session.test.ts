import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { IDisposable } from 'node-pty';
import { type PtyPlatform, windowsPlatform } from '../../src/main/pty/platform.js';
import { type NodePtyProcess, wrapNodePty } from '../../src/main/pty/pump.js';
import { msToFileTime, teardownWindowsTree, type WinProcess, type WinProcessTable } from '../../src/main/pty/win-tree.js';
import { TerminalSession } from '../../src/main/terminal/session/session.js';
import { ManualClock } from '../support/manual-clock.js';

/**
 * The session's Windows behaviours. Fakes are unavoidable: no Windows machine (so no ConPTY and
 * no Windows process table) runs here. The fake stands where node-pty's Windows terminal stands
 * (Tandem's own wrapper, wrapNodePty, runs over it as over the real one); it only records writes
 * and kills and replays what a pseudoconsole would emit. As node-pty 1.2.0-beta.11 and later do,
 * it reports pid 0 until ConPTY connects, and sets the pid just before the first output.
 */
class FakeConpty implements NodePtyProcess {
  pid = 0;
  readonly written: string[] = [];
  kills = 0;
  private readonly dataListeners = new Set<(data: string) => void>();
  private readonly exitListeners = new Set<(exit: { exitCode: number; signal?: number }) => void>();
  readonly onData = (listener: (data: string) => void): IDisposable => {
    this.dataListeners.add(listener);
    return { dispose: () => void this.dataListeners.delete(listener) };
  };
  readonly onExit = (listener: (exit: { exitCode: number; signal?: number }) => void): IDisposable => {
    this.exitListeners.add(listener);
    return { dispose: () => void this.exitListeners.delete(listener) };
  };
  /** ConPTY connected: node-pty learns the pid, then its first output arrives. */
  connect(pid: number, firstOutput: string): void {
    this.pid = pid;
    this.emit(firstOutput);
  }
  emit(data: string): void {
    for (const listener of [...this.dataListeners]) listener(data);
  }
  exit(exitCode: number): void {
    for (const listener of [...this.exitListeners]) listener({ exitCode });
  }
  write(data: string): void {
    this.written.push(data);
  }
  resize(): void {}
  pause(): void {}
  resume(): void {}
  /** As ConPTY does, a kill ends the shell: its exit follows. */
  kill(): void {
    this.kills++;
    setImmediate(() => this.exit(1));
  }
}

/** A Windows process table: rows as Get-CimInstance lists them, and the kills asked of it. */
class FakeProcessTable implements WinProcessTable {
  readonly killed: number[] = [];
  constructor(public rows: WinProcess[]) {}
  async list(): Promise<WinProcess[]> {
    return this.rows.map((row) => ({ ...row }));
  }
  kill(pid: number): void {
    this.killed.push(pid);
    this.rows = this.rows.filter((row) => row.pid !== pid);
  }
}

/** This machine's wall clock for the fake: the shell is spawned at `spawnedAt`, connects 300 ms later. */
const spawnedAt = Date.UTC(2026, 11, 2, 12, 0, 0);
const ticks = (msAfterSpawn: number) => msToFileTime(spawnedAt + msAfterSpawn);
/** What every Windows machine runs: never part of a terminal's tree. */
const system: WinProcess[] = [
  { pid: 0, ppid: 0, created: ticks(-3_600_000), name: 'System Idle Process' },
  { pid: 4, ppid: 0, created: ticks(-3_600_000), name: 'System' },
  { pid: 150, ppid: 4, created: ticks(-3_600_000), name: 'Registry' },
  { pid: 480, ppid: 4, created: ticks(-3_500_000), name: 'smss.exe' },
];
const shellPid = 4_194_000;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function openOnWindows(
  clock: ManualClock,
  table = new FakeProcessTable([...system]),
): Promise<{ session: TerminalSession; pty: FakeConpty; table: FakeProcessTable }> {
  const pty = new FakeConpty();
  let wall = spawnedAt;
  // The real Windows platform but for the process table behind its teardown.
  const platform: PtyPlatform = { ...windowsPlatform, teardown: (opts) => teardownWindowsTree(opts, table) };
  const started = TerminalSession.start({
    shell: { path: 'C:\\fake\\shell.exe', name: 'shell', dialect: null },
    cwd: tmpdir(),
    origin: 'user',
    clock,
    platform,
    spawn: async () => wrapNodePty(pty, spawnedAt, () => wall),
  });
  for (let i = 0; i < 5; i++) await turn();
  // A person's terminal opens on the pseudoconsole's first output.
  wall = spawnedAt + 300;
  pty.connect(shellPid, 'PS C:\\> ');
  const session = await started;
  await session.drained();
  return { session, pty, table };
}

/** Close waits out the exit drain on the manual clock. */
async function closeWith(session: TerminalSession, clock: ManualClock): Promise<{ closed: boolean; orphans: Array<{ pid: number; comm: string }> }> {
  const closed = session.close();
  while (session.status !== 'exited') {
    await turn();
    await clock.advance(25);
  }
  return closed;
}

describe('the pid of a ConPTY shell (node-pty reports 0 until ConPTY connects)', () => {
  it('is read once known: the terminal reports it, and close tears down its tree, never pid 0', async () => {
    const clock = new ManualClock();
    const table = new FakeProcessTable([
      ...system,
      { pid: shellPid, ppid: 9000, created: ticks(120), name: 'pwsh.exe' },
      { pid: 5000, ppid: shellPid, created: ticks(60_000), name: 'ping.exe' },
    ]);
    const { session, pty } = await openOnWindows(clock, table);
    expect(session.pid).toBe(shellPid);
    expect(await closeWith(session, clock)).toEqual({ closed: true, orphans: [] });
    expect(table.killed).toEqual([shellPid, 5000]);
    expect(table.rows.map((row) => row.name)).toEqual(['System Idle Process', 'System', 'Registry', 'smss.exe']);
    expect(pty.kills).toBe(1);
  });

  it('closing a shell that exited kills what it left, not the process that reused its pid', async () => {
    const clock = new ManualClock();
    const table = new FakeProcessTable([
      ...system,
      { pid: shellPid, ppid: 9000, created: ticks(120), name: 'pwsh.exe' },
      { pid: 5000, ppid: shellPid, created: ticks(60_000), name: 'ping.exe' },
    ]);
    const { session, pty } = await openOnWindows(clock, table);
    pty.exit(0);
    await clock.advance(25);
    expect(session.status).toBe('exited');
    // Ten minutes on, the shell's pid names another program, which started one of its own.
    table.rows = [
      ...table.rows.filter((row) => row.pid !== shellPid),
      { pid: shellPid, ppid: 700, created: ticks(600_000), name: 'chrome.exe' },
      { pid: 5001, ppid: shellPid, created: ticks(600_500), name: 'chrome.exe' },
    ];
    expect(await session.close()).toEqual({ closed: true, orphans: [] });
    expect(table.killed).toEqual([5000]);
    expect(table.rows.filter((row) => row.name === 'chrome.exe').map((row) => row.pid)).toEqual([shellPid, 5001]);
    expect(pty.kills).toBe(0);
  });
});

describe('a terminal on Windows (fake ConPTY)', () => {
  it('writes input in chunks of at most 50 characters, 5 ms apart', async () => {
    const clock = new ManualClock();
    const { session, pty } = await openOnWindows(clock);
    const text = 'x'.repeat(120);
    const written = session.write(text);
    for (let i = 0; i < 5 && pty.written.length === 0; i++) await turn();
    expect(pty.written).toEqual(['x'.repeat(50)]);
    await clock.advance(5);
    expect(pty.written).toEqual(['x'.repeat(50), 'x'.repeat(50)]);
    await clock.advance(5);
    await written;
    expect(pty.written).toEqual(['x'.repeat(50), 'x'.repeat(50), 'x'.repeat(20)]);
    expect((await closeWith(session, clock)).closed).toBe(true);
  });

  it('interrupts with the \\x03 key, not a signal, and refuses other signals', async () => {
    const clock = new ManualClock();
    const { session, pty } = await openOnWindows(clock);
    await session.interrupt();
    expect(pty.written).toEqual(['\x03']);
    await expect(session.signal('SIGTERM')).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(pty.written).toEqual(['\x03']);
    expect((await closeWith(session, clock)).closed).toBe(true);
  });

  it('drains output that follows the exit before reporting exited', async () => {
    const clock = new ManualClock();
    const { session, pty } = await openOnWindows(clock);
    const seen: string[] = [];
    session.onOutput((text) => seen.push(text));
    pty.exit(3);
    pty.emit('goodbye');
    await clock.advance(24);
    expect(session.status).not.toBe('exited');
    pty.emit(' world');
    await clock.advance(24);
    expect(session.status).not.toBe('exited');
    await clock.advance(1);
    expect(session.status).toBe('exited');
    expect(session.exitCode).toBe(3);
    expect(seen.join('')).toBe('goodbye world');
  });

  it('closes the pseudoconsole side on exit: the rest of an input is dropped, and close does not kill it again', async () => {
    const clock = new ManualClock();
    const { session, pty } = await openOnWindows(clock);
    const written = session.write('y'.repeat(120));
    for (let i = 0; i < 5 && pty.written.length === 0; i++) await turn();
    expect(pty.written).toEqual(['y'.repeat(50)]);
    pty.exit(0);
    await clock.advance(5);
    await clock.advance(5);
    await written;
    expect(pty.written).toEqual(['y'.repeat(50)]);
    await expect(session.write('z')).rejects.toMatchObject({ code: 'exited' });
    await clock.advance(25);
    expect(session.status).toBe('exited');
    expect((await session.close()).closed).toBe(true);
    expect(pty.kills).toBe(0);
  });
});
