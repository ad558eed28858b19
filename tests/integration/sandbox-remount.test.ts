/**
 * Mounts a confined terminal keeps while the host changes what they cover (issue 24): the
 * person's own `git config` renames a new `.git/config` over the read-only one, and a service
 * that restarts re-creates its socket. The kernel drops a mount whose file is renamed over or
 * removed in another namespace; the sandbox's guard must put it back (src/main/sandbox/
 * mount-guard.ts). Real bubblewrap, the official MCP client, the person's real git, a real Unix
 * socket server that must see no connection; without the guard each attack below goes through
 * (the agent's shell keeps finding the new file writable, the new socket reachable).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { AgentFixture } from './agent-helpers.js';
import { hasCommand } from './helpers.js';
import { root } from '../support/capabilities.js';
import { confinedAgent, describeSandbox, needed, personGitIn } from './sandbox-helpers.js';

const fixtures = resolve(__dirname, 'fixtures');

type Result = Record<string, unknown> & { status?: string; exitCode?: number | null; output?: string; error?: { code: string } };

/**
 * Waits inside the terminal (bounded at 45 s, a bound for a hang, not a timing) until `test`
 * fails, then says whether it still held: the agent's own view, without writing anything.
 */
const until = (test: string) => `i=0; while ${test} && [ $i -lt 900 ]; do sleep 0.05; i=$((i+1)); done; if ${test}; then echo STILL; else echo GONE; fi`;

describeSandbox('mounts the host replaces under a confined terminal', () => {
  let f: AgentFixture;
  let client: Client;
  let repo: string;
  let canary: string;
  let personGit: (...args: string[]) => string;
  const send = (id: string, text: string) => f.call(client, 'terminal_send', { id, text, waitMs: 55_000 }) as Promise<Result>;
  const open = async () => (await f.call(client, 'terminal_open', { title: 'guard', cwd: repo })) as Result & { id: string };

  beforeAll(async () => {
    ({ f, client } = await confinedAgent('guarded'));
    repo = f.project;
    personGit = personGitIn(repo, f.home);
    canary = join(f.root, 'CANARY');
    personGit('init', '-q');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    personGit('add', '.');
    personGit('commit', '-q', '-m', 'start');
  });
  afterAll(async () => {
    await f.close();
  });
  afterEach(async () => {
    await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
  });

  it("keeps .git/config read-only after the person's git renames a new one over it", async () => {
    const t = await open();
    expect((await send(t.id, 'test -w .git/config && echo WRITABLE || echo READONLY')).output).toBe('READONLY');
    // The person's own git, unconfined: config.lock renamed over config, three times over.
    for (const name of ['Two', 'Three', 'Four']) personGit('config', 'user.name', name);
    // The agent looks (no write) until the file is read-only again, then attacks it.
    expect((await send(t.id, until('test -w .git/config'))).output).toBe('GONE');
    const attack = await send(t.id, `printf '[core]\\n\\tfsmonitor = "touch ${canary}; false"\\n' >> .git/config`);
    expect(attack.status).toBe('done');
    expect(attack.exitCode).not.toBe(0);
    expect(attack.output).toMatch(/Read-only file system/);
    expect((await send(t.id, 'mv -f .git/config .git/config.old; echo $?')).output).toMatch(/busy|1$/);
    // Put back once per drop, not stacked: one mount on the path in the sandbox's own table.
    const mounted = await send(t.id, `awk -v p="$(realpath .git/config)" '$5 == p' /proc/self/mountinfo | wc -l`);
    expect(mounted.output).toBe('1');
    // The side effect: the file is the person's, and their next git status runs nothing.
    const config = readFileSync(join(repo, '.git', 'config'), 'utf8');
    expect(config).toContain('name = Four');
    expect(config).not.toContain('fsmonitor');
    personGit('status', '--short');
    expect(existsSync(canary)).toBe(false);
    // The terminal goes on: the agent still commits.
    expect(await send(t.id, 'echo two >> a.txt && git -c user.name=A -c user.email=a@e commit -qam agent && echo COMMITTED')).toMatchObject({
      status: 'done',
      exitCode: 0,
      output: 'COMMITTED',
    });
  });

  // Found black-box (round 2): the person's git writes config.lock in .git (a folder the agent may
  // write) and renames it over config; a hard link made to it, or to config while its mount was
  // down, stayed a writable name of the live config. Hard links are refused in the sandbox.
  it("leaves the agent no second name of the config the person's git writes", async () => {
    const t = await open();
    const grab = `perl -e 'for (1..300000) { exit 0 if link(".git/config.lock", ".git/yy") || link(".git/config", ".git/zz") } exit 1' & echo started`;
    expect((await send(t.id, grab)).output).toContain('started');
    for (const name of ['L1', 'L2', 'L3']) personGit('config', 'user.name', name);
    await send(t.id, 'wait');
    expect((await send(t.id, 'ls .git')).output).not.toMatch(/\b(yy|zz)\b/);
    expect(existsSync(join(repo, '.git', 'yy')) || existsSync(join(repo, '.git', 'zz'))).toBe(false);
    const link = await send(t.id, 'touch f1 && ln f1 f2');
    expect(link.exitCode).not.toBe(0);
    expect(link.output).toMatch(/Operation not permitted/);
    // git itself falls back to renaming its objects into place: the agent still commits.
    expect(await send(t.id, 'rm -f f1; echo three >> a.txt && git -c user.name=A -c user.email=a@e commit -qam again && echo COMMITTED')).toMatchObject({
      exitCode: 0,
      output: 'COMMITTED',
    });
  });

  // Found black-box (round 4): io_uring runs its requests in the kernel past the seccomp filter,
  // so IORING_OP_LINKAT made the hard link that link(2) may not (and the person's next
  // `git config` wrote through it); and the sandbox shared the keyrings of the person's session.
  it('leaves the agent no hard link through io_uring', async ({ skip }) => {
    const uring = join(repo, '.uring-link.py');
    copyFileSync(join(fixtures, 'uring-link.py'), uring);
    // The same script links outside the sandbox: the way around is real on this kernel (a kernel or
    // container with io_uring off has nothing to go around).
    const control = join(f.root, 'uring-control');
    writeFileSync(control, 'x');
    const outside = spawnSync('python3', [uring, control, `${control}-link`], { encoding: 'utf8' }).stdout.trim();
    if (outside !== 'linked') {
      console.warn(`skipped: io_uring outside the sandbox (${outside}); this kernel has none to refuse`);
      return skip();
    }
    const t = await open();
    const linked = await send(t.id, 'python3 .uring-link.py .git/config .git/refs/keep; python3 .uring-link.py a.txt b.txt');
    expect(linked.output).toBe('io_uring_setup refused: Function not implemented\nio_uring_setup refused: Function not implemented');
    expect(existsSync(join(repo, '.git', 'refs', 'keep')) || existsSync(join(repo, 'b.txt'))).toBe(false);
    expect(statSync(join(repo, '.git', 'config')).nlink).toBe(1);
  });

  it('leaves the agent no key of the keyrings the person shares, and no key of its own there', async ({ skip }) => {
    const keyring = join(repo, '.keyring.py');
    copyFileSync(join(fixtures, 'keyring.py'), keyring);
    // The person's secret in the user's session keyring, which every process of theirs without a
    // login session keyring shares (a login's own is shared by what it started the same way).
    const desc = `tandem-test-${process.pid}`;
    const secret = `s3cret-${Math.floor(Math.random() * 1e9)}`;
    const planted = spawnSync('python3', [keyring, 'plant', desc, secret], { encoding: 'utf8' }).stdout.trim();
    if (planted !== 'added') {
      console.warn(`skipped: the kernel's keyrings outside the sandbox (${planted}); there are none to reach`);
      return skip();
    }
    try {
      expect(execFileSync('python3', [keyring, 'read', desc], { encoding: 'utf8' }).trim()).toBe(`value ${secret}`);
      const t = await open();
      const read = await send(t.id, `python3 .keyring.py read ${desc}; python3 .keyring.py add ${desc}-planted evil`);
      expect(read.output).not.toContain(secret);
      expect(read.output).toBe('keyctl search refused: Function not implemented\nadd_key refused: Function not implemented');
      const added = spawnSync('python3', [keyring, 'read', `${desc}-planted`], { encoding: 'utf8' });
      expect(added.stdout.trim()).toBe('keyctl search refused: Required key not available');
    } finally {
      execFileSync('python3', [keyring, 'drop', desc]);
    }
  });

  // Found black-box: the protection was decided at the open, so a config.worktree the person
  // turned on later (git sparse-checkout does) was the agent's to write.
  it('protects a config.worktree the person turns on after the open', async () => {
    const t = await open();
    try {
      personGit('config', 'extensions.worktreeConfig', 'true');
      personGit('config', '--worktree', 'user.name', 'Worktree');
      expect((await send(t.id, until('test -w .git/config.worktree'))).output).toBe('GONE');
      const attack = await send(t.id, `printf '[core]\\n\\tfsmonitor = "touch ${canary}; false"\\n' >> .git/config.worktree`);
      expect(attack.exitCode).not.toBe(0);
      expect(readFileSync(join(repo, '.git', 'config.worktree'), 'utf8')).not.toContain('fsmonitor');
      personGit('status', '--short');
      expect(existsSync(canary)).toBe(false);
    } finally {
      personGit('config', '--unset', 'extensions.worktreeConfig');
    }
  });

  it('ends the confined terminal when a protected file comes back as a link it cannot pin, and says why', async () => {
    // A nested repository whose folder name carries a title sequence: protected at the open like
    // any repository in the workspace; its name must not reach the terminal as a sequence.
    const nested = join(repo, 'evil\x1b]0;PWNED\x07');
    mkdirSync(nested);
    execFileSync('git', ['init', '-q'], { cwd: nested, env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
    const config = join(nested, '.git', 'config');
    try {
      const t = await open();
      const outside = join(f.root, 'planted-config');
      writeFileSync(outside, readFileSync(config));
      // A process on the host swaps the file for a link (a rename over it, as git does).
      const link = join(nested, '.git', 'config.link');
      symlinkSync(outside, link);
      renameSync(link, config);
      // The guard kills the sandbox: the agent's command never runs to its end (or the send
      // finds the terminal exited already).
      const r = await send(t.id, until('true'));
      expect(r.status ?? r.error?.code, JSON.stringify(r)).toBe('exited');
      expect(r.output ?? '').not.toContain('STILL');
      // The terminal says why, where the person and the agent look, with the name made harmless.
      const shown = JSON.stringify(await f.call(client, 'terminal_read', { id: t.id }));
      expect(shown).toMatch(
        /\[Tandem\] The confined terminal was ended: .*evil\?\]0;PWNED\?\/\.git\/config could not be(\s|\\n)+protected again[\s\S]*symbolic link/,
      );
      expect(shown).not.toContain('\\u001b]0;PWNED');
      expect(f.host.list().find((x) => x.id === t.id)?.title ?? '').not.toContain('PWNED');
      expect(readFileSync(outside, 'utf8')).not.toContain('fsmonitor');
    } finally {
      rmSync(nested, { recursive: true, force: true });
    }
  });

  // The new socket is bound aside and renamed into place, so the path is never missing: a
  // confined terminal another test file opens meanwhile hides it too, and a path gone between
  // its scan and bubblewrap's mount would fail that open.
  it.runIf(needed(hasCommand('python3')))('hides a socket again when its service re-creates it', async () => {
    const path = `/var/tmp/tandem-remount-${process.pid}.sock`;
    const seen: string[] = [];
    rmSync(path, { force: true });
    execFileSync('python3', ['-c', `import socket; socket.socket(socket.AF_UNIX).bind('${path}')`]);
    const server: Server = createServer((socket) => {
      seen.push('connection');
      socket.destroy();
    });
    try {
      const t = await open();
      expect((await send(t.id, `test -S ${path} && echo SOCKET || echo HIDDEN`)).output).toBe('HIDDEN');
      // The service restarts: a new socket, listening, takes the path.
      await new Promise<void>((resolve) => server.listen(`${path}.new`, resolve));
      renameSync(`${path}.new`, path);
      const gone = await send(t.id, until(`[ -S ${path} ]`));
      expect(gone.output, JSON.stringify(gone)).toBe('GONE');
      const r = await send(t.id, `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${path}'); print('connected')"`);
      expect(r.exitCode).not.toBe(0);
      expect(r.output).not.toContain('connected');
      expect(seen).toEqual([]);
    } finally {
      server.close();
      rmSync(path, { force: true });
    }
  });

  it("hides a secret again where the agent's home shows a read folder holding it, after the person's tool rewrites it", async () => {
    const docker = join(f.home, '.docker');
    mkdirSync(docker, { recursive: true });
    writeFileSync(join(docker, 'config.json'), '{"auths":{"x":{"auth":"OLDSECRET"}}}\n');
    f.layer.setAgentPolicy({ name: 'guarded', policy: 'always', sandbox: 'workspace-write', network: false, homeReadable: ['~/.docker'] });
    try {
      const t = await open();
      const both = `cat "$HOME/.docker/config.json" ${join(docker, 'config.json')} 2>&1; true`;
      expect((await send(t.id, both)).output).not.toContain('SECRET');
      // docker login writes a new file and renames it over the old one.
      writeFileSync(join(docker, 'config.json.tmp'), '{"auths":{"x":{"auth":"NEWSECRET"}}}\n');
      renameSync(join(docker, 'config.json.tmp'), join(docker, 'config.json'));
      const look = await send(t.id, until('grep -qs NEWSECRET "$HOME/.docker/config.json"'));
      expect(look.output).toBe('GONE');
      expect((await send(t.id, both)).output).not.toContain('SECRET');
    } finally {
      f.layer.setAgentPolicy({ name: 'guarded', policy: 'always', sandbox: 'workspace-write', network: false });
      rmSync(docker, { recursive: true, force: true });
    }
  });

  // Another user's socket is theirs to replace: what they put there now is theirs (as a socket
  // they make after the open would be), and it must not end the person's terminal (black-box
  // round: a folder or a link in its place ended every confined terminal at will).
  it.runIf(root.present && needed(hasCommand('python3')))('goes on when another user replaces their own hidden socket with a link', async () => {
    const path = `/var/tmp/tandem-other-${process.pid}.sock`;
    rmSync(path, { recursive: true, force: true });
    const asNobody = (...args: string[]) => execFileSync('runuser', ['-u', 'nobody', '--', ...args]);
    asNobody('python3', '-c', `import socket; socket.socket(socket.AF_UNIX).bind('${path}')`);
    try {
      const t = await open();
      expect((await send(t.id, `test -S ${path} && echo SOCKET || echo HIDDEN`)).output).toBe('HIDDEN');
      // A link in its place, renamed over it (the path is never missing: see above).
      asNobody('ln', '-s', '/nonexistent', `${path}.link`);
      asNobody('mv', '-T', `${path}.link`, path);
      // The guard looks on the event and leaves the folder be; a second of the shell's own gives
      // it time to have ended the terminal if it were going to.
      expect(await send(t.id, 'sleep 1; echo alive')).toMatchObject({ status: 'done', output: 'alive' });
    } finally {
      rmSync(path, { recursive: true, force: true });
    }
  });
});
