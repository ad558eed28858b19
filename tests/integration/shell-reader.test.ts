/**
 * Which reader of the terminal is a shell (probe.ts gives a shell's own read the longer quiet,
 * since its end marker may still be in the kernel's pty buffers): real processes, by their
 * names, and pwsh as the dotnet global tool runs it (`dotnet …/pwsh.dll`, a child of the
 * `pwsh` shim), which reads the terminal under the name `dotnet`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { childrenOf, isShellName, isShellProcess, readStat, readText } from '../../src/main/pty/proc.js';
import { procfs, runs } from '../support/capabilities.js';
import { until } from '../support/until.js';
import { findPwsh, pwshRequired } from './pwsh-helpers.js';

const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) child.kill('SIGKILL');
});

function start(command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { stdio: 'ignore' });
  started.push(child);
  return child;
}

describe.runIf(runs('shell readers by their /proc entries', procfs))('shell readers (/proc)', () => {
  it('knows shells by name, login shells included, and nothing else', () => {
    expect(['bash', '-bash', 'zsh', '-zsh', 'pwsh', 'sh', 'dash'].every(isShellName)).toBe(true);
    expect(['python3', 'cat', 'node', 'dotnet', 'bashful', undefined].some(isShellName)).toBe(false);
  });

  it('tells a running bash from a sleep', async () => {
    const bash = start('bash', ['-c', 'sleep 30; :']);
    const sleep = start('sleep', ['30']);
    // bash's child is a bash until it has exec'd sleep (a loaded machine shows that moment): wait for the exec.
    const execd = (pid: number | undefined) => pid !== undefined && readStat(pid)?.comm === 'sleep';
    await until(() => execd(childrenOf(bash.pid!)[0]) && execd(sleep.pid), 'bash running its sleep');
    expect(isShellProcess(bash.pid!)).toBe(true);
    expect(isShellProcess(sleep.pid!)).toBe(false);
    expect(isShellProcess(childrenOf(bash.pid!)[0]!)).toBe(false);
  });

  const pwsh = findPwsh();
  it.runIf(pwsh !== null || pwshRequired)("takes pwsh's dotnet process for a shell", async () => {
    expect(pwsh, 'pwsh is required here (TANDEM_REQUIRE_PWSH=1) but not installed').not.toBeNull();
    const shim = start(pwsh!, ['-NoProfile', '-Command', 'Start-Sleep 30']);
    // The dotnet tool's shim starts dotnet as its child (that child reads the terminal); a pwsh
    // installed as an apphost is one process.
    // Wait for its exec to finish: the kernel names the process `dotnet` a moment before it sets
    // up the new argv, and in that moment (seen on a loaded CI machine) its cmdline reads empty.
    if (pwsh!.includes('/.dotnet/tools/')) {
      const execd = (pid: number) => readStat(pid)?.comm === 'dotnet' && (readText(`/proc/${pid}/cmdline`) ?? '') !== '';
      await until(() => childrenOf(shim.pid!).some(execd), 'the dotnet child of the pwsh shim');
    }
    const processes = [shim.pid!, ...childrenOf(shim.pid!)];
    for (const pid of processes) expect(isShellProcess(pid), `pid ${pid} (${readStat(pid)?.comm})`).toBe(true);
  });
});
