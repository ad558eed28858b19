/**
 * The sandbox's remount helper (resources/sandbox/remount.pl) enters a mount namespace with the
 * person's rights, or with root's where Tandem runs as root: it must never enter one that is not
 * the sandbox's (a pid reused by another process, or Tandem's own namespace), whatever pid it is
 * given. A real perl and the real /proc; the side effect checked is the host's own mount table.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { root } from '../support/capabilities.js';
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
    const r = run(process.arch, String(process.pid), own);
    expect(r.status).toBe(2);
    expect(r.stdout).toContain('no longer in the sandbox');
    expect(mounted()).toBe(false);
  });

  it('refuses a pid whose namespace is not the one it was told', () => {
    const r = run(process.arch, String(process.pid), '12345');
    expect(r.status).toBe(2);
    expect(mounted()).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('x\n');
  });

  // Tandem runs as the person, not root: the helper must get its rights from owning the
  // sandbox's outer user namespace. A real bubblewrap started by a user made for the test.
  it.runIf(root.present)('puts back a dropped mount as a user who is not root', () => {
    const user = `tandemg${process.pid}`;
    const env = { ...process.env, PATH: `/usr/sbin:/sbin:${process.env.PATH}` };
    expect(spawnSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', user], { env }).status).toBe(0);
    const work = mkdtempSync(join(tmpdir(), 'tandem-remount-user-'));
    chmodSync(work, 0o777);
    try {
      // The inside looks once the host renamed (go1: still read-only?) and once the helper ran
      // (go2: can it write?); the host renames config as git does, in between.
      const script = `set -eu
cd "$1"; mkdir -p ws/.git; echo person > ws/.git/config
bwrap --ro-bind / / --dev /dev --proc /proc --bind "$1/ws" "$1/ws" --ro-bind "$1/ws/.git/config" "$1/ws/.git/config" \\
  --unshare-user --disable-userns --cap-drop ALL --unshare-pid --unshare-net --die-with-parent --info-fd 3 --chdir "$1/ws" -- \\
  sh -c 'until [ -e go1 ]; do sleep 0.02; done; test -w .git/config && echo writable > look1 || echo readonly > look1
         until [ -e go2 ]; do sleep 0.02; done; echo agent >> .git/config 2>/dev/null && echo wrote > look2 || echo refused > look2' 3>info &
until grep -q child-pid info 2>/dev/null; do sleep 0.02; done
init=$(grep -o '"child-pid": *[0-9]*' info | grep -o '[0-9]*$')
ns=$(stat -L -c %i /proc/$init/ns/mnt)
echo person2 > ws/.git/config.lock && mv ws/.git/config.lock ws/.git/config
touch ws/go1; until [ -e ws/look1 ]; do sleep 0.02; done
printf 'self %s\\n\\n' "$(printf %s "$1/ws/.git/config" | od -An -tx1 | tr -d ' \\n')" | perl "$2" "$3" "$init" "$ns"
touch ws/go2; wait
cat ws/look1 ws/look2 ws/.git/config`;
      const r = spawnSync('runuser', ['-u', user, '--', 'bash', '-c', script, 'tandem-test', work, helper, process.arch], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      // Dropped by the rename (the inside could write), put back by the helper, then refused.
      expect(r.stdout.trim().split('\n'), r.stderr).toEqual(['ready', 'ok', 'done', 'writable', 'refused', 'person2']);
    } finally {
      spawnSync('userdel', [user], { env });
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('refuses malformed arguments', () => {
    for (const args of [[], [process.arch, 'x', '1'], [process.arch, String(process.pid)], ['vax', String(process.pid), '1']]) {
      const r = run(...args);
      expect(r.status, args.join(' ')).not.toBe(0);
    }
    expect(mounted()).toBe(false);
  });
});
