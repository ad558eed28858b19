/**
 * Shell discovery runs each bash it finds with `--version` at host start and may make the
 * newest the default: a `bash` in a folder another account, a group or everyone can write
 * must never run (not even for its version) nor be offered. Through the real host: scripts
 * named bash that would announce 9.9 (and so win the ranking) write a canary when run.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TerminalHost } from '../../src/main/host/host.js';
import { readShellVersionsAhead } from '../../src/main/shells/discovery.js';
import { which } from '../../src/main/shells/resolve.js';

const realBash = which('bash');
const isRoot = process.getuid?.() === 0;

/** A throwaway account (only root can make one): its uid, or null. */
function throwawayUser(name: string): number | null {
  if (!isRoot || !which('useradd', '/usr/sbin:/sbin:/usr/bin:/bin')) return null;
  const made = spawnSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', name], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `/usr/sbin:/sbin:${process.env.PATH}` },
  });
  if (made.status !== 0) return null;
  const id = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  return id.status === 0 ? Number(id.stdout.trim()) : null;
}

describe.runIf(realBash)('a bash in a folder others can write', () => {
  let root = '';
  let host: TerminalHost;
  let env: NodeJS.ProcessEnv;
  const user = `tandemx${process.pid}`;
  let otherUid: number | null = null;
  const folders: Record<string, string> = {};
  const canary = (name: string) => join(root, 'canaries', name);

  /** A script named bash in `dir` that records being run and claims to be the newest bash. */
  function plant(name: string, dir: string, version = '9.9.0'): string {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'bash');
    writeFileSync(
      path,
      `#!/bin/sh\n: > '${canary(name)}'\nif [ "$1" = --version ]; then echo 'GNU bash, version ${version}(1)-release'; exit 0; fi\nexec ${realBash} "$@"\n`,
    );
    chmodSync(path, 0o755);
    folders[name] = dir;
    return path;
  }

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'tandem-shell-trust-'));
    // Others must be able to reach the folders at all for the test to mean anything.
    chmodSync(root, 0o755);
    mkdirSync(join(root, 'canaries'));
    plant('group-writable', join(root, 'group', 'bin'));
    chmodSync(folders['group-writable']!, 0o775);
    plant('world-writable', join(root, 'world', 'bin'));
    chmodSync(folders['world-writable']!, 0o777);
    plant('writable-parent', join(root, 'parent', 'bin'));
    chmodSync(join(root, 'parent'), 0o777);
    otherUid = throwawayUser(user);
    if (otherUid !== null) {
      const path = plant('other-owner', join(root, 'other', 'bin'));
      chownSync(folders['other-owner']!, otherUid, otherUid);
      chownSync(path, otherUid, otherUid);
    }
    // The control: a folder only this user can write, with a bash that may run.
    plant('own', join(root, 'own', 'bin'), '5.9.0');
    env = {
      ...process.env,
      HOME: root,
      SHELL: '/bin/bash',
      TANDEM_SHELL_SEARCH_DIRS: Object.values(folders).join(':'),
      ZDOTDIR: undefined,
      HISTFILE: undefined,
    };
    delete env.TANDEM_BASH_INTEGRATION;
    host = new TerminalHost({ env, home: root });
  });
  afterAll(async () => {
    await host?.shutdown();
    if (otherUid !== null) spawnSync('userdel', [user], { env: { ...process.env, PATH: `/usr/sbin:/sbin:${process.env.PATH}` } });
    rmSync(root, { recursive: true, force: true });
  });

  it('runs none of them, not even for --version, and offers none; a bash only this user can write is offered', async () => {
    await readShellVersionsAhead(env);
    const environment = host.environment();
    const offered = environment.shells.map((shell) => shell.path);
    for (const name of Object.keys(folders).filter((name) => name !== 'own')) {
      expect(existsSync(canary(name)), name).toBe(false);
      expect(offered, name).not.toContain(join(folders[name]!, 'bash'));
    }
    // The control ran for its version and is offered, the newest bash: the checks above could fail.
    expect(existsSync(canary('own'))).toBe(true);
    expect(environment.shells.find((shell) => shell.path === join(folders.own!, 'bash'))).toMatchObject({ name: 'bash', label: 'bash 5.9' });
  });

  it.runIf(isRoot)('covers a folder owned by another account', () => {
    expect(otherUid).not.toBeNull();
    expect(existsSync(canary('other-owner'))).toBe(false);
  });

  it('a new terminal asking for `bash` runs the newest trusted one', async () => {
    const view = await host.create({ shell: 'bash', cols: 80, rows: 24 });
    expect(host.get(view.id).session.shell.path).toBe(join(folders.own!, 'bash'));
    for (const name of Object.keys(folders).filter((name) => name !== 'own')) expect(existsSync(canary(name)), name).toBe(false);
  });
});
