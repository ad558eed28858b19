/**
 * Where rc directories go (src/main/shells/rc-dir.ts): the user's own runtime folder only when
 * it is a real directory of theirs that nobody else can enter; otherwise no runtime folder.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeRcDir, rcParent, sweepRcDirs } from '../../src/main/shells/rc-dir.js';
import { posixModes, root, runs } from '../support/capabilities.js';

const base = mkdtempSync(join(tmpdir(), 'tandem-rcparent-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function dir(name: string, mode: number): string {
  const path = join(base, name);
  mkdirSync(path);
  chmodSync(path, mode);
  return path;
}

describe.runIf(runs('rc directory placement', posixModes))('rcParent', () => {
  it('takes XDG_RUNTIME_DIR when it is the user’s own 0700 directory', () => {
    const own = dir('own', 0o700);
    expect(rcParent({ XDG_RUNTIME_DIR: own }, 'darwin')).toBe(own);
  });

  it('passes over one others can enter, a link, a relative path or none, for the temp folder', () => {
    const open = dir('open', 0o755);
    const link = join(base, 'link');
    symlinkSync(dir('target', 0o700), link);
    for (const XDG_RUNTIME_DIR of [open, link, 'relative/run', join(base, 'missing'), undefined]) {
      expect(rcParent({ XDG_RUNTIME_DIR }, 'darwin')).toBe(tmpdir());
    }
  });

  it.runIf(runs('a runtime folder of another owner', root))('passes over one another user owns', () => {
    const theirs = dir('theirs', 0o700);
    chownSync(theirs, 65534, 65534);
    expect(rcParent({ XDG_RUNTIME_DIR: theirs }, 'darwin')).toBe(tmpdir());
  });
});

describe.runIf(runs('sweeping rc directories', posixModes))('sweepRcDirs', () => {
  it('removes those of an ended Tandem process, and keeps its own, a live process’s, links and other names', () => {
    const parent = mkdtempSync(join(base, 'sweep-'));
    const ended = spawnSync(process.execPath, ['-e', '0']).pid;
    const make = (name: string) => {
      mkdirSync(join(parent, name));
      return join(parent, name);
    };
    const gone = make(`tandem-rc-${ended}-aB3dE9`);
    const mine = make(`tandem-rc-${process.pid}-aB3dE9`);
    const parents = make(`tandem-rc-${process.ppid}-aB3dE9`);
    const other = make(`tandem-rc-${ended}-extra-aB3dE9`);
    const link = join(parent, `tandem-rc-${ended}-zZ9yY8`);
    symlinkSync(mine, link);
    sweepRcDirs(parent);
    expect(existsSync(gone)).toBe(false);
    for (const kept of [mine, parents, other, link]) expect(existsSync(kept), kept).toBe(true);
  });

  it('removes the history folders of an ended Tandem process, and keeps its own, a live process’s, links, plain files and other names', () => {
    const parent = mkdtempSync(join(base, 'sweep-history-'));
    const ended = spawnSync(process.execPath, ['-e', '0']).pid;
    const folder = (name: string) => {
      mkdirSync(join(parent, name));
      writeFileSync(join(parent, name, 'history'), 'ls\n');
      return join(parent, name);
    };
    const gone = folder(`tandem-history-${ended}-Ab_c-9`);
    const mine = folder(`tandem-history-${process.pid}-Ab_c-9`);
    const parents = folder(`tandem-history-${process.ppid}-Ab_c-9`);
    const other = folder(`tandem-history-${ended}-has.dot`);
    const file = join(parent, `tandem-history-${ended}-file`);
    writeFileSync(file, 'ls\n');
    const link = join(parent, `tandem-history-${ended}-link`);
    symlinkSync(mine, link);
    sweepRcDirs(parent);
    expect(existsSync(gone)).toBe(false);
    for (const kept of [mine, parents, other, file, link]) expect(existsSync(kept), kept).toBe(true);
  });

  it.runIf(runs('an ended process’s directory of another owner', root))('keeps one another user owns', () => {
    const parent = mkdtempSync(join(base, 'sweep-owner-'));
    const ended = spawnSync(process.execPath, ['-e', '0']).pid;
    const theirs = join(parent, `tandem-rc-${ended}-aB3dE9`);
    mkdirSync(theirs);
    chownSync(theirs, 65534, 65534);
    sweepRcDirs(parent);
    expect(existsSync(theirs)).toBe(true);
  });
});

describe.runIf(runs('making rc directories', posixModes))('makeRcDir', () => {
  it('names it after this process, 0700, and falls back to the temp folder where its parent cannot take it (full, or gone)', () => {
    const made = makeRcDir(join(base, 'missing'));
    try {
      expect(made.startsWith(join(tmpdir(), `tandem-rc-${process.pid}-`))).toBe(true);
      expect(lstatSync(made).mode & 0o777).toBe(0o700);
    } finally {
      rmSync(made, { recursive: true, force: true });
    }
  });
});
