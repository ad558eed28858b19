/** Which workspaces of a confined open ask the person (src/main/agent/service/open-workspace.ts). */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { acceptableProject, notAProject, workspaceConcern } from '../../src/main/agent/service/open-workspace.js';

it('names why a workspace is too wide, following symlinks', () => {
  const home = mkdtempSync(join(tmpdir(), 'tandem-concern-'));
  try {
    const project = join(home, 'p');
    mkdirSync(join(project, 'src'), { recursive: true });
    expect(workspaceConcern(join(project, 'src'), project, home)).toBeNull();
    expect(workspaceConcern(project, null, home)).toContain('no project yet');
    expect(workspaceConcern(home, project, home)).toContain('home directory');
    expect(workspaceConcern(join(home, '..'), null, home)).toContain('home directory');
    expect(workspaceConcern('/', null, home)).toContain('whole filesystem');
    expect(workspaceConcern(join(project, 'src', '..', '..'), project, home)).toContain('home directory');
    const other = mkdtempSync(join(tmpdir(), 'tandem-concern-other-'));
    expect(workspaceConcern(other, project, home)).toContain(`outside the agent's project (${project})`);
    // A link inside the project that leads home is the home directory.
    symlinkSync(home, join(project, 'up'));
    expect(workspaceConcern(join(project, 'up'), project, home)).toContain('home directory');
    symlinkSync(other, join(project, 'away'));
    expect(workspaceConcern(join(project, 'away'), project, home)).toContain('outside');
    rmSync(other, { recursive: true, force: true });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

it('takes no folder for a project that the person must choose themselves: /, the temp folder, home and above, dot-folders, the system', () => {
  const home = mkdtempSync(join(tmpdir(), 'tandem-notproject-'));
  try {
    const project = join(home, 'code', 'app');
    mkdirSync(project, { recursive: true });
    mkdirSync(join(home, '.config', 'rclone'), { recursive: true });
    expect(notAProject(project, home)).toBeNull();
    expect(acceptableProject(project, home)).toBe(project);
    for (const [path, why] of [
      ['/', 'shared'],
      [tmpdir(), 'shared'],
      [home, 'your home directory'],
      [join(home, '..'), /holds your home directory|shared/],
      [join(home, '.config'), 'dot-folders'],
      [join(home, '.config', 'rclone'), 'dot-folders'],
      ['/etc', 'system folder (/etc)'],
      ['/proc/1', 'system folder (/proc)'],
      ['/usr/share', 'system folder (/usr)'],
      ['relative/dir', 'absolute'],
    ] as const) {
      expect(notAProject(path, home), path).toMatch(why);
      expect(acceptableProject(path, home), path).toBeNull();
    }
    // A link that leads into a dot-folder is the dot-folder.
    symlinkSync(join(home, '.config'), join(home, 'code', 'cfg'));
    expect(notAProject(join(home, 'code', 'cfg'), home)).toContain('dot-folders');
    // Tandem's own state folders, what holds them and what is in them (black-box round 6).
    const state = mkdtempSync(join(tmpdir(), 'tandem-state-'));
    mkdirSync(join(state, 'transcripts'), { recursive: true });
    try {
      for (const path of [state, join(state, 'transcripts')]) expect(notAProject(path, home, [state]), path).toContain("Tandem's own folder");
      // Other folders a state folder holds stay the person's (a test's layout holds the home).
      mkdirSync(join(state, 'work', 'app'), { recursive: true });
      expect(notAProject(join(state, 'work', 'app'), home, [state])).toBeNull();
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
    // The account's own home (the user database's) counts as a home though HOME names another.
    const account = userInfo().homedir;
    expect(notAProject(account, home)).toContain('your home directory');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

it('keeps the project as the folder it was when decided: one replaced by a link later holds nothing the link leads to', () => {
  const home = mkdtempSync(join(tmpdir(), 'tandem-swapped-'));
  try {
    const project = join(home, 'p');
    const elsewhere = join(home, 'elsewhere');
    mkdirSync(project);
    mkdirSync(elsewhere);
    const decided = acceptableProject(project, home)!;
    expect(workspaceConcern(project, decided, home, false)).toBeNull();
    // Someone replaces the folder with a link (to /etc in the black-box round).
    rmSync(project, { recursive: true });
    symlinkSync(elsewhere, project);
    expect(workspaceConcern(project, decided, home, false)).toContain("outside the agent's project");
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

it('takes no folder whose contents the person runs by themselves: a PATH folder in the home (or one holding it), ~/bin, a dotfiles folder (black-box round 9)', () => {
  const home = mkdtempSync(join(tmpdir(), 'tandem-runs-'));
  try {
    for (const dir of ['bin', 'go/bin', 'tools/bin', 'dotfiles/zsh', 'code/app']) mkdirSync(join(home, dir), { recursive: true });
    const path = ['/usr/bin', join(home, 'go', 'bin'), join(home, 'tools', 'bin'), 'relative'].join(':');
    expect(notAProject(join(home, 'code', 'app'), home, [], path)).toBeNull();
    for (const folder of [join(home, 'bin'), join(home, 'go', 'bin'), join(home, 'go'), join(home, 'tools')])
      expect(notAProject(folder, home, [], path), folder).toMatch(/folder on your PATH/);
    // A startup file linked into a dotfiles folder (stow), at the home's top or in .config.
    writeFileSync(join(home, 'dotfiles', 'bashrc'), '# mine\n');
    symlinkSync(join(home, 'dotfiles', 'bashrc'), join(home, '.bashrc'));
    mkdirSync(join(home, '.config'));
    symlinkSync(join(home, 'dotfiles', 'zsh'), join(home, '.config', 'zsh'));
    for (const folder of [join(home, 'dotfiles'), join(home, 'dotfiles', 'zsh')]) expect(notAProject(folder, home, [], path), folder).toMatch(/links to/);
    expect(notAProject(join(home, 'code'), home, [], path)).toBeNull();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

it("takes no folder the person's startup files name: a PATH their .bashrc builds, a file it sources, git's include (black-box round 10)", () => {
  const home = mkdtempSync(join(tmpdir(), 'tandem-named-'));
  try {
    for (const dir of ['go/bin', 'dotfiles', 'gitstuff', 'deeper', 'code/app']) mkdirSync(join(home, dir), { recursive: true });
    writeFileSync(join(home, '.bashrc'), 'export PATH="$HOME/go/bin:$PATH"\n. ~/dotfiles/bashrc\n');
    writeFileSync(join(home, 'dotfiles', 'bashrc'), `source ${join(home, 'deeper', 'aliases.sh')}\n`);
    writeFileSync(join(home, 'deeper', 'aliases.sh'), 'alias ll="ls -l"\n');
    writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = ~/gitstuff/gitconfig\n');
    // A FIFO named by a startup file is not opened (it would hold the host).
    execFileSync('mkfifo', [join(home, 'code', 'fifo')]);
    writeFileSync(join(home, '.profile'), `. ${join(home, 'code', 'fifo')}\n`);
    for (const folder of ['go/bin', 'go', 'dotfiles', 'gitstuff', 'deeper']) expect(notAProject(join(home, folder), home, [], ''), folder).toMatch(/names/);
    expect(notAProject(join(home, 'code', 'app'), home, [], '')).toBeNull();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
