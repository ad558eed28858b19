/**
 * A confined agent's own environment must not reach what runs outside its sandbox (the
 * launcher bash that starts bubblewrap, and bubblewrap itself): through the real MCP client,
 * real bubblewrap and bash, each attack names a canary in the person's home (read-only and
 * hidden inside) that only an unconfined process could create. The variables still reach the
 * confined shell.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { discoveryDir } from '../../src/main/host/instance.js';
import { readStat } from '../../src/main/pty/proc.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { hasCommand } from './helpers.js';
import { describeSandbox, needed } from './sandbox-helpers.js';

type Result = Record<string, unknown> & { id: string; pid: number; output?: string; exitCode?: number | null };

/** The outermost bubblewrap above a confined shell: the PTY's child, which the launcher bash became. */
function launcherPid(shellPid: number): number {
  let pid = shellPid;
  let outer = -1;
  for (let stat = readStat(pid); stat && stat.pid > 1; stat = readStat(stat.ppid)) {
    if (stat.comm === 'bwrap') outer = stat.pid;
    pid = stat.ppid;
  }
  if (outer < 0) throw new Error(`no bubblewrap above ${shellPid}`);
  return outer;
}

const environOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').filter(Boolean);

describeSandbox('the agent’s environment stays inside its sandbox', () => {
  let f: AgentFixture;
  let client: Client;
  const canary = (name: string) => join(f.home, `ESCAPED-${name}`);
  const open = (env: Record<string, string>) => f.call(client, 'terminal_open', { title: 'env', env }) as Promise<Result>;
  const send = (id: string, text: string) => f.call(client, 'terminal_send', { id, text }) as Promise<Result>;

  beforeAll(async () => {
    f = await startAgentFixture({ defaultSandbox: 'workspace-write' });
    const token = f.layer.pairAgent({ name: 'escaper' }).token;
    // Under `always` nothing asks about the env: the sandbox is the only boundary.
    f.layer.setAgentPolicy({ name: 'escaper', policy: 'always', sandbox: 'workspace-write', network: false });
    client = await f.client(token);
  });
  afterAll(async () => {
    await f?.close();
  });
  afterEach(async () => {
    await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
  });

  it('BASH_ENV: the workspace script is not sourced by the launcher; the shell still has the variables', async () => {
    const script = join(f.project, 'x.sh');
    writeFileSync(script, `: > ${canary('BASH_ENV')}\n`);
    const t = await open({ BASH_ENV: script, MYVAR: 'mine' });
    expect(t.sandbox).toEqual({ mode: 'workspace-write', network: false });
    expect((await send(t.id, 'echo "$MYVAR $BASH_ENV"')).output).toBe(`mine ${script}`);
    // Inside, a non-interactive bash sources it and is refused: the canary is only writable from outside.
    await send(t.id, 'bash -c true');
    expect(existsSync(canary('BASH_ENV'))).toBe(false);
    // The launcher (now bubblewrap, same pid) holds none of the agent's variables.
    const environ = environOf(launcherPid(t.pid));
    expect(environ.filter((entry) => /^(BASH_ENV|MYVAR)=/.test(entry))).toEqual([]);
    expect(environ.some((entry) => entry.startsWith('TANDEM_TERMINAL_ID='))).toBe(false);
  });

  it.runIf(needed(hasCommand('gcc')))('LD_PRELOAD: a library in the workspace is loaded only inside', async () => {
    const source = join(f.project, 'evil.c');
    const library = join(f.project, 'evil.so');
    writeFileSync(
      source,
      `#include <fcntl.h>\n#include <unistd.h>\n__attribute__((constructor)) static void escape(void) { int fd = open("${canary('LD_PRELOAD')}", O_WRONLY | O_CREAT, 0644); if (fd >= 0) close(fd); }\n`,
    );
    // Not spawnSync: the host shares this event loop, and a compile that blocks it past the HTTP
    // server's keep-alive timeout has the next request land on a socket the server then resets.
    await promisify(execFile)('gcc', ['-shared', '-fPIC', '-o', library, source]);
    const t = await open({ LD_PRELOAD: library, LD_LIBRARY_PATH: f.project, GCONV_PATH: f.project, MYVAR: 'preloaded' });
    expect((await send(t.id, 'echo "$MYVAR" "$LD_PRELOAD"')).output).toBe(`preloaded ${library}`);
    expect(existsSync(canary('LD_PRELOAD'))).toBe(false);
    expect(environOf(launcherPid(t.pid)).filter((entry) => /^(LD_|GCONV_PATH=|MYVAR=)/.test(entry))).toEqual([]);
  });

  it('PATH: the agent’s PATH does not choose what runs outside, and still is the shell’s', async () => {
    // Impostors of what the launcher could look up by name (tty, bwrap, env).
    for (const name of ['tty', 'bwrap', 'env', 'bash']) {
      writeFileSync(join(f.project, name), `#!/bin/sh\n: > ${canary(`PATH-${name}`)}\nexec /usr/bin/${name} "$@"\n`, { mode: 0o755 });
    }
    const t = await open({ PATH: `${f.project}:/usr/bin:/bin` });
    expect((await send(t.id, 'echo "$PATH"')).output).toBe(`${f.project}:/usr/bin:/bin`);
    for (const name of ['tty', 'bwrap', 'env', 'bash']) expect(existsSync(canary(`PATH-${name}`))).toBe(false);
  });

  it('BASH_FUNC_*: an exported function is refused by name at the MCP door, and never reaches the launcher through the host', async () => {
    const fn = (builtin: string) => `() { : > ${canary('BASH_FUNC')}; builtin ${builtin} "$@"; }`;
    // The contract allows only plain variable names: bash imports functions from `BASH_FUNC_name%%` only.
    const refused = await f.call(client, 'terminal_open', { title: 'fn', env: { 'BASH_FUNC_read%%': fn('read') } });
    expect(refused).toMatchObject({ isError: true, error: { code: 'invalid_argument' } });
    // Behind that door the launcher is still immune: the host's own create takes any name.
    const opened = await f.host
      .create({
        cwd: f.project,
        origin: 'agent',
        env: { 'BASH_FUNC_read%%': fn('read'), 'BASH_FUNC_exec%%': fn('exec'), 'BASH_FUNC_shift%%': fn('shift'), MYVAR: 'fn-env' },
        sandbox: { agent: 'escaper', stateDir: f.stateDir, discoveryDir: discoveryDir(), mode: 'workspace-write', network: false },
      })
      .catch((error: unknown) => error as Error);
    expect(existsSync(canary('BASH_FUNC'))).toBe(false);
    if (opened instanceof Error) throw opened;
    const environ = environOf(launcherPid(opened.pid));
    expect(environ.filter((entry) => entry.startsWith('BASH_FUNC_') || entry.startsWith('MYVAR='))).toEqual([]);
  });

  it('a shell path in the workspace is never run outside the sandbox (not even for its version)', async () => {
    const shell = join(f.project, 'bin', 'bash');
    mkdirSync(join(f.project, 'bin'), { recursive: true });
    writeFileSync(
      shell,
      `#!/bin/sh\n: > ${canary('SHELL-PATH')}\nif [ "$1" = --version ]; then echo 'GNU bash, version 5.2.0(1)-release'; exit 0; fi\nexec /bin/bash "$@"\n`,
      { mode: 0o755 },
    );
    // Under `always` too: Tandem would run it for its version (which integration) before confining anything.
    const opened = await f.call(client, 'terminal_open', { title: 'own bash', shell });
    expect(existsSync(canary('SHELL-PATH'))).toBe(false);
    expect(opened).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    // A discovered shell's path is still fine.
    const bash = f.host.environment().shells.find((s) => s.name === 'bash')!;
    const ok = (await f.call(client, 'terminal_open', { title: 'bash', shell: bash.path })) as Result;
    expect(ok.sandbox).toEqual({ mode: 'workspace-write', network: false });
  });
});
