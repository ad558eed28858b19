/**
 * The sandbox's remount helper (resources/sandbox/remount.pl) enters a mount namespace with the
 * person's rights, or with root's where Tandem runs as root: it must never enter one that is not
 * the sandbox's (a pid reused by another process, or Tandem's own namespace), whatever pid it is
 * given. A real perl and the real /proc; the side effect checked is the host's own mount table.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeSandbox } from './sandbox-helpers.js';

const helper = resolve('resources/sandbox/remount.pl');

describeSandbox('the remount helper', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-remount-'));
  const file = join(dir, 'config');
  writeFileSync(file, 'x\n');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args: string[]) => spawnSync('perl', [helper, ...args], { encoding: 'utf8' });
  const mounted = () =>
    readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .some((line) => line.split(' ')[4] === file);

  it("refuses this process's own namespace, even given its true inode", () => {
    const own = String(statSync(`/proc/${process.pid}/ns/mnt`).ino);
    const r = run(String(process.pid), own, 'self', file);
    expect(r.status).toBe(2);
    expect(r.stdout).toContain('no longer in the sandbox');
    expect(mounted()).toBe(false);
  });

  it('refuses a pid whose namespace is not the one it was told', () => {
    const r = run(String(process.pid), '12345', 'null', file);
    expect(r.status).toBe(2);
    expect(mounted()).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('x\n');
  });

  it('refuses malformed arguments', () => {
    for (const args of [[], ['x', '1', 'self', file], [String(process.pid), '1', 'self']]) {
      const r = run(...args);
      expect(r.status, args.join(' ')).not.toBe(0);
    }
    expect(mounted()).toBe(false);
  });
});
