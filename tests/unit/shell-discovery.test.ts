/**
 * Several bash and zsh binaries, as a Mac with Homebrew or MacPorts has them (issue 26): a fake
 * layout of directories with small executable scripts that print a `--version` line, run through
 * the same discovery code as the real ones. The layout's folders stand in for /bin and
 * Homebrew's, which a test cannot write to; the real folder names are checked in `shellSource`.
 */
import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bashDialect, bashLegacyDialect } from '../../src/main/shells/bash.js';
import { discoverShells, macSearchDirs, readShellVersionsAhead, shellLayout, shellSource, type ShellLayout } from '../../src/main/shells/discovery.js';
import { fakeShell } from '../support/fake-shells.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A Mac's places under one temporary folder: the system's (3.2), Homebrew's, MacPorts', one in the home. */
function macLike() {
  const root = mkdtempSync(join(tmpdir(), 'tandem-shells-'));
  roots.push(root);
  const runs = join(root, 'runs');
  const shells = {
    systemBash: fakeShell(root, 'system/bin/bash', 'system-bash', 'GNU bash, version 3.2.57(1)-release (arm64-apple-darwin23)', runs),
    systemZsh: fakeShell(root, 'system/bin/zsh', 'system-zsh', 'zsh 5.9 (arm64-apple-darwin23.0)', runs),
    brewBash: fakeShell(root, 'homebrew/bin/bash', 'brew-bash', 'GNU bash, version 5.2.15(1)-release (aarch64-apple-darwin23.0.0)', runs, {
      cellar: 'homebrew/Cellar/bash/5.2.15/bin/bash',
    }),
    brewZsh: fakeShell(root, 'homebrew/bin/zsh', 'brew-zsh', 'zsh 5.9 (aarch64-apple-darwin23.0.0)', runs, { cellar: 'homebrew/Cellar/zsh/5.9/bin/zsh' }),
    portsBash: fakeShell(root, 'ports/bin/bash', 'ports-bash', 'GNU bash, version 4.3.48(1)-release (x86_64-apple-darwin19)', runs),
    ownBash: fakeShell(root, 'home/.local/bin/bash', 'own-bash', 'GNU bash, version 5.1.16(1)-release (x86_64-apple-darwin21)', runs),
    oddBash: fakeShell(root, 'odd/bin/bash', 'odd-bash', 'a bash that prints no version', runs),
  };
  const layout: ShellLayout = {
    searchDirs: ['homebrew/bin', 'ports/bin', 'home/.local/bin', 'odd/bin', 'system/bin'].map((dir) => join(root, dir)),
    systemDirs: [join(root, 'system/bin')],
  };
  // A Finder-started app's PATH: the system's folder only.
  const env: NodeJS.ProcessEnv = { PATH: join(root, 'system/bin'), SHELL: shells.systemBash.path, HOME: join(root, 'home') };
  return { root, shells, layout, env };
}

describe('several bash and zsh binaries', () => {
  it('lists each, newest bash with the full integration first, labelled; the default bash 3.2 gives way to it', () => {
    const { shells, layout, env } = macLike();
    const found = discoverShells(env, 'darwin', layout);
    expect(found.shells.map((shell) => [shell.path, shell.label])).toEqual([
      [shells.brewBash.path, 'bash 5.2 (Homebrew)'],
      // Another folder is not named: the menu shows each path beside its label.
      [shells.ownBash.path, 'bash 5.1'],
      // A version it could not read: after the known ones, with the full integration as before.
      [shells.oddBash.path, 'bash'],
      [shells.portsBash.path, 'bash 4.3 (limited)'],
      [shells.systemBash.path, 'bash 3.2 (system, limited)'],
      // Equal versions keep PATH's first.
      [shells.systemZsh.path, 'zsh 5.9 (system)'],
      [shells.brewZsh.path, 'zsh 5.9 (Homebrew)'],
    ]);
    expect(found.shells.map((shell) => shell.dialect)).toEqual([
      bashDialect,
      bashDialect,
      bashDialect,
      bashLegacyDialect,
      bashLegacyDialect,
      expect.anything(),
      expect.anything(),
    ]);
    // $SHELL is the system's 3.2: the default is Homebrew's 5.2, and a bare `bash` means it too.
    expect(found.defaultShell).toMatchObject({ path: shells.brewBash.path, label: 'bash 5.2 (Homebrew)' });
    expect(found.preferred.get('bash')?.path).toBe(shells.brewBash.path);
    expect(found.preferred.get('zsh')?.path).toBe(shells.systemZsh.path);
  });

  it('keeps a default bash of 4.4 or later, and a default zsh, where the person set them', () => {
    const { shells, layout, env } = macLike();
    expect(discoverShells({ ...env, SHELL: shells.ownBash.path }, 'darwin', layout).defaultShell?.path).toBe(shells.ownBash.path);
    const zsh = discoverShells({ ...env, SHELL: shells.brewZsh.path }, 'darwin', layout);
    expect(zsh.defaultShell?.path).toBe(shells.brewZsh.path);
    // The default's own name comes first, the default leading it.
    expect(zsh.shells.slice(0, 2).map((shell) => shell.path)).toEqual([shells.brewZsh.path, shells.systemZsh.path]);
  });

  it('a lone bash 3.2 is labelled as limited; a lone current bash or zsh is not labelled', () => {
    const { shells, env } = macLike();
    const layout: ShellLayout = { searchDirs: [], systemDirs: [join(shells.systemBash.path, '..')] };
    const found = discoverShells(env, 'darwin', layout);
    expect(found.shells.map((shell) => [shell.path, shell.label])).toEqual([
      [shells.systemBash.path, 'bash 3.2 (system, limited)'],
      [shells.systemZsh.path, undefined],
    ]);
    expect(found.defaultShell?.path).toBe(shells.systemBash.path);
    expect(found.preferred.size).toBe(0);
  });

  it('runs each binary once: at host start in the background, then never while listing; again only when the file changes', async () => {
    const { shells, layout, env } = macLike();
    await readShellVersionsAhead(env, 'darwin', layout);
    const all = Object.values(shells);
    expect(all.map((shell) => shell.runs())).toEqual(all.map(() => 1));
    for (let menu = 0; menu < 3; menu++) discoverShells(env, 'darwin', layout);
    expect(all.map((shell) => shell.runs())).toEqual(all.map(() => 1));
    utimesSync(shells.brewBash.path, new Date(), new Date(Date.now() + 60_000));
    discoverShells(env, 'darwin', layout);
    expect(shells.brewBash.runs()).toBe(2);
    expect(shells.ownBash.runs()).toBe(1);
  });
});

describe('where discovery looks', () => {
  it('macOS: Homebrew (both prefixes), MacPorts and /bin; Linux and Windows: nowhere beyond PATH', () => {
    expect(shellLayout({}, 'darwin').searchDirs).toEqual(['/opt/homebrew/bin', '/usr/local/bin', '/opt/local/bin', '/bin']);
    expect(macSearchDirs).toContain('/opt/homebrew/bin');
    expect(shellLayout({}, 'linux').searchDirs).toEqual([]);
    expect(shellLayout({ TANDEM_SHELL_SEARCH_DIRS: '/x/bin' }, 'win32').searchDirs).toEqual([]);
  });

  it('TANDEM_SHELL_SEARCH_DIRS, only when set, replaces them (relative entries ignored; empty means none)', () => {
    expect(shellLayout({ TANDEM_SHELL_SEARCH_DIRS: '/a/bin:relative:/b/bin' }, 'linux').searchDirs).toEqual(['/a/bin', '/b/bin']);
    expect(shellLayout({ TANDEM_SHELL_SEARCH_DIRS: '' }, 'darwin').searchDirs).toEqual([]);
  });

  it('names the source by the real path', () => {
    const system = shellLayout({}, 'darwin').systemDirs;
    expect(shellSource('/opt/homebrew/bin/bash', '/opt/homebrew/Cellar/bash/5.2.15/bin/bash', system)).toBe('Homebrew');
    expect(shellSource('/usr/local/bin/bash', '/usr/local/Cellar/bash/5.2.15/bin/bash', system)).toBe('Homebrew');
    expect(shellSource('/usr/local/bin/bash', '/usr/local/bin/bash', system)).toBeNull();
    expect(shellSource('/opt/local/bin/bash', '/opt/local/bin/bash', system)).toBe('MacPorts');
    expect(shellSource('/Users/ann/.nix-profile/bin/bash', '/nix/store/abc-bash-5.2/bin/bash', system)).toBe('Nix');
    expect(shellSource('/bin/bash', '/bin/bash', system)).toBe('system');
    expect(shellSource('/Users/ann/bin/bash', '/Users/ann/bin/bash', system)).toBeNull();
  });
});
