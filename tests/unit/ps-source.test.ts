import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyWchan, parseTable, parseTtyLook, terminalIds, ttyLookArgs } from '../../src/main/pty/ps-source.js';
import { chooseEvidence } from '../../src/main/pty/ps-tier.js';
import type { TtyModes } from '../../src/main/pty/termios.js';
import { psEvidence } from '../../src/main/terminal/readiness/probe.js';

const fixture = (name: string) => readFileSync(join(__dirname, 'fixtures', 'ps', name), 'utf8');
const modes = (m: TtyModes) => async () => m;
const line: TtyModes = { echo: true, icanon: true, isig: true };
const raw: TtyModes = { echo: false, icanon: false, isig: true };
const password: TtyModes = { echo: false, icanon: true, isig: true };

describe('wait channels', () => {
  it('classes Linux kernel functions, old and new, and the BSD messages', () => {
    for (const name of ['n_tty_read', 'wait_woken', 'ttyin']) expect(classifyWchan(name)).toBe('read');
    for (const name of ['do_select', 'core_sys_select', 'do_sys_poll', 'poll_schedule_timeout.constprop.0', 'ep_poll', 'do_epoll_wait', 'select', 'kqread'])
      expect(classifyWchan(name)).toBe('poll');
    for (const name of ['hrtimer_nanosleep', 'do_wait', 'futex_do_wait', 'pipe_read', 'anon_pipe_read']) expect(classifyWchan(name)).toBe('other');
    // macOS prints "-" for every process (xnu fills no p_wchan): unknown, never a wait.
    expect(classifyWchan('-')).toBe('unknown');
  });

  it('asks procps for a wide wait channel, macOS for none', () => {
    expect(ttyLookArgs('procps', '/dev/pts/3')).toEqual(['-t', '/dev/pts/3', '-o', 'pid=,pid=,ppid=,pgid=,tpgid=,stat=,wchan:48=,comm=']);
    expect(ttyLookArgs('bsd', '/dev/ttys003')).toEqual(['-t', '/dev/ttys003', '-o', 'pid=,ppid=,pgid=,tpgid=,stat=,wchan=,comm=']);
  });
});

describe('Linux (procps) fixtures', () => {
  it('parses a look at python input() with a second reading thread', () => {
    const entries = parseTtyLook('procps', fixture('linux-look-input.txt'));
    expect(entries).toEqual([
      { pid: 19989, tid: 19989, ppid: 19942, pgid: 19989, tpgid: 19991, stat: 'Ss', wchan: 'do_wait', comm: 'bash' },
      { pid: 19991, tid: 19991, ppid: 19989, pgid: 19991, tpgid: 19991, stat: 'Sl+', wchan: 'n_tty_read', comm: 'python3' },
      { pid: 19991, tid: 19994, ppid: 19989, pgid: 19991, tpgid: 19991, stat: 'Sl+', wchan: 'wait_woken', comm: 'python3' },
    ]);
  });

  it('reads input() as `read` once quiet, and says when before', async () => {
    const entries = parseTtyLook('procps', fixture('linux-look-input.txt'));
    expect(await psEvidence(entries, 19989, 20, modes(line))).toEqual({ evidence: 'read', quietDueMs: null });
    expect(await psEvidence(entries, 19989, 5, modes(line))).toEqual({ evidence: null, quietDueMs: 10 });
  });

  it("takes the shell's own read (its group in front: its prompt, or its builtin read) only after a poll's quiet", async () => {
    // pwsh back at its prompt reads the terminal while its end marker may still be in the kernel's buffers (issue 22).
    const entries = [{ pid: 4100, tid: 4100, ppid: 4000, pgid: 4100, tpgid: 4100, stat: 'Ss+', wchan: 'n_tty_read', comm: 'pwsh' }];
    expect(await psEvidence(entries, 4100, 20, modes(line))).toEqual({ evidence: null, quietDueMs: 280 });
    expect(await psEvidence(entries, 4100, 299, modes(line))).toEqual({ evidence: null, quietDueMs: 1 });
    expect(await psEvidence(entries, 4100, 300, modes(line))).toEqual({ evidence: 'read', quietDueMs: null });
  });

  it('reads the python REPL (select, raw mode) as `poll`, but not in line mode', async () => {
    const entries = parseTtyLook('procps', fixture('linux-look-repl.txt'));
    expect((await psEvidence(entries, 19989, 400, modes(raw))).evidence).toBe('poll');
    // A silent download polls its socket with the terminal in line mode: no evidence.
    expect((await psEvidence(entries, 19989, 400, modes(line))).evidence).toBeNull();
    expect((await psEvidence(entries, 19989, 100, modes(raw))).evidence).toBeNull();
  });

  it('parses the table with sessions, terminals and start times', () => {
    expect(parseTable(fixture('linux-table.txt'))).toEqual([
      { pid: 19989, ppid: 19942, pgid: 19989, sess: 19989, stat: 'Ss+', tty: 'pts/9', lstart: 'Wed Dec 2 15:12:50 2026', comm: 'bash' },
      { pid: 20067, ppid: 1, pgid: 20067, sess: 20067, stat: 'Ss', tty: '?', lstart: 'Wed Dec 2 15:12:56 2026', comm: 'sleep' },
    ]);
  });

  it('finds the terminal id of a setsid daemon in the environment listing', () => {
    expect(terminalIds(fixture('linux-environ.txt'), 'TANDEM_TERMINAL_ID')).toEqual(new Map([[20067, 'fixture-terminal-1']]));
  });
});

describe('macOS fixtures (the format of adv_cmds ps; see fixtures/ps/README.md)', () => {
  it('parses a look without threads and with no wait channel', () => {
    expect(parseTtyLook('bsd', fixture('macos-look-read.txt'))).toEqual([
      { pid: 4311, tid: 4311, ppid: 4310, pgid: 4311, tpgid: 4402, stat: 'Ss', wchan: '-', comm: 'bash' },
      { pid: 4402, tid: 4402, ppid: 4311, pgid: 4402, tpgid: 4402, stat: 'S+', wchan: '-', comm: 'python3' },
    ]);
  });

  it('gives a sleeping job `poll` only with the terminal out of line mode', async () => {
    const read = parseTtyLook('bsd', fixture('macos-look-read.txt'));
    expect((await psEvidence(read, 4311, 400, modes(raw))).evidence).toBe('poll');
    // A line-mode read looks like `sleep` on macOS: no evidence (the README says so).
    expect((await psEvidence(read, 4311, 5000, modes(line))).evidence).toBeNull();
    expect(await psEvidence(read, 4311, 100, modes(raw))).toEqual({ evidence: null, quietDueMs: 200 });
  });

  it('counts I (asleep over 20 s) as asleep, every member of the group', async () => {
    const idle = parseTtyLook('bsd', fixture('macos-look-idle.txt'));
    expect((await psEvidence(idle, 4311, 400, modes(raw))).evidence).toBe('poll');
  });

  it('gives a running job nothing, and an unreadable one only echo_off', async () => {
    const running = parseTtyLook('bsd', fixture('macos-look-running.txt'));
    expect((await psEvidence(running, 4311, 5000, modes(raw))).evidence).toBeNull();
    expect((await psEvidence(running, 4311, 5000, modes(password))).evidence).toBeNull();
    const unreadable = parseTtyLook('bsd', fixture('macos-look-unreadable.txt'));
    expect((await psEvidence(unreadable, 4311, 5000, modes(raw))).evidence).toBeNull();
  });

  it('gives a password prompt (echo off, line mode) echo_off after its quiet period', async () => {
    const read = parseTtyLook('bsd', fixture('macos-look-read.txt'));
    expect((await psEvidence(read, 4311, 400, modes(password))).evidence).toBe('echo_off');
    expect((await psEvidence(read, 4311, 200, modes(password))).evidence).toBeNull();
  });

  it('parses the table: session 0 (unknown), ?? for no terminal, executable paths', () => {
    const table = parseTable(fixture('macos-table.txt'));
    expect(table.find((p) => p.pid === 4402)).toEqual({
      pid: 4402,
      ppid: 4311,
      pgid: 4402,
      sess: 0,
      stat: 'S+',
      tty: 'ttys003',
      lstart: 'Wed Dec 2 14:58:40 2026',
      comm: 'python3',
    });
    expect(table.find((p) => p.pid === 4420)).toMatchObject({ ppid: 1, tty: '??', comm: 'sleep' });
    expect(table).toHaveLength(5);
  });

  it('takes the environment variable, not the same text in the arguments', () => {
    expect(terminalIds(fixture('macos-environ.txt'), 'TANDEM_TERMINAL_ID')).toEqual(
      new Map([
        [4311, '3f9c2a7e41d0b85c6a1e0f42'],
        [4420, '3f9c2a7e41d0b85c6a1e0f42'],
        [4430, 'another-terminal'],
      ]),
    );
  });
});

describe('choosing the tier once', () => {
  const works = { procfs: () => true, ps: () => true };
  it('proc on Linux, ps on macOS, ps on Linux when asked, none when nothing works', () => {
    expect(chooseEvidence('linux', {}, works)).toBe('proc');
    expect(chooseEvidence('darwin', {}, works)).toBe('ps');
    expect(chooseEvidence('linux', { TANDEM_EVIDENCE: 'ps' }, works)).toBe('ps');
    expect(chooseEvidence('linux', { TANDEM_EVIDENCE: 'none' }, works)).toBe('none');
    expect(chooseEvidence('linux', {}, { procfs: () => false, ps: () => true })).toBe('ps');
    expect(chooseEvidence('darwin', {}, { procfs: () => false, ps: () => false })).toBe('none');
    expect(chooseEvidence('linux', { TANDEM_EVIDENCE: 'ps' }, { procfs: () => true, ps: () => false })).toBe('none');
    expect(chooseEvidence('win32', { TANDEM_EVIDENCE: 'ps' }, works)).toBe('none');
  });
});
