/**
 * Confined agent terminals, attacked from inside through the MCP tools: real bubblewrap, real
 * shells, the official MCP client. Each attack checks the side effect on the host too.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { scanProcesses } from '../../src/main/pty/proc.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { hasCommand } from './helpers.js';
import { findPwsh, pwshRequired } from './pwsh-helpers.js';
import { root as asRoot, runs } from '../support/capabilities.js';
import { describeSandbox, needed, sandboxAvailable, sandboxRequired } from './sandbox-helpers.js';

type Result = Record<string, unknown> & { status?: string; exitCode?: number | null; output?: string };

describe.runIf(!sandboxAvailable && sandboxRequired)('sandbox (required)', () => {
  it('has bubblewrap that can create its namespaces', () => {
    expect.fail('TANDEM_REQUIRE_SANDBOX=1 but bubblewrap (/usr/bin/bwrap, Debian package bubblewrap) is missing or cannot create namespaces here.');
  });
});

describeSandbox('confined agent terminals', () => {
  let f: AgentFixture;
  let token: string;
  let client: Client;
  let project: string;
  let outside: string;
  /** Opens in `project`, which holds the person's home: the person is asked, and says yes. */
  const open = async (args: Record<string, unknown> = {}) => {
    const opening = f.call(client, 'terminal_open', { title: 'box', cwd: project, ...args });
    await expect.poll(() => f.layer.state().approvals.filter((q) => q.kind === 'open').length).toBe(1);
    const [question] = f.layer.state().approvals;
    expect(question).toMatchObject({ kind: 'open', env: [], why: expect.stringContaining('home directory') });
    f.layer.answerApproval({ requestId: question!.id, decision: 'approve' });
    const opened = (await opening) as Result & { id: string; pid: number; sandbox: unknown };
    expect(opened.id, JSON.stringify(opened)).toEqual(expect.any(String));
    return opened;
  };
  const send = (id: string, text: string, extra: Record<string, unknown> = {}) => f.call(client, 'terminal_send', { id, text, ...extra }) as Promise<Result>;
  /** The command ran to its end and failed. */
  const fails = async (id: string, text: string) => {
    const r = await send(id, text);
    expect(r.status, `${text}: ${r.output}`).toBe('done');
    expect(r.exitCode, `${text}: ${r.output}`).not.toBe(0);
    return r;
  };
  /**
   * pwsh as the host discovered it (an agent may name only a discovered shell path): none where
   * it is absent, or installed where the host does not look (a dotnet tool off PATH), which
   * fails where CI requires pwsh.
   */
  const confinedPwsh = (): string[] => {
    const discovered = f.host.environment().shells.find((shell) => shell.name === 'pwsh')?.path;
    if (discovered) return [discovered];
    if (pwshRequired) expect.fail(`TANDEM_REQUIRE_PWSH=1 but the host did not discover pwsh on PATH (found at ${findPwsh() ?? 'nowhere'})`);
    console.warn("sandbox tests: pwsh is not among the host's shells here; its confined cases are skipped");
    return [];
  };
  const policy = (sandbox: 'off' | 'workspace-write' | 'read-only', network: boolean) =>
    f.layer.setAgentPolicy({ name: 'boxed', policy: 'always', sandbox, network });

  beforeAll(async () => {
    f = await startAgentFixture({ defaultSandbox: 'workspace-write' });
    token = f.layer.pairAgent({ name: 'boxed' }).token;
    policy('workspace-write', false);
    client = await f.client(token);
    // The workspace holds the person's home and Tandem's state: both must stay hidden in it.
    project = f.root;
    mkdirSync(join(f.home, '.ssh'), { recursive: true });
    writeFileSync(join(f.home, '.ssh', 'id_ed25519'), 'PRIVATE-KEY-MATERIAL');
    mkdirSync(f.stateDir, { recursive: true });
    writeFileSync(join(f.stateDir, 'secret.txt'), 'STATE-SECRET');
    execFileSync('git', ['init', '-q', project]);
    outside = mkdtempSync(join(tmpdir(), 'tandem-outside-'));
  });
  afterAll(async () => {
    await f.close();
    rmSync(outside, { recursive: true, force: true });
  });
  afterEach(async () => {
    await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
    policy('workspace-write', false);
  });

  it('writes inside the workspace and nowhere else', async () => {
    const t = await open();
    expect(t.sandbox).toEqual({ mode: 'workspace-write', network: false });
    expect(await send(t.id, `echo made > ${project}/inside.txt && cat inside.txt`)).toMatchObject({ status: 'done', exitCode: 0, output: 'made' });
    expect(readFileSync(join(project, 'inside.txt'), 'utf8')).toBe('made\n');
    for (const target of [join(outside, 'x'), '/usr/local/tandem-escape', '/etc/tandem-escape']) {
      await fails(t.id, `echo x > ${target}`);
      expect(existsSync(target)).toBe(false);
    }
    // The private /tmp is the sandbox's own, not the host's.
    expect(await send(t.id, 'echo tmp > /tmp/mine && cat "$TMPDIR/mine"')).toMatchObject({ exitCode: 0, output: 'tmp' });
    expect(existsSync('/tmp/mine')).toBe(false);
    // Version control's own settings and hooks stay read-only in the workspace.
    await fails(t.id, "echo '#!/bin/sh' > .git/hooks/pre-commit");
    await fails(t.id, 'git config core.hooksPath /tmp');
    expect(existsSync(join(project, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(join(project, '.git', 'config'), 'utf8')).not.toContain('hooksPath');
  });

  it('cannot read the host’s processes, Tandem’s state, credentials or another terminal', async () => {
    const other = await f.host.create({ cwd: outside });
    const otherTty = readlinkSync(`/proc/${other.pid}/fd/0`);
    const t = await open();
    const ownTty = readlinkSync(`/proc/${t.pid}/fd/0`);
    expect(otherTty).not.toBe(ownTty);
    const environ = await fails(t.id, `cat /proc/${process.pid}/environ`);
    expect(environ.output).not.toContain('PATH=');
    const state = await fails(t.id, `cat ${join(f.stateDir, 'secret.txt')} ${join(f.stateDir, 'agents.json')}`);
    expect(state.output).not.toMatch(/STATE-SECRET|tokenHash/);
    const key = await fails(t.id, `cat ${join(f.home, '.ssh', 'id_ed25519')}`);
    expect((await send(t.id, `ls -A ${join(f.home, '.ssh')}`)).output).toBe('');
    expect(key.output).not.toContain('PRIVATE-KEY');
    await fails(t.id, `cat ${otherTty}`);
    // node-pty leaks PTY masters into children: the confined shell must hold none (it could type into the other terminal).
    expect((await send(t.id, 'readlink /proc/$$/fd/* | grep -c -e ptmx -e pipe')).output).toBe('0');
    expect((await send(t.id, 'ls /dev/pts')).output).toBe(ownTty.split('/').pop());
    expect(await send(t.id, 'ps -e -o comm= | grep -c -v -e bwrap -e ps -e grep -e bash')).toMatchObject({ output: '0' });
  });

  it('reaches no loopback server, no session bus, and cannot remount or make namespaces', async () => {
    const seen: string[] = [];
    const server: Server = createServer((socket) => {
      seen.push('connection');
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const t = await open();
      await fails(t.id, `echo hi > /dev/tcp/127.0.0.1/${port}`);
      await fails(t.id, 'systemd-run --user true');
      expect((await send(t.id, 'find /run/user /run/dbus -mindepth 1 2>/dev/null | wc -l')).output).toBe('0');
      await fails(t.id, 'mount -o remount,rw /');
      await fails(t.id, 'mount -t tmpfs none /mnt');
      await fails(t.id, 'unshare -r true');
      expect(seen).toEqual([]);
      // With the network on the loopback is still its own (the proxy is the way out:
      // sandbox-proxy.test.ts); unconfined the same connection goes through, so the test can fail.
      await f.host.close(t.id);
      policy('workspace-write', true);
      const on = await open();
      expect(on.sandbox).toEqual({ mode: 'workspace-write', network: true });
      await fails(on.id, `echo hi > /dev/tcp/127.0.0.1/${port}`);
      expect(seen).toEqual([]);
      await f.host.close(on.id);
      policy('off', true);
      const plain = (await f.call(client, 'terminal_open', { title: 'plain', cwd: project })) as Result & { id: string };
      expect((await send(plain.id, `echo hi > /dev/tcp/127.0.0.1/${port}`)).exitCode).toBe(0);
      await expect.poll(() => seen.length).toBe(1);
    } finally {
      server.close();
    }
  });

  it.runIf(needed(hasCommand('python3')))('refuses TIOCSTI, and keeps its controlling terminal', async () => {
    const t = await open();
    const inject = await fails(t.id, `python3 -c "import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x')"`);
    expect(inject.output).toContain('Operation not permitted');
    expect(await send(t.id, 'tty')).toMatchObject({ exitCode: 0, output: readlinkSync(`/proc/${t.pid}/fd/0`) });
    // Job control works: a stopped job can be resumed in the foreground.
    expect((await send(t.id, 'sleep 30', { waitMs: 300 })).status).toBe('running');
    await f.call(client, 'terminal_signal', { id: t.id, signal: 'SIGTSTP' });
    expect(await send(t.id, 'jobs | grep -c Stopped')).toMatchObject({ output: '1' });
    expect((await send(t.id, 'kill %1; wait', {})).status).toBe('done');
  });

  it.runIf(needed(hasCommand('python3')))('settles input(), read -p, and Ctrl+C and SIGINT interrupt', async () => {
    const t = await open();
    expect(await send(t.id, `python3 -c 'print("got", input("name? "))'`)).toMatchObject({ status: 'waiting_input', evidence: 'read' });
    expect(await send(t.id, 'ada')).toMatchObject({ status: 'done', output: 'got ada' });
    expect(await send(t.id, 'read -p "value? " v; echo "v=$v"')).toMatchObject({ status: 'waiting_input' });
    expect(await send(t.id, 'seven')).toMatchObject({ status: 'done', output: 'v=seven' });
    expect((await send(t.id, 'sleep 100', { waitMs: 200 })).status).toBe('running');
    expect(await f.call(client, 'terminal_send', { id: t.id, keys: ['C-c'], input: true })).toMatchObject({ status: 'done', exitCode: 130 });
    expect((await send(t.id, 'sleep 100', { waitMs: 200 })).status).toBe('running');
    expect(await f.call(client, 'terminal_signal', { id: t.id, signal: 'SIGINT' })).toMatchObject({ status: 'done', exitCode: 130 });
    expect(await f.call(client, 'terminal_signal', { id: t.id, signal: 'SIGKILL' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    // A password prompt (echo off), seen from the host's side through the sandbox as outside it (engine.test.ts).
    expect(await send(t.id, `python3 -c 'import getpass; print("len", len(getpass.getpass("Password: ")))'`)).toMatchObject({
      status: 'waiting_input',
      output: expect.stringContaining('Password:'),
    });
    const answered = await send(t.id, 'hunter2');
    expect(answered).toMatchObject({ status: 'done', output: 'len 7' });
  });

  it('leaves no setsid or nohup daemon behind after close', async () => {
    const t = await open();
    await send(
      t.id,
      'setsid sleep 4242 </dev/null >/dev/null 2>&1 & nohup sleep 4343 >/dev/null 2>&1 & env -u TANDEM_TERMINAL_ID setsid sleep 4444 </dev/null >/dev/null 2>&1 &',
    );
    const sleepers = () =>
      scanProcesses().filter(
        (p) => p.comm === 'sleep' && /^sleep (4242|4343|4444)$/.test(readFileSync(`/proc/${p.pid}/cmdline`, 'latin1').replace(/\0/g, ' ').trim()),
      );
    await expect.poll(() => sleepers().length).toBe(3);
    expect(await f.call(client, 'terminal_close', { id: t.id })).toEqual({ closed: true, orphans: [] });
    expect(sleepers()).toEqual([]);
  });

  it('starts bash, zsh and pwsh confined', async () => {
    const shells = ['bash', ...(hasCommand('zsh') ? ['zsh'] : []), ...confinedPwsh()];
    for (const shell of shells) {
      const t = await open({ shell });
      expect(t.sandbox, `${shell}: ${JSON.stringify(t)}`).toEqual({ mode: 'workspace-write', network: false });
      const probe = shell.endsWith('pwsh')
        ? 'Write-Output "$env:TANDEM_SANDBOX"; Set-Content -Path /usr/local/pwsh-escape -Value x'
        : 'echo "$TANDEM_SANDBOX"; echo x > /usr/local/sh-escape';
      const r = await send(t.id, probe);
      expect(r.output).toContain('workspace-write');
      expect(await send(t.id, shell.endsWith('pwsh') ? 'Write-Output ok' : 'echo ok')).toMatchObject({ status: 'done', output: 'ok' });
      await f.call(client, 'terminal_close', { id: t.id });
    }
    expect(existsSync('/usr/local/pwsh-escape') || existsSync('/usr/local/sh-escape')).toBe(false);
  });

  it("passes the engine suite's core cases confined: bash, zsh and pwsh", async () => {
    const shells = ['bash', ...(hasCommand('zsh') ? ['zsh'] : []), ...confinedPwsh()];
    for (const shell of shells) {
      const pwsh = shell.endsWith('pwsh');
      const t = await open({ shell });
      const says = (what: string) => `${shell}: ${what}`;
      expect(await send(t.id, 'echo hello-box'), says('echo')).toMatchObject({
        status: 'done',
        evidence: 'marker',
        exitCode: 0,
        output: 'hello-box',
        cwd: project,
      });
      expect(await send(t.id, '/bin/false'), says('exit code')).toMatchObject({ status: 'done', exitCode: 1 });
      expect(await send(t.id, 'cd /tmp'), says('cwd')).toMatchObject({ status: 'done', cwd: '/tmp' });
      // A program waiting for a line, then its answer.
      const asked = await send(t.id, pwsh ? "Read-Host 'your name'" : 'read -r answer; echo "got $answer"');
      expect(asked, says('waiting')).toMatchObject({ status: 'waiting_input' });
      const answered = await send(t.id, 'box', { input: true });
      expect(answered, says('answered')).toMatchObject({ status: 'done', exitCode: 0 });
      expect(answered.output, says('answer')).toContain(pwsh ? 'box' : 'got box');
      // A multi-line send settles once, on its last command.
      const lines = await send(t.id, pwsh ? 'Write-Output one\nStart-Sleep -Milliseconds 200\nWrite-Output two' : 'echo one\nsleep 0.2\necho two');
      // Once zsh's came back waiting_input (issue 22): the whole result, evidence included, names why.
      expect(lines, says(`multi-line: ${JSON.stringify({ ...lines, output: undefined })}`)).toMatchObject({ status: 'done', exitCode: 0 });
      expect(lines.output, says('multi-line output')).toMatch(/one[\s\S]*two/);
      // An interrupt ends a long sleep, and the shell takes commands again.
      const long = await send(t.id, pwsh ? 'Start-Sleep -Seconds 100' : 'sleep 100', { waitMs: 300 });
      expect(long, says('running')).toMatchObject({ status: 'running' });
      const signalled = await f.call(client, 'terminal_signal', { id: t.id, signal: 'SIGINT' });
      const ended = signalled.status === 'done' ? signalled : await f.call(client, 'terminal_wait', { id: t.id, since: long.cursor, waitMs: 15_000 });
      expect(ended, says('interrupt')).toMatchObject({ status: 'done' });
      expect(await send(t.id, 'echo after'), says('after')).toMatchObject({ status: 'done', output: 'after' });
      await f.call(client, 'terminal_close', { id: t.id });
    }
  });

  it('a Ctrl+C the person types ends the confined command, not the terminal: bash, zsh and pwsh', async () => {
    const shells = ['bash', ...(hasCommand('zsh') ? ['zsh'] : []), ...confinedPwsh()];
    for (const shell of shells) {
      const pwsh = shell.endsWith('pwsh');
      const says = (what: string) => `${shell}: ${what}`;
      const t = await open({ shell });
      // The programs a confined shell runs ignore none of the keys' signals (bubblewrap does).
      const mask = await send(t.id, 'grep SigIgn /proc/self/status');
      const ignored = BigInt(`0x${/SigIgn:\s*([0-9a-f]+)/.exec(mask.output ?? '')?.[1] ?? 'ffff'}`);
      for (const signal of [2, 3, 20]) expect(ignored & (1n << BigInt(signal - 1)), says(`signal ${signal} ignored: ${JSON.stringify(mask)}`)).toBe(0n);
      // pwsh runs a cmdlet itself, in bubblewrap's group; bash and zsh run sleep in its own.
      const long = await send(t.id, pwsh ? 'Start-Sleep -Seconds 100' : 'sleep 100', { waitMs: 300 });
      expect(long, says('running')).toMatchObject({ status: 'running' });
      const { attachment } = await f.host.attach(t.id, 'person-ui', { frame: () => undefined, closed: () => undefined, writable: () => undefined });
      await f.host.input(attachment.id, '\x03', true);
      await expect.poll(() => f.host.get(t.id).view().status, { timeout: 10_000 }).not.toBe('running');
      expect(f.host.get(t.id).view(), says('the terminal lives')).toMatchObject({ status: 'idle', exitCode: null });
      // And a second Ctrl+C at the prompt; then the agent gets it back and it still takes commands.
      await f.host.input(attachment.id, '\x03', true);
      await new Promise((resolve) => setTimeout(resolve, 500));
      f.host.handBack(t.id);
      expect(await send(t.id, 'echo after-ctrl-c'), says('after')).toMatchObject({ status: 'done', output: 'after-ctrl-c' });
      await f.call(client, 'terminal_close', { id: t.id });
    }
  });

  it('read-only refuses every write', async () => {
    policy('read-only', false);
    const t = await open();
    expect(t.sandbox, JSON.stringify(t)).toEqual({ mode: 'read-only', network: false });
    for (const target of [join(project, 'ro.txt'), '/tmp/ro.txt', '"$TMPDIR/ro.txt"', '"$XDG_CACHE_HOME/ro.txt"', '"$HISTFILE.x"', join(outside, 'ro.txt')]) {
      await fails(t.id, `echo x > ${target}`);
    }
    expect(existsSync(join(project, 'ro.txt'))).toBe(false);
    await fails(t.id, `mkdir ${join(project, 'd')}`);
    expect(await send(t.id, 'cat .git/HEAD')).toMatchObject({ exitCode: 0, output: expect.stringContaining('ref:') });
  });

  it('refuses a mode change while the agent has terminals, and applies it once they are closed', async () => {
    const t = await open();
    expect(() => policy('off', false)).toThrow(expect.objectContaining({ code: 'busy' }));
    expect(() => policy('workspace-write', true)).toThrow(expect.objectContaining({ code: 'busy' }));
    // Only the policy: allowed while terminals are open.
    f.layer.setAgentPolicy({ name: 'boxed', policy: 'always' });
    expect(f.layer.state().paired.find((agent) => agent.name === 'boxed')).toMatchObject({ sandbox: 'workspace-write', network: false });
    await f.call(client, 'terminal_close', { id: t.id });
    policy('off', true);
    // Unconfined, the workspace grants nothing: the same open does not ask.
    const plain = (await f.call(client, 'terminal_open', { title: 'plain', cwd: project })) as Result & { id: string; sandbox: unknown };
    expect(plain.sandbox).toBeNull();
    expect(await send(plain.id, `echo x > ${join(outside, 'free.txt')}`)).toMatchObject({ exitCode: 0 });
    expect(existsSync(join(outside, 'free.txt'))).toBe(true);
  });
});

describeSandbox('sandbox defaults', () => {
  it('confines new pairings, leaves trusted local agents off unless asked', async () => {
    const f = await startAgentFixture({});
    try {
      f.layer.pairAgent({ name: 'fresh' });
      expect(f.layer.state().paired[0]).toMatchObject({ sandbox: 'workspace-write', network: true });
    } finally {
      await f.close();
    }
    for (const trustedSandbox of [undefined, 'read-only'] as const) {
      const trusted = await startAgentFixture({ trustLocalAgents: true, trustedSandbox });
      try {
        const outcome = trusted.layer.pairing.poll(trusted.layer.pairing.request({ name: 'local', pid: process.pid, exe: 'test', cwd: trusted.home }));
        const client = await trusted.client((outcome as { token: string }).token);
        const opened = await trusted.call(client, 'terminal_open', { title: 't' });
        expect(opened.sandbox).toEqual(trustedSandbox ? { mode: trustedSandbox, network: true } : null);
      } finally {
        await trusted.close();
      }
    }
  });
});

describe.runIf(needed(sandboxAvailable && hasCommand('setpriv') && hasCommand('python3')) && runs('a host started as nobody', asRoot))(
  'unprivileged (needs root)',
  () => {
    it('confines a terminal whose host runs as nobody', () => {
      const root = mkdtempSync(join(tmpdir(), 'tandem-nobody-'));
      try {
        execFileSync('chown', ['-R', '65534:65534', root]);
        const script = join(process.cwd(), 'tests', 'integration', 'fixtures', 'confined-session.mts');
        const run = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import', 'tsx', script, root], {
          encoding: 'utf8',
          timeout: 60_000,
          env: { ...process.env, HOME: root },
        });
        expect(run.stderr).toBe('');
        const results = JSON.parse(run.stdout) as Record<string, Result>;
        expect(results.id).toMatchObject({ output: expect.stringMatching(/^uid=65534/) });
        expect(results.inside).toMatchObject({ exitCode: 0 });
        expect(results.outside!.exitCode).not.toBe(0);
        expect(results.tiocsti!.exitCode).not.toBe(0);
        expect(results.remount!.exitCode).not.toBe(0);
        expect(results.closed).toEqual({ closed: true, orphans: [] });
        expect(existsSync(join(root, 'ws', 'made'))).toBe(true);
        // The agent's locked directory went with its /tmp; the link out was not followed.
        expect(results.locked).toMatchObject({ exitCode: 0 });
        expect(readdirSync(join(root, 'state', 'sandbox', 'run'))).toEqual([]);
        expect(statSync(join(root, 'outside', 'kept')).mode & 0o777).toBe(0o500);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  },
);
