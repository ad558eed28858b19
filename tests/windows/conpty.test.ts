/**
 * Windows only (the CI workflow runs it on windows-latest): pwsh, Windows PowerShell 5.1 and
 * cmd in real ConPTY pseudoconsoles through the engine, markers and exit codes, Ctrl+C against
 * `ping -t` and `Start-Sleep`, and teardown that leaves no process behind, counting the conhost
 * and OpenConsole processes this process hosts before and after.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { listProcesses, treeOf } from '../../src/main/pty/win-tree.js';
import { which } from '../../src/main/shells/resolve.js';
import { makeHome, SessionPool } from '../integration/helpers.js';

const onWindows = process.platform === 'win32';
if (!onWindows) console.warn(`Windows ConPTY suite skipped: it needs Windows (this is ${process.platform}); the CI workflow runs it on windows-latest.`);

const pwsh = onWindows ? (which('pwsh') ?? which('powershell')) : null;

/** conhost.exe and OpenConsole.exe processes whose parent is this test process. */
async function consoleHosts(): Promise<number[]> {
  return (await listProcesses()).filter((row) => row.ppid === process.pid && /^(conhost|openconsole)\.exe$/i.test(row.name)).map((row) => row.pid);
}

async function settle<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!ok(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    value = await read();
  }
  return value;
}

describe.runIf(onWindows)('Windows ConPTY', { timeout: 120_000 }, () => {
  const home = makeHome();
  const pool = new SessionPool(home.home);
  const baseEnv = { ...process.env, USERPROFILE: home.home, HOME: home.home };
  const open = (shell: string) => pool.open(shell, { baseEnv, startupTimeoutMs: 60_000 });

  afterAll(async () => {
    await pool.closeAll();
    home.cleanup();
  });

  it('pwsh: verified end markers with exit codes', async () => {
    const t = await open(pwsh!);
    expect(await t.send({ text: 'Write-Output tandem-ok' })).toMatchObject({ status: 'done', output: 'tandem-ok', exitCode: 0 });
    expect(await t.send({ text: 'cmd /c exit 3' })).toMatchObject({ status: 'done', exitCode: 3 });
  });

  it('Windows PowerShell 5.1 (powershell.exe, there when pwsh is not): verified end markers with exit codes', async () => {
    const t = await open('powershell');
    expect(t.shell.name).toBe('powershell');
    expect(t.pid).toBeGreaterThan(4);
    expect(await t.send({ text: '$PSVersionTable.PSVersion.Major' })).toMatchObject({ status: 'done', output: '5', exitCode: 0 });
    expect(await t.send({ text: 'cmd /c exit 3' })).toMatchObject({ status: 'done', exitCode: 3 });
    expect(await t.send({ text: 'Write-Output ([char]0x00e9)' })).toMatchObject({ status: 'done', output: 'é', exitCode: 0 });
  });

  it('cmd: verified end markers, without exit codes', async () => {
    const t = await open('cmd');
    expect(await t.send({ text: 'echo tandem-ok' })).toMatchObject({ status: 'done', output: 'tandem-ok', exitCode: null });
  });

  it('Ctrl+C stops `ping -t` in cmd and Start-Sleep in pwsh', async () => {
    const c = await open('cmd');
    const ping = await c.send({ text: 'ping -t 127.0.0.1', waitMs: 1500 });
    expect(ping.status).toBe('running');
    const pingDone = c.wait({ since: ping.cursor, waitMs: 20_000 });
    await c.interrupt();
    expect((await pingDone).status).toBe('done');

    const p = await open(pwsh!);
    const sleep = await p.send({ text: 'Start-Sleep 100', waitMs: 500 });
    expect(sleep.status).toBe('running');
    const sleepDone = p.wait({ since: sleep.cursor, waitMs: 20_000 });
    await p.interrupt();
    expect((await sleepDone).status).toBe('done');
    expect(await p.send({ text: 'Write-Output calm' })).toMatchObject({ status: 'done', output: 'calm' });
  });

  it('close kills what the shell started and reports nothing left', async () => {
    const t = await open('cmd');
    await t.send({ text: 'start /b ping -t 127.0.0.1 >NUL', waitMs: 3000 });
    const before = await settle(
      async () => treeOf(await listProcesses(), t.pid),
      (tree) => tree.some((row) => /^ping\.exe$/i.test(row.name)),
      10_000,
    );
    const ping = before.find((row) => /^ping\.exe$/i.test(row.name));
    expect(ping, 'ping started in the background').toBeDefined();
    expect(await t.close()).toEqual({ closed: true, orphans: [] });
    const still = (await listProcesses()).some((row) => row.pid === ping!.pid && row.created === ping!.created);
    expect(still).toBe(false);
  });

  it('leaves no conhost or OpenConsole behind, whether shells exit by themselves or are closed', async () => {
    await pool.closeAll();
    const baseline = (await settle(consoleHosts, () => true, 0)).length;
    const exiting = [await open('cmd'), await open(pwsh!)];
    const closing = [await open('cmd'), await open(pwsh!)];
    expect((await consoleHosts()).length).toBeGreaterThanOrEqual(baseline);
    for (const t of exiting) {
      const r = await t.send({ text: 'exit', waitMs: 10_000 });
      expect(r.status).toBe('exited');
    }
    await Promise.all(closing.map((t) => t.close()));
    const after = await settle(consoleHosts, (pids) => pids.length <= baseline, 15_000);
    expect(after.length).toBe(baseline);
  });
});
