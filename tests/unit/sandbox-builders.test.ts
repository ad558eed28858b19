import { describe, expect, it } from 'vitest';
import { bwrapArgs } from '../../src/main/sandbox/bwrap.js';
import { accountHomePaths, hiddenPathCandidates } from '../../src/main/sandbox/hidden-paths.js';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shortSocketDirPrefix } from '../../src/main/launch/socket-path.js';
import { seatbeltProfile } from '../../src/main/sandbox/seatbelt.js';
import type { SandboxSpec } from '../../src/main/sandbox/types.js';

const spec: SandboxSpec = {
  mode: 'workspace-write',
  network: false,
  workspace: '/home/ada/proj',
  tmpDir: '/home/ada/.config/Tandem/sandbox/run/t1/tmp',
  writable: ['/home/ada/.config/Tandem/sandbox/a/cache'],
  readable: ['/tmp/tandem-rc-x'],
  hidden: [
    { path: '/home/ada/.config/Tandem', dir: true },
    { path: '/home/ada/.ssh', dir: true },
    { path: '/home/ada/.netrc', dir: false },
    { path: '/tmp/.X11-unix', dir: true },
  ],
  protectedPaths: [
    { path: '/home/ada/proj/.git/hooks', dir: true },
    { path: '/home/ada/proj/.git/config', dir: false },
  ],
};

const build = (over: Partial<SandboxSpec> = {}) =>
  bwrapArgs({
    spec: { ...spec, ...over },
    pty: '/dev/pts/7',
    infoFd: 3,
    seccompFd: 4,
    unsetEnv: ['SSH_AUTH_SOCK'],
    setEnv: { TMPDIR: '/tmp' },
    command: ['/bin/bash', '-i'],
  });

/** Index of the option `flag` whose next arguments are `rest`. */
function at(args: string[], flag: string, ...rest: string[]): number {
  for (let i = 0; i < args.length; i++) if (args[i] === flag && rest.every((value, j) => args[i + 1 + j] === value)) return i;
  return -1;
}

describe('bubblewrap arguments', () => {
  it('drops privileges, keeps the session, and passes the descriptors', () => {
    const args = build();
    for (const flag of ['--unshare-user', '--disable-userns', '--unshare-pid', '--unshare-net', '--die-with-parent']) expect(args).toContain(flag);
    expect(at(args, '--cap-drop', 'ALL')).toBeGreaterThan(-1);
    expect(args).not.toContain('--new-session');
    expect(at(args, '--info-fd', '3')).toBeGreaterThan(-1);
    expect(at(args, '--seccomp', '4')).toBeGreaterThan(-1);
    expect(at(args, '--chdir', '/home/ada/proj')).toBeGreaterThan(-1);
    expect(at(args, '--unsetenv', 'SSH_AUTH_SOCK')).toBeGreaterThan(-1);
    expect(args.slice(-3)).toEqual(['--', '/bin/bash', '-i']);
  });

  it('always makes its own network namespace; network on binds nothing of the proxy inside and runs the shell itself', () => {
    expect(build({ network: true })).toContain('--unshare-net');
    const args = build({ network: true, proxy: { socket: '/state/run/t1/proxy.sock' } });
    expect(args).toContain('--unshare-net');
    // The forwarder listens in the sandbox's network namespace from outside (forwarder.ts).
    expect(args.join('\0')).not.toContain('proxy.sock');
    expect(args.slice(args.indexOf('--') + 1)).toEqual(['/bin/bash', '-i']);
  });

  it('mounts in order: root read-only, a private /dev with only the terminal, /proc, /tmp, workspace, hides, protections', () => {
    const args = build();
    const root = at(args, '--ro-bind', '/', '/');
    const dev = at(args, '--dev', '/dev');
    const pts = at(args, '--tmpfs', '/dev/pts');
    const pty = at(args, '--dev-bind', '/dev/pts/7', '/dev/pts/7');
    const proc = at(args, '--proc', '/proc');
    const tmp = at(args, '--bind', spec.tmpDir, '/tmp');
    const ws = at(args, '--bind', '/home/ada/proj', '/home/ada/proj');
    const ssh = at(args, '--tmpfs', '/home/ada/.ssh');
    const netrc = at(args, '--ro-bind', '/dev/null', '/home/ada/.netrc');
    const hooks = at(args, '--ro-bind', '/home/ada/proj/.git/hooks', '/home/ada/proj/.git/hooks');
    const config = at(args, '--ro-bind', '/home/ada/proj/.git/config', '/home/ada/proj/.git/config');
    const cache = at(args, '--bind', spec.writable[0]!, spec.writable[0]!);
    const state = at(args, '--tmpfs', '/home/ada/.config/Tandem');
    const ro = at(args, '--remount-ro', '/home/ada/.ssh');
    expect([root, dev, pts, pty, proc, tmp, ws].every((value, i, all) => value > -1 && (i === 0 || value > all[i - 1]!))).toBe(true);
    expect(ssh).toBeGreaterThan(ws);
    expect(netrc).toBeGreaterThan(ws);
    expect(hooks).toBeGreaterThan(ws);
    expect(config).toBeGreaterThan(ws);
    // The caches live inside the hidden state directory: bound after it is hidden.
    expect(cache).toBeGreaterThan(state);
    expect(ro).toBeGreaterThan(cache);
    // Under the private /tmp already: not mounted over again.
    expect(args).not.toContain('/tmp/.X11-unix');
  });

  it('still hides a path under /tmp that the workspace brings back', () => {
    const args = build({
      workspace: '/tmp/w',
      hidden: [
        { path: '/tmp/w/.ssh', dir: true },
        { path: '/tmp/.X11-unix', dir: true },
      ],
    });
    expect(at(args, '--tmpfs', '/tmp/w/.ssh')).toBeGreaterThan(at(args, '--bind', '/tmp/w', '/tmp/w'));
    expect(args).not.toContain('/tmp/.X11-unix');
  });

  it('shows a workspace that lies inside a hidden directory through it', () => {
    const args = build({ workspace: '/home/ada/.config/Tandem/w' });
    expect(at(args, '--tmpfs', '/home/ada/.config/Tandem')).toBeLessThan(at(args, '--bind', '/home/ada/.config/Tandem/w', '/home/ada/.config/Tandem/w'));
  });

  it('read-only binds nothing writable', () => {
    const args = build({ mode: 'read-only' });
    expect(args).not.toContain('--bind');
    expect(at(args, '--tmpfs', '/tmp')).toBeGreaterThan(-1);
    expect(at(args, '--remount-ro', '/tmp')).toBeGreaterThan(-1);
    expect(at(args, '--ro-bind', '/home/ada/proj', '/home/ada/proj')).toBeGreaterThan(-1);
  });
});

/**
 * A small evaluator of the profile's file rules, as sandbox-exec applies them: the last rule
 * whose operation and filter match wins. Only what seatbeltProfile writes is understood.
 */
function allowed(profile: string, op: 'file-read*' | 'file-write*', path: string): boolean {
  let verdict = true;
  for (const line of profile.trim().split('\n')) {
    const rule = /^\((allow|deny) ([a-z*\- ]+?)((?: \(.*)?)\)$/.exec(line);
    if (!rule) continue;
    const [, action, ops, rest] = rule;
    if (ops === 'default') {
      verdict = action === 'allow';
      continue;
    }
    if (!ops!.split(' ').includes(op)) continue;
    const filters = [...rest!.matchAll(/\((subpath|literal|regex) (?:"((?:[^"\\]|\\.)*)"|#"((?:[^"\\]|\\.)*)")\)/g)];
    const matches =
      rest!.trim() === '' ||
      filters.some(([, kind, literal, regex]) => {
        const value = (literal ?? '').replace(/\\(.)/g, '$1');
        if (kind === 'subpath') return path === value || path.startsWith(`${value}/`);
        if (kind === 'literal') return path === value;
        return new RegExp(regex!).test(path);
      });
    if (matches) verdict = action === 'allow';
  }
  return verdict;
}

describe('sandbox-exec profile', () => {
  const mac: SandboxSpec = {
    mode: 'workspace-write',
    network: false,
    workspace: '/Users/ada/proj',
    tmpDir: '/Users/ada/Library/Tandem/sandbox/run/t1/tmp',
    writable: ['/Users/ada/Library/Tandem/sandbox/a/cache', '/Users/ada/Library/Tandem/sandbox/a/history'],
    readable: ['/var/folders/x/tandem-rc-1'],
    hidden: [
      { path: '/Users/ada/Library/Tandem', dir: true },
      { path: '/Users/ada/.ssh', dir: true },
      { path: '/Users/ada/.net"rc', dir: false },
      { path: '/Users/ada/proj/.env-secrets', dir: true },
    ],
    protectedPaths: [
      { path: '/Users/ada/proj/.git/hooks', dir: true },
      { path: '/Users/ada/proj/.git/config', dir: false },
    ],
  };

  it('lets the terminal use its temp directory and caches inside the hidden state (last match wins)', () => {
    const text = seatbeltProfile(mac);
    for (const path of [
      `${mac.tmpDir}/x`,
      '/Users/ada/Library/Tandem/sandbox/a/cache/npm/x',
      '/Users/ada/Library/Tandem/sandbox/a/history/bash',
      '/Users/ada/proj/src/a.ts',
      '/dev/ttys003',
    ]) {
      expect(allowed(text, 'file-write*', path), path).toBe(true);
    }
    expect(allowed(text, 'file-read*', `${mac.tmpDir}/x`)).toBe(true);
    expect(allowed(text, 'file-read*', '/var/folders/x/tandem-rc-1/bashrc')).toBe(true);
  });

  it('hides the rest of the state and the credentials, keeps .git read-only, refuses writes elsewhere', () => {
    const text = seatbeltProfile(mac);
    for (const path of [
      '/Users/ada/Library/Tandem/agents.json',
      '/Users/ada/Library/Tandem/sandbox/b/cache/x',
      '/Users/ada/.ssh/id_ed25519',
      '/Users/ada/.net"rc',
      '/Users/ada/proj/.env-secrets/key',
    ]) {
      expect(allowed(text, 'file-read*', path), path).toBe(false);
      expect(allowed(text, 'file-write*', path), path).toBe(false);
    }
    for (const path of ['/Users/ada/proj/.git/hooks/pre-commit', '/Users/ada/proj/.git/config', '/etc/hosts', '/Users/ada/other/x']) {
      expect(allowed(text, 'file-write*', path), path).toBe(false);
    }
    expect(allowed(text, 'file-read*', '/etc/hosts')).toBe(true);
    expect(text).toContain('(deny network-outbound (remote unix-socket (path-regex #"^/Users/ada/Library/Tandem/"))');
    expect(text.trim().split('\n').at(-1)).toBe('(deny network*)');
    // Network on: still no network, except the terminal's proxy port on loopback, allowed after the refusal.
    const on = seatbeltProfile({ ...mac, network: true, proxy: { port: 49152 } })
      .trim()
      .split('\n');
    expect(on.slice(-2)).toEqual(['(deny network*)', '(allow network-outbound (remote ip "localhost:49152"))']);
  });

  it('read-only allows writes to the terminal devices only, and still reads its temp directory', () => {
    const text = seatbeltProfile({ ...mac, mode: 'read-only' });
    for (const path of ['/Users/ada/proj/a', `${mac.tmpDir}/x`, '/Users/ada/Library/Tandem/sandbox/a/cache/x'])
      expect(allowed(text, 'file-write*', path), path).toBe(false);
    expect(allowed(text, 'file-write*', '/dev/null')).toBe(true);
    expect(allowed(text, 'file-read*', `${mac.tmpDir}/x`)).toBe(true);
  });
});

describe('hidden paths', () => {
  it('lists state, discovery (and the bridge channel’s short directory), credentials, sockets and the person’s additions', () => {
    // The short directory's name ends with a random part: the one that exists is hidden.
    const shortDir = `${shortSocketDirPrefix('/run/user/1000/tandem')}0123456789abcdef`;
    mkdirSync(shortDir, { mode: 0o700 });
    const paths = hiddenPathCandidates({
      home: '/home/ada',
      env: {
        XDG_RUNTIME_DIR: '/run/user/1000',
        SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1',
        WAYLAND_DISPLAY: 'wayland-0',
        DOCKER_HOST: 'unix:///srv/docker.sock',
        TANDEM_SANDBOX_HIDE: '~/secrets: /opt/keys :relative',
      },
      stateDir: '/home/ada/.config/Tandem',
      discoveryDir: '/run/user/1000/tandem',
    });
    for (const path of [
      '/home/ada/.config/Tandem',
      '/run/user/1000/tandem',
      '/home/ada/.ssh',
      '/home/ada/.aws',
      '/home/ada/.claude',
      '/home/ada/.codex',
      '/home/ada/.docker/config.json',
      '/run/user/1000',
      '/run/user/1000/wayland-0',
      '/tmp/ssh-x/agent.1',
      '/var/run/docker.sock',
      '/srv/docker.sock',
      '/home/ada/secrets',
      '/opt/keys',
      '/tmp/.X11-unix',
    ]) {
      expect(paths).toContain(path);
    }
    expect(paths).toContain(shortDir);
    rmSync(shortDir, { recursive: true, force: true });
    expect(paths).not.toContain('relative');
    expect(new Set(paths).size).toBe(paths.length);
  });

  it("hides the credentials and Tandem's state of the account's own home where HOME names another", () => {
    const account = realpathSync(mkdtempSync(join(tmpdir(), 'tandem-account-')));
    const paths = accountHomePaths('/home/scratch', account);
    for (const rel of ['.ssh', '.aws', '.claude', '.config/Tandem']) expect(paths).toContain(join(account, rel));
    expect(paths).not.toContain(account);
    expect(accountHomePaths(account, account)).toEqual([]);
    expect(accountHomePaths('/home/scratch', '/')).toEqual([]);
    expect(accountHomePaths('/home/scratch', '')).toEqual([]);
    expect(accountHomePaths('/home/scratch', join(account, 'missing'))).toEqual([]);
    rmSync(account, { recursive: true, force: true });
  });
});
