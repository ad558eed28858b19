/**
 * The workspace swapped for a link between Tandem's check and bubblewrap's mount (issue 24,
 * found black-box: an agent's other terminal watched the folder with inotify and swapped it for
 * a link to the person's home as the open touched it; the new terminal got the whole home,
 * writable). The swap is made here at the worst moment, after the check and before the launch:
 * real bubblewrap in a real PTY must then run nothing, and no file of the home is read or written.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import * as pty from 'node-pty';
import { afterAll, expect, it } from 'vitest';
import { Confinement } from '../../src/main/sandbox/launch.js';
import { bwrapBindsFds } from '../../src/main/sandbox/bwrap.js';
import { describeSandbox } from './sandbox-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'tandem-race-'));
const otherRoots: string[] = [];
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  for (const dir of otherRoots) rmSync(dir, { recursive: true, force: true });
});

/** Runs the confined launch in a PTY; resolves with its output and exit code. */
function run(launch: { file: string; args: string[]; env: Record<string, string> }, cwd: string): Promise<{ output: string; exitCode: number }> {
  return new Promise((resolve) => {
    const p = pty.spawn(launch.file, launch.args, { cwd, env: launch.env, cols: 120, rows: 30 });
    let output = '';
    p.onData((data) => (output += data));
    p.onExit(({ exitCode }) => resolve({ output, exitCode }));
  });
}

function confine(name: string, workspace: string, home: string): Confinement {
  const stateDir = join(root, name, 'state');
  const rcDir = join(root, name, 'rc');
  mkdirSync(rcDir, { recursive: true });
  return new Confinement({
    mode: 'workspace-write',
    network: false,
    agent: 'racer',
    stateDir,
    discoveryDir: join(stateDir, 'run'),
    terminalId: name,
    workspace,
    shellName: 'sh',
    rcDir,
    home,
    env: { PATH: '/usr/bin:/bin' },
  });
}

describeSandbox('the workspace swapped for a link after the check', () => {
  it.runIf(bwrapBindsFds() || process.env.TANDEM_REQUIRE_SANDBOX === '1')('runs nothing, and nothing of the home is read or written', async () => {
    expect(bwrapBindsFds(), 'bubblewrap here binds descriptors (0.7 and later)').toBe(true);
    const home = join(root, 'home');
    mkdirSync(home);
    writeFileSync(join(home, 'secret.txt'), 'THE-SECRET\n');
    const command = ['-c', 'cat secret.txt 2>/dev/null; echo inside > wrote.txt; echo ran'];

    // The control: the same launch without the swap runs, in the workspace.
    const plainWs = join(root, 'plain');
    mkdirSync(plainWs);
    const plain = confine('plain', plainWs, home);
    const ok = await run(plain.wrap('/bin/sh', command, { PATH: '/usr/bin:/bin' }), plainWs);
    plain.dispose();
    expect(ok.output).toContain('ran');
    expect(readFileSync(join(plainWs, 'wrote.txt'), 'utf8')).toBe('inside\n');

    const ws = join(root, 'ws');
    mkdirSync(ws);
    const c = confine('raced', ws, home);
    // The attacker's swap, after the check, before bubblewrap mounts.
    renameSync(ws, `${ws}.real`);
    symlinkSync(home, ws);
    const raced = await run(c.wrap('/bin/sh', command, { PATH: '/usr/bin:/bin' }), root);
    c.dispose();
    expect(raced.output).not.toContain('THE-SECRET');
    expect(raced.output).not.toContain('ran');
    expect(raced.exitCode).not.toBe(0);
    expect(existsSync(join(home, 'wrote.txt'))).toBe(false);
  });
});

describeSandbox('a git directory inside the workspace swapped for a link after the check', () => {
  // An agent's other terminal can write in the workspace: a repository made there after that
  // terminal opened has no anchor in it, so its `.git` can be swapped as the next open checks it.
  it.runIf(bwrapBindsFds() || process.env.TANDEM_REQUIRE_SANDBOX === '1')("runs nothing, and the person's other repository is not written", async () => {
    expect(bwrapBindsFds(), 'bubblewrap here binds descriptors (0.7 and later)').toBe(true);
    const home = join(root, 'home-git');
    mkdirSync(home);
    // A repository of the person's outside their home and /tmp (a /srv or /work checkout): the
    // same path exists inside the sandbox (read-only), so a bind through the link lands on it.
    const other = mkdtempSync('/var/tmp/tandem-race-other-');
    otherRoots.push(other);
    execFileSync('git', ['init', '-q', other]);
    writeFileSync(join(other, '.git', 'secret.txt'), 'THE-SECRET\n');
    const ws = join(root, 'ws-git');
    mkdirSync(ws);
    execFileSync('git', ['init', '-q', join(ws, 'sub')]);
    const command = ['-c', 'cat sub/.git/secret.txt 2>/dev/null; echo inside > sub/.git/wrote.txt; echo ran'];
    const c = confine('raced-git', ws, home);
    // The entries the check protects, also in the other repository (as Tandem leaves them in
    // any repository a confined terminal opened in), so each bind would find its source.
    for (const name of readdirSync(join(ws, 'sub', '.git'))) {
      const target = join(other, '.git', name);
      if (!existsSync(target)) writeFileSync(target, '');
    }
    // The swap, after the check, before bubblewrap mounts: the person's other repository's .git,
    // which has every entry the check protects, so each bind finds its source.
    renameSync(join(ws, 'sub', '.git'), join(ws, 'sub', '.git-real'));
    // Relative: bubblewrap resolves the destination under its new root, where an absolute
    // target would miss; this one leads to the same place on both sides.
    symlinkSync(relative(join(ws, 'sub'), join(other, '.git')), join(ws, 'sub', '.git'));
    const raced = await run(c.wrap('/bin/sh', command, { PATH: '/usr/bin:/bin' }), ws);
    c.dispose();
    expect(raced.output).not.toContain('THE-SECRET');
    expect(raced.output).not.toContain('ran');
    expect(raced.exitCode).not.toBe(0);
    expect(existsSync(join(other, '.git', 'wrote.txt'))).toBe(false);
  });
});

describeSandbox('an open that fails after its checks', () => {
  // An agent can make every confined open fail late (a folder of its home it locked, say): each
  // failure used to keep the held descriptors, the run directory and the commondir files.
  it('keeps no descriptor, run directory or commondir file', () => {
    const ws = join(root, 'ws-fail');
    mkdirSync(ws);
    execFileSync('git', ['init', '-q', ws]);
    const home = join(root, 'home-fail');
    mkdirSync(home);
    // The run directory's place is taken by a file: the open fails after the checks and the holds.
    const runs = join(root, 'failing', 'state', 'sandbox', 'run');
    mkdirSync(runs, { recursive: true });
    writeFileSync(join(runs, 'failing'), '');
    const intoWorkspace = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(ws);
        } catch {
          return false;
        }
      });
    expect(() => confine('failing', ws, home)).toThrow();
    expect(intoWorkspace()).toEqual([]);
    expect(existsSync(join(ws, '.git', 'commondir'))).toBe(false);
    expect(readdirSync(runs)).toEqual([]);
  });
});

describeSandbox('the folders that hold a protected .git', () => {
  // Renaming such a folder while another terminal opens and leaving a link in its place made that
  // terminal's read-only mounts land on a decoy, the real .git writable (black-box round): each
  // such folder is a mount point in every confined terminal, and a mount point cannot be renamed.
  it('cannot be renamed or replaced from inside, while the rest of the workspace can', async () => {
    const ws = join(root, 'ws-hold');
    mkdirSync(join(ws, 'vendor'), { recursive: true });
    execFileSync('git', ['init', '-q', join(ws, 'vendor', 'lib')]);
    mkdirSync(join(ws, 'plain'));
    const c = confine('holders', ws, join(root, 'home-hold'));
    const command = ['-c', 'mv vendor vendor.x; echo "vendor=$?"; mv vendor/lib lib.x; echo "lib=$?"; mv plain plain.x; echo "plain=$?"'];
    const ran = await run(c.wrap('/bin/sh', command, { PATH: '/usr/bin:/bin' }), ws);
    c.dispose();
    expect(ran.output).toMatch(/vendor=[1-9]/);
    expect(ran.output).toMatch(/lib=[1-9]/);
    expect(ran.output).toContain('plain=0');
    expect(existsSync(join(ws, 'vendor', 'lib', '.git', 'hooks'))).toBe(true);
  });
});
