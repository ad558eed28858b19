import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { windowsPlatform } from '../../src/main/pty/platform.js';
import type { PtyProcess } from '../../src/main/pty/pump.js';
import { TerminalSession } from '../../src/main/terminal/session.js';
import { ManualClock } from '../support/manual-clock.js';

/**
 * The session's Windows behaviours. A fake PTY is unavoidable: no Windows machine (so no
 * ConPTY) runs here, and these tests pin what the session does with one. The fake only records
 * writes and kills and replays what a pseudoconsole would emit; nothing in it decides anything.
 */
class FakeConpty implements PtyProcess {
  readonly pid = 4_194_000;
  readonly ptsName = undefined;
  readonly written: string[] = [];
  kills = 0;
  private readonly dataListeners: Array<(data: string) => void> = [];
  private readonly exitListeners: Array<(exit: { exitCode: number; signal: number }) => void> = [];
  onData(listener: (data: string) => void): void {
    this.dataListeners.push(listener);
  }
  onExit(listener: (exit: { exitCode: number; signal: number }) => void): void {
    this.exitListeners.push(listener);
  }
  emit(data: string): void {
    for (const listener of this.dataListeners) listener(data);
  }
  exit(exitCode: number): void {
    for (const listener of [...this.exitListeners]) listener({ exitCode, signal: 0 });
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
  /** Output is handed over as it is emitted: nothing is ever in flight. */
  sync(): Promise<void> {
    return Promise.resolve();
  }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function openOnWindows(clock: ManualClock): Promise<{ session: TerminalSession; pty: FakeConpty }> {
  const pty = new FakeConpty();
  const started = TerminalSession.start({
    shell: { path: 'C:\\fake\\shell.exe', name: 'shell', dialect: null },
    cwd: tmpdir(),
    origin: 'user',
    clock,
    platform: windowsPlatform,
    spawn: async () => pty,
  });
  for (let i = 0; i < 5; i++) await turn();
  // A person's terminal opens on the pseudoconsole's first output.
  pty.emit('PS C:\\> ');
  const session = await started;
  await session.drained();
  return { session, pty };
}

/** Close waits out the exit drain on the manual clock. */
async function closeWith(session: TerminalSession, clock: ManualClock): Promise<void> {
  const closed = session.close();
  while (session.status !== 'exited') {
    await turn();
    await clock.advance(25);
  }
  expect((await closed).closed).toBe(true);
}

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
    await closeWith(session, clock);
  });

  it('interrupts with the \\x03 key, not a signal, and refuses other signals', async () => {
    const clock = new ManualClock();
    const { session, pty } = await openOnWindows(clock);
    await session.interrupt();
    expect(pty.written).toEqual(['\x03']);
    await expect(session.signal('SIGTERM')).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(pty.written).toEqual(['\x03']);
    await closeWith(session, clock);
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
