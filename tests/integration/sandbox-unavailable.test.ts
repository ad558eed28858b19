/**
 * Where bubblewrap cannot create its namespaces (Ubuntu 24.04's AppArmor rule, an AppImage with
 * no profile), confined terminals are refused with `sandbox_unavailable`, never opened
 * unconfined. Reproduced for real: the host runs inside a bubblewrap started with
 * `--disable-userns`, so its own bubblewrap probe fails as it would there. This kernel has no
 * apparmor_restrict_unprivileged_userns, so the AppArmor reading comes from a fake file.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeSandbox } from './sandbox-helpers.js';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/tandem.js');
/** A bubblewrap around the host that lets it see and write the machine but forbids any further user namespace. */
const noUserns = ['--unshare-user', '--disable-userns', '--bind', '/', '/', '--dev-bind', '/dev', '/dev', '--proc', '/proc', '--die-with-parent', '--'];

describeSandbox('bubblewrap unusable: detected, explained, and never an unconfined terminal', () => {
  let base = '';
  let host: ChildProcess | undefined;
  let client: Client | undefined;

  beforeAll(async () => {
    if (!existsSync(join(root, 'out/main/cli.js'))) throw new Error('out/main/cli.js is missing: run `npm run build` first');
    base = mkdtempSync(join(tmpdir(), 'tandem-no-userns-'));
    const tandemHome = join(base, 'state');
    const home = join(base, 'home');
    mkdirSync(join(home, 'project'), { recursive: true });
    const env: NodeJS.ProcessEnv = { ...process.env, TANDEM_HOME: tandemHome, HOME: home, SHELL: '/bin/bash' };
    for (const name of ['TANDEM_INSTANCE', 'TANDEM_TOKEN', 'TANDEM_TERMINAL_ID']) delete env[name];
    // Trusted agents confined by the serve flag: the policy an open must honour.
    host = spawn('/usr/bin/bwrap', [...noUserns, process.execPath, bin, 'serve', '--port', '0', '--trust-local-agents', '--agent-sandbox', 'workspace-write'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    host.stderr!.setEncoding('utf8');
    host.stderr!.on('data', (chunk: string) => (stderr += chunk));
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no login URL within 20 s: ${stderr}`)), 20_000);
      createInterface({ input: host!.stdout! }).on('line', (line) => {
        if (!line.includes('#login=')) return;
        clearTimeout(timer);
        done();
      });
      host!.once('exit', (code) => fail(new Error(`tandem serve exited with ${code}: ${stderr}`)));
    });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp', '--name', 'confined-agent'],
      env: { TANDEM_HOME: tandemHome, HOME: home },
      cwd: join(home, 'project'),
      stderr: 'pipe',
    });
    client = new Client({ name: 'confined-agent', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
    if (host && host.exitCode === null && host.signalCode === null) {
      const exited = new Promise((done) => host!.once('exit', done));
      host.kill('SIGTERM');
      await exited;
    }
    if (base) rmSync(base, { recursive: true, force: true });
  });

  async function call(name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const result = await client!.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
    return { ...(result.isError ? { isError: true } : {}), ...(result.structuredContent as Record<string, unknown>) };
  }

  /** The host's child processes (bubblewrap's pid namespace is not unshared: pids are the machine's). */
  function childrenOfHost(): string[] {
    // bwrap is the spawned process; the host (node) is its child.
    const tasks = (pid: number) =>
      readdirSync(`/proc/${pid}/task`).flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));
    const node = tasks(host!.pid!).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('serve'));
    return node ? tasks(Number(node)) : [];
  }

  it('an agent under a sandbox policy gets sandbox_unavailable through the MCP tools, and no terminal is opened', async () => {
    const opened = await call('terminal_open', { title: 'must stay confined', shell: 'bash' });
    expect(opened).toMatchObject({
      isError: true,
      error: { code: 'sandbox_unavailable', message: expect.stringMatching(/^Bubblewrap cannot create the sandbox here \(bwrap: .*namespace/) },
    });
    expect(await call('terminal_list')).toEqual({ terminals: [] });
    expect(childrenOfHost()).toEqual([]);
    // Asked again, the same answer (found once, not a fallback on the second try).
    expect(await call('terminal_open', { title: 'again', shell: 'bash' })).toMatchObject({ isError: true, error: { code: 'sandbox_unavailable' } });
    expect(await call('terminal_list')).toEqual({ terminals: [] });
  });

  it('with the AppArmor sysctl reading 1 (a fake file), the same real failure is explained as AppArmor with its fixes', () => {
    const sysctl = join(base, 'apparmor_restrict_unprivileged_userns');
    writeFileSync(sysctl, '1\n');
    const script = join(root, 'tests', 'integration', 'fixtures', 'sandbox-verdict.mts');
    const run = spawnSync('/usr/bin/bwrap', [...noUserns, process.execPath, '--import', 'tsx', script, sysctl], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    const { problem, refused } = JSON.parse(run.stdout) as { problem: { cause: string; message: string }; refused: { code: string; message: string } };
    expect(problem.cause).toBe('apparmor');
    expect(problem.message).toMatch(/bubblewrap said: bwrap: .*namespace/);
    expect(problem.message).toContain('sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0');
    expect(refused).toMatchObject({ code: 'sandbox_unavailable', message: expect.stringMatching(/^Ubuntu's AppArmor/) });
  });
});
