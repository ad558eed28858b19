/**
 * terminal_signal where the foreground group is unknown (macOS without /proc, before or without
 * an answer from ps): the signal must not fall to the shell. The platform here is a tiny fake
 * (its foreground lookup answers null, as posixPlatform's does without /proc); the "shell" is
 * a real process, so a signal sent to it would end it.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import type { PtyPlatform } from '../../src/main/pty/platform.js';
import { deliverSignal } from '../../src/main/terminal/readiness/interrupt.js';
import { isAlive } from '../../src/main/pty/proc.js';

const children: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function shellStandIn(): number {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  children.push(child);
  return child.pid!;
}

const unknownForeground = (signalled: number[]): PtyPlatform =>
  ({
    os: 'darwin',
    processGroups: true,
    foregroundGroup: () => null,
    shellGroup: (pid: number) => pid,
    signalGroup: (pgid: number) => void signalled.push(pgid),
  }) as unknown as PtyPlatform;

describe('terminal_signal with the foreground group unknown', () => {
  it.each(['SIGTERM', 'SIGHUP', 'SIGKILL'] as const)('refuses %s instead of sending it to the shell', async (name) => {
    const pid = shellStandIn();
    const written: string[] = [];
    const signalled: number[] = [];
    await expect(deliverSignal({ pid, platform: unknownForeground(signalled), write: async (data) => void written.push(data) }, name)).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    expect(isAlive(pid)).toBe(true);
    expect(written).toEqual([]);
    expect(signalled).toEqual([]);
  });

  it.each([
    ['SIGQUIT', '\x1c'],
    ['SIGTSTP', '\x1a'],
  ] as const)('sends %s as its key, which the terminal gives the group in front', async (name, key) => {
    const pid = shellStandIn();
    const written: string[] = [];
    await deliverSignal({ pid, platform: unknownForeground([]), write: async (data) => void written.push(data) }, name);
    expect(written).toEqual([key]);
    expect(isAlive(pid)).toBe(true);
  });
});
