/**
 * The terminal's modes read by tcgetattr in the kept reader process (pty/termios.ts) are the
 * modes `stty -a` reports for the same real PTY: cooked, raw, and a password prompt's echo off.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import * as pty from 'node-pty';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeTtyModeReader, parseSttyModes, readTtyModes, readTtyModesTcgetattr, setTtyModeSource, type TtyModes } from '../../src/main/pty/termios';
import { command, runs, unixPty } from '../support/capabilities';
import { until } from '../support/until.js';

const stty = command('stty', 'coreutils (Linux) or the base system (macOS)');
const perl = command('perl', 'perl-base (Debian), /usr/bin/perl (macOS)');
const suite = runs('tcgetattr reader against stty -a', unixPty, stty, perl);

const terms: pty.IPty[] = [];

afterEach(() => {
  for (const t of terms.splice(0)) {
    try {
      t.kill('SIGKILL');
    } catch {
      // already exited
    }
  }
  setTtyModeSource('reader');
});
afterAll(() => closeTtyModeReader());

/** A real PTY whose program sets the modes with stty, says so, and then sleeps on. */
async function terminalWith(sttyArgs: string): Promise<string> {
  const p = pty.spawn('sh', ['-c', `stty ${sttyArgs} && echo modes-set && exec sleep 60`], {
    cols: 80,
    rows: 24,
    cwd: process.cwd(),
    env: process.env as Record<string, string>,
  });
  terms.push(p);
  let out = '';
  p.onData((data) => (out += data));
  await until(() => out.includes('modes-set'), 'the program to set its modes');
  return (p as unknown as { ptsName: string }).ptsName;
}

function sttyModes(tty: string): TtyModes | null {
  return parseSttyModes(execFileSync('stty', ['-a', process.platform === 'linux' ? '-F' : '-f', tty], { encoding: 'utf8' }));
}

describe.skipIf(!suite)('tty modes through tcgetattr', () => {
  const cases: Array<[string, string, TtyModes]> = [
    ['cooked', 'sane', { echo: true, icanon: true, isig: true }],
    ['raw', 'raw -echo', { echo: false, icanon: false, isig: false }],
    ['a password prompt (echo off, line mode)', 'sane -echo', { echo: false, icanon: true, isig: true }],
  ];
  for (const [name, args, expected] of cases) {
    it(`match stty -a for a ${name} terminal`, async () => {
      const tty = await terminalWith(args);
      const viaReader = await readTtyModesTcgetattr(tty);
      expect(viaReader).toEqual(expected);
      expect(viaReader).toEqual(sttyModes(tty));
      // The platform's reading (what an interrupt asks) comes from the reader too, and one stty run agrees.
      expect(await readTtyModes(tty)).toEqual(expected);
      setTtyModeSource('stty');
      expect(await readTtyModes(tty)).toEqual(expected);
    });
  }

  it('answers null for a file that is not a terminal, and for a missing path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-termios-'));
    try {
      const file = join(dir, 'not-a-tty');
      writeFileSync(file, 'x');
      expect(await readTtyModesTcgetattr(file)).toBeNull();
      expect(await readTtyModesTcgetattr(join(dir, 'missing'))).toBeNull();
      expect(await readTtyModes(join(dir, 'missing'))).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts the reader again after it was closed, and answers questions asked together in order', async () => {
    const cooked = await terminalWith('sane');
    const raw = await terminalWith('raw -echo');
    closeTtyModeReader();
    const answers = await Promise.all([readTtyModesTcgetattr(raw), readTtyModesTcgetattr(cooked), readTtyModesTcgetattr(raw)]);
    expect(answers.map((m) => m?.isig)).toEqual([false, true, false]);
  });

  it('falls back to one stty per reading where perl cannot be started', async () => {
    const raw = await terminalWith('raw -echo');
    // A PATH with stty and no perl, in a process of its own (the reader's state is per process).
    const bin = mkdtempSync(join(tmpdir(), 'tandem-noperl-'));
    try {
      symlinkSync(stty.path!, join(bin, 'stty'));
      const module = resolve(__dirname, '../../src/main/pty/termios.ts');
      const script = `const m = await import(${JSON.stringify(module)}); console.log(JSON.stringify([await m.readTtyModesTcgetattr(${JSON.stringify(raw)}) ?? 'none', await m.readTtyModes(${JSON.stringify(raw)})]));`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: resolve(__dirname, '../..'),
        env: { ...process.env, PATH: bin },
      });
      expect(JSON.parse(stdout.trim())).toEqual(['none', { echo: false, icanon: false, isig: false }]);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
