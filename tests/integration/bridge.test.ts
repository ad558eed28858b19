import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';

// The real `tandem mcp` (built by `npm test`'s pretest step).
const cli = resolve(__dirname, '../../bin/tandem.js');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempHome(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-bridge-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function bridge(tandemHome: string, env: Record<string, string> = {}, name = 'claude-code'): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', '--name', name],
    env: { PATH: process.env.PATH ?? '', HOME: tandemHome, TANDEM_HOME: tandemHome, ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'claude-code', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
  return { ...(result.isError ? { isError: true } : {}), ...(result.structuredContent as Record<string, unknown>) };
}

async function fixture(tandemHome: string, opts: { trustLocalAgents?: boolean } = {}): Promise<AgentFixture> {
  const f = await startAgentFixture({ tandemHome, ...opts });
  cleanups.push(() => f.close());
  return f;
}

describe('stdio bridge', () => {
  it('completes the handshake with no Tandem running, then works once Tandem starts, without a restart', async () => {
    const home = tempHome();
    const client = await bridge(home, { TANDEM_TOKEN: 'tdm_placeholder' });
    expect((await client.listTools()).tools).toHaveLength(8);
    expect(await call(client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'not_running' } });

    const f = await fixture(home);
    const token = f.layer.pairAgent({ name: 'claude-code' }).token;
    f.layer.setAgentPolicy({ name: 'claude-code', policy: 'always' });
    const client2 = await bridge(home, { TANDEM_TOKEN: token });
    // The first bridge, started before Tandem, now reaches it too (its token is refused: revoked or unknown).
    expect(await call(client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_denied' } });
    const opened = await call(client2, 'terminal_open', { title: 'via bridge' });
    expect(opened).toMatchObject({ agent: 'claude-code', cwd: expect.any(String) });
    expect(await call(client2, 'terminal_send', { id: opened.id, text: 'echo through-bridge' })).toMatchObject({ status: 'done', output: 'through-bridge' });
  });

  it('reconnects after the host restarts, pairing again when its token died with the old instance', async () => {
    const home = tempHome();
    const first = await startAgentFixture({ tandemHome: home, trustLocalAgents: true });
    const client = await bridge(home);
    const opened = await call(client, 'terminal_open', { title: 'before restart' });
    expect(opened).toHaveProperty('id');
    await first.close();
    expect(await call(client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'not_running' } });
    await fixture(home, { trustLocalAgents: true });
    expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
    expect(await call(client, 'terminal_open', { title: 'after restart' })).toHaveProperty('id');
  });

  it('pairs by request: pending, then always allowed (token stored 0600), and denied', async () => {
    const home = tempHome();
    const f = await fixture(home);
    const client = await bridge(home, {}, 'codex');
    expect(await call(client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    const [request] = f.layer.state().pairings;
    expect(request).toMatchObject({ name: 'codex', exe: process.execPath });
    f.layer.answerPairing({ requestId: request!.id, decision: 'always' });
    expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
    const tokenFile = join(home, 'agents', 'codex.token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    // A new bridge presents the stored token without asking again.
    const second = await bridge(home, {}, 'codex');
    expect(await call(second, 'terminal_list')).toEqual({ terminals: [] });
    expect(f.layer.state().pairings).toEqual([]);

    const denied = await bridge(home, {}, 'gemini-cli');
    expect(await call(denied, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    f.layer.answerPairing({ requestId: f.layer.state().pairings[0]!.id, decision: 'deny' });
    expect(await call(denied, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_denied' } });
  });

  it('allow once: works for this bridge and is not stored', async () => {
    const home = tempHome();
    const f = await fixture(home);
    const client = await bridge(home, {}, 'cursor');
    await call(client, 'terminal_list');
    f.layer.answerPairing({ requestId: f.layer.state().pairings[0]!.id, decision: 'once' });
    expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
    expect(() => statSync(join(home, 'agents', 'cursor.token'))).toThrow();
    expect(f.layer.state().paired).toEqual([]);
  });

  it('refuses writes into the bridge’s own terminal', async () => {
    const home = tempHome();
    const f = await fixture(home, { trustLocalAgents: true });
    const own = await f.host.create({ title: 'where the agent runs', shell: 'bash' });
    const client = await bridge(home, { TANDEM_TERMINAL_ID: own.id });
    // Paired (trusted) and connected: even handed to it, its own terminal stays refused.
    expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
    f.host.handToAgent(own.id, 'claude-code');
    expect(await call(client, 'terminal_send', { id: own.id, text: 'echo x' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
  });

  it('pairs once for parallel first calls, and the terminal one call opened is usable by the others', async () => {
    const home = tempHome();
    const f = await fixture(home);
    const asked: string[] = [];
    // The person allows every request as it shows up.
    f.layer.pairing.requests.onChange(({ id, info }) => {
      if (!info) return;
      asked.push(id);
      setImmediate(() => f.layer.answerPairing({ requestId: id, decision: 'once' }));
    });
    const client = await bridge(home, {}, 'parallel');
    const [opened, listA, listB] = await Promise.all([
      call(client, 'terminal_open', { title: 'opened in parallel' }),
      call(client, 'terminal_list'),
      call(client, 'terminal_list'),
    ]);
    expect(asked).toHaveLength(1);
    expect(opened).toHaveProperty('id');
    expect(listA).toHaveProperty('terminals');
    expect(listB).toHaveProperty('terminals');
    const id = opened.id as string;
    const [sent, read] = await Promise.all([call(client, 'terminal_send', { id, text: 'pwd' }), call(client, 'terminal_read', { id })]);
    expect(sent).toMatchObject({ status: 'done', exitCode: 0 });
    expect(read).toHaveProperty('text');
    expect(f.layer.state().pairings).toEqual([]);
  });
});
