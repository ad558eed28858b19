/**
 * bash's prompt reads the history line and the redirect report's lists back from a scratch file
 * in its rc directory instead of a subshell (resources/shell/tandem.bash `__tandem_capture`):
 * a fork cost about 4 ms in front of every next command. These tests hold it to what the
 * subshell gave (the same reports and lines), to no fork at all at a prompt, and to its
 * fallback: a read-only confined terminal, a scratch that cannot be written or fills up, a FIFO
 * in its place, and an rc directory another user put back after it went are never written
 * through; the subshell takes over and the reports stay right. Also what the black-box rounds
 * found in the report itself (bash and zsh): signatures that collide, an entry too long for a
 * marker, an alias on the prompt function.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TerminalSession } from '../../src/main/terminal/session/session.js';
import { command, mountTmpfs, root, runs } from '../support/capabilities.js';
import { makeHome, SessionPool } from './helpers.js';
import { describeSandbox } from './sandbox-helpers.js';

const h = makeHome();
const pool = new SessionPool(h.home);
/** Clean startup files: Debian's bash-completion alone defines more functions than a report carries. */
const open = (extra: Parameters<SessionPool['open']>[1] = {}) => pool.open('bash', { startupFiles: 'clean', ...extra });
afterAll(async () => {
  await pool.closeAll();
  h.cleanup();
});

async function scratchOf(t: TerminalSession): Promise<string> {
  return (await t.send({ text: 'echo "$__tandem_scratch"' })).output;
}

/** Defines a function and an alias, runs a marked line, and checks both reach the report and the line its command. */
async function reportsStayRight(t: TerminalSession, tag: string): Promise<void> {
  expect((await t.send({ text: `fn_${tag}() { :; }; alias al_${tag}='ls -l'` })).status).toBe('done');
  expect((await t.send({ text: `echo line-${tag}` })).output).toBe(`line-${tag}`);
  // The report of the last command follows its end marker.
  const report = await t.freshRedirects(10_000);
  expect(report?.incomplete).toBe(false);
  expect(report?.functions.has(`fn_${tag}`)).toBe(true);
  expect(report?.aliases.get(`al_${tag}`)).toBe('ls -l');
  await expect.poll(() => t.commandsSince(0).map((c) => c.command)).toContain(`echo line-${tag}`);
}

describe('bash reads its prompt lists without a subshell', () => {
  it('keeps the reports and command lines right, and leaves the scratch file empty', async () => {
    const t = await open();
    const scratch = await scratchOf(t);
    expect(scratch).toMatch(/tandem-rc-[^/]+\/prompt$/);
    await reportsStayRight(t, 'a');
    // The last line is read back and the file emptied at once: no command line stays on disk.
    expect(readFileSync(scratch, 'utf8')).toBe('');
    expect(lstatSync(join(scratch, '..')).mode & 0o777).toBe(0o700);
  });

  it('a line with every awkward character comes back whole', async () => {
    const t = await open();
    const line = `printf '%s\\n' 'a;b%c' "tab\there" \\\\x1f '\x1f' done`;
    expect((await t.send({ text: line })).status).toBe('done');
    await expect.poll(() => t.commandsSince(0).at(-1)?.command).toBe(line);
  });

  it('takes the subshell where the scratch cannot be written', async () => {
    const t = await open();
    const scratch = await scratchOf(t);
    rmSync(scratch);
    mkdirSync(scratch);
    await reportsStayRight(t, 'b');
  });
});

describe('what the integration needs, taken away', () => {
  it('without `history` the lists still come; without `compgen` the report says it is incomplete', async () => {
    const t = await open();
    expect((await t.send({ text: 'enable -n history; fn_h() { :; }' })).status).toBe('done');
    const report = await t.freshRedirects(10_000);
    expect(report?.incomplete).toBe(false);
    expect(report?.functions.has('fn_h')).toBe(true);
    expect((await t.send({ text: 'enable -n compgen; fn_c() { :; }' })).status).toBe('done');
    expect((await t.freshRedirects(10_000))?.incomplete).toBe(true);
  });

  it('a file size limit of 0 does not end the shell (SIGXFSZ), and the reports stay right', async () => {
    const t = await open();
    expect((await t.send({ text: 'ulimit -f 0' })).status).toBe('done');
    await reportsStayRight(t, 'u');
    // Programs it starts still get the signal's default (a caught signal is not handed down).
    expect((await t.send({ text: "bash -c 'trap -p XFSZ; echo child'" })).output).toBe('child');
  });
});

/** The report a judge reads after `line` ran (it follows the line's end marker). */
async function reportAfter(t: TerminalSession, line: string) {
  expect((await t.send({ text: line })).status).toBe('done');
  return t.freshRedirects(10_000);
}

describe.each(['bash', 'zsh'] as const)('%s: a report the judge can rely on (black-box round)', (shell) => {
  const openShell = () => pool.open(shell, { startupFiles: 'clean' });

  it('two alias tables that join to the same text are told apart', async () => {
    const t = await openShell();
    expect((await reportAfter(t, "alias zz='q touch CANARY;' ls=ls"))?.aliases.get('ls')).toBe('ls');
    expect((await reportAfter(t, "alias zz=q ls='touch CANARY; ls'"))?.aliases.get('ls')).toBe('touch CANARY; ls');
  });

  it('an alias too long for a marker makes the report incomplete, and stays so on the next prompt', async () => {
    const t = await openShell();
    expect((await reportAfter(t, 'alias ls=ls'))?.incomplete).toBe(false);
    const long = await reportAfter(t, `alias ls='touch CANARY; ls' zz='${'A'.repeat(20_000)}'`);
    expect(long?.incomplete).toBe(true);
    const next = await reportAfter(t, 'echo hi');
    expect(next?.incomplete).toBe(true);
    expect(next?.aliases.get('ls')).not.toBe('ls');
  });
});

describe('bash: prompt commands', () => {
  it('an alias named like the integration’s prompt function is not what runs at the prompt', async () => {
    const t = await open();
    await reportAfter(t, "alias __tandem_precmd='__tandem_precmd; hash -p /bin/echo ls'");
    await reportAfter(t, ':');
    expect((await t.send({ text: 'hash -t ls 2>&1 || true' })).output).not.toBe('/bin/echo');
    expect((await t.freshRedirects(10_000))?.hashed.get('ls')).toBeUndefined();
  });
});

describe.runIf(runs('another owner in the scratch directory', root))('an rc directory that is not this user’s own', () => {
  it('is never written through, and the subshell keeps the reports right', async () => {
    const t = await open();
    const scratch = await scratchOf(t);
    const dir = join(scratch, '..');
    const victims = mkdtempSync(join(tmpdir(), 'tandem-victim-'));
    const victim = join(victims, 'prompt');
    writeFileSync(victim, 'keep');
    try {
      // Gone (a temp cleaner), then made again by another user, its scratch a link to our file.
      rmSync(dir, { recursive: true });
      mkdirSync(dir, { mode: 0o777 });
      symlinkSync(victim, scratch);
      chownSync(dir, 65534, 65534);
      await reportsStayRight(t, 'c');
      expect(readFileSync(victim, 'utf8')).toBe('keep');
      // Or a link to a directory of ours that holds a file of that name.
      rmSync(dir, { recursive: true });
      symlinkSync(victims, dir);
      await reportsStayRight(t, 'd');
      expect(readFileSync(victim, 'utf8')).toBe('keep');
    } finally {
      rmSync(victims, { recursive: true, force: true });
    }
  });

  it('made by another user before the integration ran (slow startup files): its first write goes nowhere', async () => {
    const victims = mkdtempSync(join(tmpdir(), 'tandem-victim-'));
    const victim = join(victims, 'target');
    writeFileSync(victim, 'keep');
    // The person's startup files stand in for the other user: the rc directory goes and comes back theirs.
    const home = makeHome({
      '.bashrc': `d=\${__tandem_scratch%/*}; rm -rf "$d"; mkdir -m 777 "$d"; ln -s ${victim} "$d/prompt"; chown -h 65534:65534 "$d" "$d/prompt"\n`,
    });
    const own = new SessionPool(home.home);
    try {
      const t = await own.open('bash', { startupFiles: 'user' });
      expect(await scratchOf(t)).toBe('');
      await reportsStayRight(t, 's');
      expect(readFileSync(victim, 'utf8')).toBe('keep');
    } finally {
      await own.closeAll();
      home.cleanup();
      rmSync(victims, { recursive: true, force: true });
    }
  });

  it('is not given up by the host while the shell runs: an integration that timed out keeps the directory', async () => {
    const home = makeHome({ '.bashrc': 'echo slow startup; sleep 1\n' });
    const own = new SessionPool(home.home);
    try {
      const t = await own.open('bash', { origin: 'user', startupFiles: 'user', startupTimeoutMs: 200 });
      const rcFile = readFileSync(`/proc/${t.pid}/cmdline`, 'utf8').split('\0')[2]!;
      const dir = join(rcFile, '..');
      // Past the timeout (the first output came, then 200 ms), while the startup files still sleep.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(lstatSync(dir).isDirectory()).toBe(true);
      expect(lstatSync(dir).mode & 0o777).toBe(0o700);
      expect(existsSync(rcFile)).toBe(false);
    } finally {
      await own.closeAll();
      home.cleanup();
    }
  });
});

describe.runIf(runs('a scratch file that fills up', mountTmpfs))('a full scratch directory', () => {
  it('is not read short (compgen reports no write error): the subshell lists every function', async () => {
    const t = await open();
    const dir = join(await scratchOf(t), '..');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4k,mode=0700', 'tmpfs', dir]);
    try {
      // About 5 KB of function names, the last of them (compgen sorts) past the 4 KiB page.
      const names = Array.from({ length: 100 }, (_, i) => `fn_${String(i).padStart(3, '0')}_${'x'.repeat(40)}`);
      for (let i = 0; i < names.length; i += 25) {
        const text = names
          .slice(i, i + 25)
          .map((name) => `${name}() { :; }`)
          .join('; ');
        expect((await t.send({ text })).status).toBe('done');
      }
      expect((await t.send({ text: 'zz_last() { :; }' })).status).toBe('done');
      const report = await t.freshRedirects(10_000);
      expect(report?.incomplete).toBe(false);
      expect(report?.functions.has('zz_last')).toBe(true);
      expect(report?.functions.size).toBe(names.length + 1);
    } finally {
      execFileSync('umount', ['-l', dir]);
    }
  });
});

const strace = command('strace', 'apt install strace');

/** Clone and fork calls the shell itself makes while `work` runs (strace attached to it, no -f). */
async function forksDuring(pid: number, work: () => Promise<void>): Promise<number> {
  const out = join(mkdtempSync(join(tmpdir(), 'tandem-strace-')), 'trace');
  const tracer = spawn(strace.path!, ['-e', 'trace=clone,clone3,fork,vfork', '-p', String(pid), '-o', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  await new Promise<void>((resolve, reject) => {
    tracer.stderr.on('data', (data: Buffer) => {
      err += data.toString();
      if (/attached/.test(err)) resolve();
    });
    tracer.on('exit', () => reject(new Error(`strace ended: ${err}`)));
  });
  await work();
  const ended = new Promise((resolve) => tracer.on('exit', resolve));
  tracer.kill('SIGINT');
  await ended;
  const lines = existsSync(out) ? readFileSync(out, 'utf8').split('\n') : [];
  rmSync(join(out, '..'), { recursive: true, force: true });
  return lines.filter((line) => /^(clone|clone3|fork|vfork)\(/.test(line)).length;
}

describe.runIf(runs('counting the shell’s forks', strace, root))('forks at a prompt', () => {
  const threeBuiltins = async (t: TerminalSession) => {
    for (let i = 0; i < 3; i++) expect((await t.send({ text: ':' })).status).toBe('done');
  };

  it('none with the scratch file, one per prompt with the subshell', async () => {
    const t = await open();
    const pid = Number((await t.send({ text: 'echo $$' })).output);
    expect(await forksDuring(pid, () => threeBuiltins(t))).toBe(0);
    const scratch = await scratchOf(t);
    rmSync(scratch);
    mkdirSync(scratch);
    // (The last prompt's fork can fall after strace lets go.)
    expect(await forksDuring(pid, () => threeBuiltins(t))).toBeGreaterThanOrEqual(2);
  });
});

describeSandbox('a confined bash', () => {
  const confined = async (mode: 'workspace-write' | 'read-only', run: (t: TerminalSession) => Promise<void>) => {
    const state = mkdtempSync(join(tmpdir(), 'tandem-capture-state-'));
    try {
      const t = await open({ sandbox: { mode, network: false, agent: `capture-${mode}`, stateDir: state, discoveryDir: join(state, 'discovery') } });
      await run(t);
      await t.close();
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  };

  it('writes its scratch in its own /tmp (workspace-write), and the reports stay right', async () => {
    await confined('workspace-write', async (t) => {
      expect(await scratchOf(t)).toBe('/tmp/.tandem-prompt/prompt');
      await reportsStayRight(t, 'e');
      expect((await t.send({ text: 'stat -c %a /tmp/.tandem-prompt; wc -c < /tmp/.tandem-prompt/prompt' })).output).toBe('700\n0');
    });
  });

  it('takes the subshell where nothing can be written (read-only), and the reports stay right', async () => {
    await confined('read-only', async (t) => {
      expect(await scratchOf(t)).toBe('');
      await reportsStayRight(t, 'f');
    });
  });

  it('a FIFO the agent plants in its place does not hang the prompt', async () => {
    await confined('workspace-write', async (t) => {
      expect((await t.send({ text: 'rm /tmp/.tandem-prompt/prompt && mkfifo /tmp/.tandem-prompt/prompt' })).status).toBe('done');
      await reportsStayRight(t, 'g');
    });
  });
});
