/**
 * The bounds of the walk for repositories under a confined workspace (git-protect.ts): past
 * them the open is refused (`sandbox_unavailable`), never left half protected, and a refused
 * open has created nothing (every check comes before the first write). Real directories and
 * real git; the bounds are passed small so the test does not build 50,000 folders.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitProtection } from '../../src/main/sandbox/git-protect.js';

describe('git protection bounds', () => {
  let root: string;
  const repo = (dir: string) => {
    mkdirSync(dir, { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd: dir });
    rmSync(join(dir, '.git', 'hooks'), { recursive: true, force: true });
  };
  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'tandem-gitbounds-')));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('protects every repository up to the bound, and refuses one more without creating anything', () => {
    for (let i = 0; i < 4; i++) repo(join(root, 'libs', `r${i}`));
    const ok = gitProtection(root, '', { repos: 4, dirs: 100 });
    expect(ok.anchors.map((a) => a.path).sort()).toEqual([0, 1, 2, 3].map((i) => join(root, 'libs', `r${i}`, '.git')));
    for (let i = 0; i < 4; i++) expect(existsSync(join(root, 'libs', `r${i}`, '.git', 'hooks'))).toBe(true);
    repo(join(root, 'libs', 'r4'));
    for (let i = 0; i < 5; i++) rmSync(join(root, 'libs', `r${i}`, '.git', 'hooks'), { recursive: true, force: true });
    expect(() => gitProtection(root, '', { repos: 4, dirs: 100 })).toThrow(
      expect.objectContaining({ code: 'sandbox_unavailable', message: expect.stringContaining('more than 4 git repositories') }),
    );
    for (let i = 0; i < 5; i++) expect(existsSync(join(root, 'libs', `r${i}`, '.git', 'hooks')), `r${i}`).toBe(false);
  });

  it('refuses a tree past the folder bound; skips node_modules and follows no link; a home workspace is not walked', () => {
    for (let i = 0; i < 6; i++) mkdirSync(join(root, 'src', `d${i}`), { recursive: true });
    expect(() => gitProtection(root, '', { repos: 8, dirs: 5 })).toThrow(
      expect.objectContaining({ code: 'sandbox_unavailable', message: expect.stringContaining('more than 5 folders') }),
    );
    rmSync(join(root, 'src'), { recursive: true });
    // Under node_modules, or behind a link to a folder outside: not looked into.
    repo(join(root, 'node_modules', 'pkg'));
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'tandem-gitbounds-out-')));
    try {
      repo(join(outside, 'r'));
      symlinkSync(outside, join(root, 'linked'));
      expect(gitProtection(root, '', { repos: 8, dirs: 5 }).anchors).toEqual([]);
      expect(existsSync(join(outside, 'r', '.git', 'hooks'))).toBe(false);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
    // The person's whole home as the workspace: no walk (their rc files are the agent's to write there).
    for (let i = 0; i < 6; i++) mkdirSync(join(root, 'many', `d${i}`), { recursive: true });
    expect(() => gitProtection(root, root, { repos: 8, dirs: 5 })).not.toThrow();
  });
});
