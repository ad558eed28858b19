/**
 * The ps evidence tier (src/main/pty/ps-source.ts), forced on this Linux machine as on macOS:
 * the key readiness cases, a signal to a running job and the teardown of a setsid daemon go
 * through ps and nothing else of the process tier. `TANDEM_EVIDENCE=ps npx vitest run
 * tests/integration/engine.test.ts ...` runs the whole engine suite on it as well.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

// Before any import of the platform: the tier is chosen once per process (ps-tier.ts).
vi.hoisted(() => {
  process.env.TANDEM_EVIDENCE = 'ps';
});

import { InstanceLock } from '../../src/main/host/instance.js';
import { hostPlatform } from '../../src/main/pty/platform.js';
import { findTerminalProcesses } from '../../src/main/pty/tree.js';
import { command, runs } from '../support/capabilities.js';
import { gate } from '../support/gate.js';
import { hasCommand, makeHome, SessionPool } from './helpers.js';
import { waitFor } from '../support/until.js';

const ps = runs('the ps evidence tier', command('ps', 'procps'));
const python = hasCommand('python3');

const home = makeHome();
const pool = new SessionPool(home.home);
afterAll(async () => {
  await pool.closeAll();
  home.cleanup();
});

/** Whether a process exists and is not a zombie, asked of ps (the tier under test reads no /proc either). */
function running(pid: number): boolean {
  try {
    return !/^Z/.test(execFileSync('ps', ['-p', String(pid), '-o', 'stat='], { encoding: 'utf8' }).trim());
  } catch {
    return false;
  }
}

describe.runIf(ps)('ps evidence tier (TANDEM_EVIDENCE=ps)', () => {
  it('is the host tier, and instance.json says so', () => {
    expect(hostPlatform.evidence).toBe('ps');
    expect(hostPlatform.procfs).toBe(false);
    const dir = mkdtempSync(join(tmpdir(), 'tandem-ps-instance-'));
    try {
      const lock = new InstanceLock({ ...process.env, TANDEM_HOME: dir });
      lock.acquire();
      lock.publish({ pid: process.pid, version: 'test', mcpUrl: 'http://127.0.0.1:1/mcp', pairUrl: 'http://127.0.0.1:1/pair' });
      expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toMatchObject({ evidence: 'ps' });
      lock.release();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('detects `read -p` in the shell itself (read evidence from the wait channel)', async () => {
    const t = await pool.open('bash');
    const r = await t.send({ text: 'read -p "Name: " name; echo "hi $name"' });
    expect(r).toMatchObject({ status: 'waiting_input', evidence: 'read' });
    expect(r.output).toContain('Name:');
    expect(await t.send({ text: 'Ada' })).toMatchObject({ status: 'done', exitCode: 0, output: 'hi Ada' });
  });

  it.runIf(python)('answers python input() asked twice in a loop', async () => {
    const t = await pool.open('bash');
    const r = await t.send({ text: `python3 -c 'for i in range(2): print("got", input(f"q{i}? "))'` });
    expect(r).toMatchObject({ status: 'waiting_input', evidence: 'read', output: 'q0?' });
    const a = await t.send({ text: 'one' });
    expect(a).toMatchObject({ status: 'waiting_input', evidence: 'read', output: 'got one\nq1?' });
    expect(await t.send({ text: 'two' })).toMatchObject({ status: 'done', exitCode: 0, output: 'got two' });
  });

  it.runIf(python)('detects a password prompt by its echo-off line mode', async () => {
    const t = await pool.open('bash');
    const r = await t.send({ text: `python3 -c 'import getpass; print("len", len(getpass.getpass("Password: ")))'` });
    // getpass reads /dev/tty in line mode: the wait channel gives `read` before echo_off's longer quiet period.
    expect(r.status).toBe('waiting_input');
    expect(['read', 'echo_off']).toContain(r.evidence);
    expect(r.output).toContain('Password:');
    expect(await t.send({ text: 'secret' })).toMatchObject({ status: 'done', output: 'len 6' });
  });

  it.runIf(python)('detects the python REPL (select on the terminal in raw mode) as poll, answer after answer', async () => {
    const t = await pool.open('bash');
    const r = await t.send({ text: 'python3 -q', waitMs: 15_000 });
    expect(r).toMatchObject({ status: 'waiting_input', evidence: 'poll' });
    const a = await t.send({ text: '6*7' });
    expect(a).toMatchObject({ status: 'waiting_input', evidence: 'poll' });
    expect(a.output).toContain('42');
    expect(await t.send({ text: 'exit()' })).toMatchObject({ status: 'done', exitCode: 0 });
  });

  it.runIf(python)('gives a line-mode select no evidence: ps cannot tell the terminal from a socket (the /proc tier can)', async () => {
    const t = await pool.open('bash');
    const r = await t.send({
      text: `python3 -c 'import select,sys; select.select([sys.stdin],[],[]); print("got", sys.stdin.readline().strip())'`,
      waitMs: 1500,
    });
    expect(r.status).toBe('running');
    // Typed input still reaches it; the answer ends it by its marker.
    expect(await t.send({ text: 'x', input: true, waitMs: 30_000 })).toMatchObject({ status: 'done', output: 'got x' });
  });

  it('sends a signal to the running job, not the shell', async () => {
    const t = await pool.open('bash');
    const g = gate();
    try {
      const r = await t.send({ text: `sh -c 'echo go-$((6*7)); until [ -e ${g.path} ]; do sleep 0.05; done'`, waitMs: 300 });
      expect(r.status).toBe('running');
      // The job runs (its go-42 is out), so the signal finds it in front, not the shell.
      await expect.poll(() => t.screen.text).toContain('go-42');
      const w = t.wait({ since: r.cursor, waitMs: 30_000 });
      await t.signal('SIGTERM');
      expect(await w).toMatchObject({ status: 'done', exitCode: 143 });
      expect(running(t.pid)).toBe(true);
    } finally {
      g.dispose();
    }
  });

  it('closes a setsid daemon that left the session, and nohup and background jobs', async () => {
    const t = await pool.open('bash');
    const nonce = String(Math.floor(Math.random() * 1e9));
    await t.send({ text: `sleep 2001.${nonce} & nohup sleep 2002.${nonce} >/dev/null 2>&1 & setsid sleep 2003.${nonce} & ( (sleep 2004.${nonce} &) & )` });
    // The four sleeps as ps shows them (setsid forks before the daemon's sleep exists): then the
    // terminal's processes must hold each of them. Only a process whose program is sleep counts:
    // `setsid sleep 2003.…` names the sleep too, and that setsid exits once it has forked (a CI
    // run took its pid for the daemon's and waited for it in vain).
    const sleepLine = new RegExp(`^\\s*\\d+\\s+sleep 200[1-4]\\.${nonce}$`);
    const sleeps = await waitFor(
      () =>
        execFileSync('ps', ['-A', '-o', 'pid=,args='], { encoding: 'utf8' })
          .split('\n')
          .filter((line) => sleepLine.test(line)),
      (lines) => [1, 2, 3, 4].every((n) => lines.some((line) => line.includes(`sleep 200${n}.${nonce}`))),
    );
    const pidOf = (n: number) =>
      Number(
        sleeps
          .find((line) => line.includes(`sleep 200${n}.${nonce}`))!
          .trim()
          .split(/\s+/)[0],
      );
    const daemonPid = pidOf(3);
    const before = await waitFor(
      () => findTerminalProcesses(t.pid, t.id),
      (pids) => [1, 2, 3, 4].every((n) => pids.includes(pidOf(n))),
    );
    expect(before).toContain(daemonPid);
    expect(await t.close()).toEqual({ closed: true, orphans: [] });
    for (const pid of before) expect(running(pid)).toBe(false);
  });
});
