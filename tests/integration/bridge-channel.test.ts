import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { helloTimeoutMs, maxBridgeLineBytes, maxBridgeSessionsPerToken, maxPendingHellos, McpSocketEndpoint } from '../../src/main/agent/mcp/mcp-socket.js';
import { shortSocketDirPrefix } from '../../src/main/launch/socket-path.js';
import { discoveryDir } from '../../src/main/host/instance.js';
import { ManualClock } from '../support/manual-clock.js';
import { gate } from '../support/gate.js';
import { until } from '../support/until.js';
import { cancelledWaits, startAgentFixture, type AgentFixture } from './agent-helpers.js';

// The stdio bridge's channel to the host (src/main/agent/mcp/mcp-socket.ts), attacked through its
// public doors: the socket itself, as any local process could reach it, and the real
// `tandem mcp` driven by the official SDK client (built by `npm test`'s pretest step).
const cli = resolve(__dirname, '../../bin/tandem.js');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempHome(under = tmpdir()): string {
  const dir = mkdtempSync(join(under, 'tandem-channel-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function fixture(tandemHome: string, opts: { bridgeSocket?: boolean } = {}): Promise<AgentFixture> {
  const f = await startAgentFixture({ tandemHome, ...opts });
  cleanups.push(() => f.close());
  return f;
}

function paired(f: AgentFixture, name = 'claude-code'): string {
  const token = f.layer.pairAgent({ name }).token;
  f.layer.setAgentPolicy({ name, policy: 'always' });
  return token;
}

async function bridge(tandemHome: string, token: string): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', '--name', 'claude-code'],
    env: { PATH: process.env.PATH ?? '', HOME: tandemHome, TANDEM_HOME: tandemHome, TANDEM_TOKEN: token },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'claude-code', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
  return { ...(result.isError ? { isError: true } : {}), ...(result.structuredContent as Record<string, unknown>) };
}

/** A local process speaking to the socket directly: lines out, parsed lines in. */
function raw(path: string): { socket: Socket; send: (line: string) => void; next: () => Promise<Record<string, unknown>>; closed: Promise<void> } {
  const socket = connect(path);
  socket.on('error', () => undefined);
  const lines: Array<Record<string, unknown>> = [];
  const waiting: Array<(line: Record<string, unknown>) => void> = [];
  let buffer = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let at = buffer.indexOf('\n'); at !== -1; at = buffer.indexOf('\n')) {
      const line = JSON.parse(buffer.slice(0, at)) as Record<string, unknown>;
      buffer = buffer.slice(at + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  cleanups.push(() => void socket.destroy());
  return {
    socket,
    send: (line) => socket.write(`${line}\n`),
    next: () => (lines.length > 0 ? Promise.resolve(lines.shift()!) : new Promise((resolve) => waiting.push(resolve))),
    closed,
  };
}

/** The bridge's first line; a real bridge names its cwd, the agent's project. */
const hello = (token: string | undefined, id = 0, cwd?: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tandem/hello', params: { token, cwd } });
const toolCall = (id: number, name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

describe('bridge channel', () => {
  it('is published as bridgeSocket, 0600 in the 0700 discovery directory, and carries the bridge’s calls instead of /mcp', async () => {
    const home = tempHome();
    const f = await fixture(home);
    const info = JSON.parse(readFileSync(join(discoveryDir({ TANDEM_HOME: home }), 'instance.json'), 'utf8')) as { bridgeSocket?: string };
    expect(info.bridgeSocket).toBe(join(discoveryDir({ TANDEM_HOME: home }), 'bridge.sock'));
    expect(statSync(info.bridgeSocket!).isSocket()).toBe(true);
    expect(statSync(info.bridgeSocket!).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(info.bridgeSocket!)).mode & 0o777).toBe(0o700);
    const { client } = await bridge(home, paired(f));
    const opened = await call(client, 'terminal_open', { title: 'via channel' });
    expect(await call(client, 'terminal_send', { id: opened.id, text: 'echo over-the-channel' })).toMatchObject({ status: 'done', output: 'over-the-channel' });
    expect(f.bridgeChannel!.sessionCount).toBe(1);
    expect(f.layer.mcp.sessionCount).toBe(0);
  });

  it('moves to a short private directory where the discovery path would pass the socket path limit', async () => {
    const deep = join(tempHome(), 'a-directory-name-long-enough-to-push-the-path-over-the-limit', 'and-then-some-more-of-it');
    mkdirSync(deep, { recursive: true });
    const f = await fixture(deep);
    const path = f.bridgeChannel!.path;
    expect(Buffer.byteLength(join(discoveryDir({ TANDEM_HOME: deep }), 'bridge.sock'))).toBeGreaterThan(100);
    const prefix = shortSocketDirPrefix(discoveryDir({ TANDEM_HOME: deep }));
    expect(path.startsWith(prefix)).toBe(true);
    expect(path.slice(prefix.length)).toMatch(/^[0-9a-f]{16}\/bridge\.sock$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    const { client } = await bridge(deep, paired(f));
    expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
    await f.close();
    expect(() => statSync(dirname(path))).toThrow();
  });

  it("keeps the channel on when another user squats the short directory's names, and removes a crashed instance's own", async () => {
    const deep = join(tempHome(), 'a-directory-name-long-enough-to-push-the-path-over-the-limit', 'and-then-some-more-of-it');
    mkdirSync(deep, { recursive: true });
    const prefix = shortSocketDirPrefix(discoveryDir({ TANDEM_HOME: deep }));
    // Another user takes every name it can know (the bare prefix, names with a suffix); as root here, chown stands in for them.
    const squatted = [prefix.slice(0, -1), `${prefix}0000000000000000`, `${prefix}ffffffffffffffff`];
    for (const dir of squatted) {
      mkdirSync(dir, { mode: 0o755 });
      if (process.getuid?.() === 0) chownSync(dir, 65534, 65534);
    }
    // A crashed instance's own directory, with its socket file left.
    const stale = `${prefix}1234567890abcdef`;
    mkdirSync(stale, { mode: 0o700 });
    writeFileSync(join(stale, 'bridge.sock'), '');
    try {
      const f = await fixture(deep);
      expect(f.bridgeChannel).not.toBeNull();
      const { client } = await bridge(deep, paired(f));
      expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
      if (process.getuid?.() === 0) for (const dir of squatted) expect(statSync(dir).uid).toBe(65534);
      expect(() => statSync(stale)).toThrow();
      await f.close();
    } finally {
      for (const dir of [...squatted, stale]) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a wrong or missing token and anything before the hello, and runs no tool', async () => {
    const home = tempHome();
    const f = await fixture(home);
    paired(f);
    const path = f.bridgeChannel!.path;

    const wrong = raw(path);
    // The tool call rides in the same write as the bad hello: it must not run.
    wrong.socket.write(`${hello('tdm_not-a-real-token')}\n${toolCall(1, 'terminal_open', { title: 'must not open' })}\n`);
    expect(await wrong.next()).toMatchObject({ id: 0, error: { data: { code: 'pairing_denied' } } });
    await wrong.closed;

    const missing = raw(path);
    missing.send(hello(undefined));
    expect(await missing.next()).toMatchObject({ error: { data: { code: 'forbidden' } } });
    await missing.closed;

    const skipped = raw(path);
    skipped.send(toolCall(1, 'terminal_open', { title: 'must not open either' }));
    expect(await skipped.next()).toMatchObject({ id: 1, error: { data: { code: 'forbidden' } } });
    await skipped.closed;

    expect(f.host.list()).toEqual([]);
    expect(f.bridgeChannel!.sessionCount).toBe(0);
    expect(f.layer.service.connectedAgents()).toEqual([]);
  });

  it(`gives one token at most ${maxBridgeSessionsPerToken} bridge sessions (attack 10): past its share it gets capacity, another agent’s bridge still works`, async () => {
    const home = tempHome();
    const f = await fixture(home);
    const greedy = paired(f, 'greedy');
    const held = [];
    for (let i = 0; i < maxBridgeSessionsPerToken; i++) {
      const channel = raw(f.bridgeChannel!.path);
      channel.send(hello(greedy, i));
      expect(await channel.next()).toMatchObject({ id: i, result: {} });
      held.push(channel);
    }
    const extra = raw(f.bridgeChannel!.path);
    extra.send(hello(greedy, 99));
    expect(await extra.next()).toMatchObject({ id: 99, error: { data: { code: 'capacity' }, message: expect.stringContaining('its share') } });
    await extra.closed;
    expect(f.bridgeChannel!.sessionCount).toBe(maxBridgeSessionsPerToken);
    // Another agent through the real bridge and the official SDK client.
    const { client } = await bridge(home, paired(f, 'other'));
    expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
    // One of the greedy token's bridges closes: its next one gets in.
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await until(() => f.bridgeChannel!.sessionCount === maxBridgeSessionsPerToken);
    const again = raw(f.bridgeChannel!.path);
    again.send(hello(greedy, 100));
    expect(await again.next()).toMatchObject({ id: 100, result: {} });
  });

  it('bounds connections that never say hello: at most 32 at once, each closed after 5 s', async () => {
    const home = tempHome();
    const f = await fixture(home);
    const clock = new ManualClock();
    const endpoint = await McpSocketEndpoint.listen(f.layer.service, { path: join(f.root, 'timed.sock'), ownDir: null, clock });
    cleanups.push(() => endpoint.close());
    const silent = Array.from({ length: maxPendingHellos }, () => raw(endpoint.path));
    await until(() => endpoint.pendingHelloCount === maxPendingHellos);
    const extra = raw(endpoint.path);
    expect(await extra.next()).toMatchObject({ error: { data: { code: 'capacity' } } });
    await extra.closed;
    await clock.advance(helloTimeoutMs);
    for (const channel of silent) expect(await channel.next()).toMatchObject({ error: { data: { code: 'forbidden' } } });
    await Promise.all(silent.map((channel) => channel.closed));
    // Their slots are free again: a bridge with a token gets in.
    const late = raw(endpoint.path);
    late.send(hello(paired(f)));
    expect(await late.next()).toMatchObject({ id: 0, result: {} });
    expect(endpoint.sessionCount).toBe(1);
    expect(clock.pending).toBe(0);
  });

  it('answers malformed and oversize lines with contract codes and loses nothing around them', async () => {
    const home = tempHome();
    const f = await fixture(home);
    const token = paired(f);
    const channel = raw(f.bridgeChannel!.path);
    // In its project: a confined open at home would wait for the person first.
    channel.send(hello(token, 0, f.project));
    expect(await channel.next()).toMatchObject({ id: 0, result: {} });
    channel.send(toolCall(1, 'terminal_open', { title: 'bounded' }));
    const opened = (await channel.next()) as { result: { structuredContent: { id: string } } };
    const id = opened.result.structuredContent.id;
    // A command in flight while the bad lines arrive.
    channel.send(toolCall(2, 'terminal_send', { id, text: 'sleep 0.5; echo still-here' }));
    channel.send('{ this is not json');
    channel.send(JSON.stringify({ hello: 'not json-rpc' }));
    channel.socket.write(
      `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"terminal_list","arguments":{"pad":"${'x'.repeat(maxBridgeLineBytes + 10)}"}},"id":3}\n`,
    );
    channel.send(toolCall(4, 'terminal_list', {}));
    const replies = new Map<unknown, Record<string, unknown>>();
    const errors: Array<Record<string, unknown>> = [];
    while (replies.size < 3 || errors.length < 2) {
      const line = await channel.next();
      if (line.id === null || line.id === undefined) errors.push(line);
      else replies.set(line.id, line);
    }
    expect(errors.map((line) => (line.error as { data: { code: string } }).data.code)).toEqual(['invalid_argument', 'invalid_argument']);
    expect(replies.get(3)).toMatchObject({ error: { data: { code: 'input_too_large' } } });
    expect(replies.get(4)).toMatchObject({ result: { structuredContent: { terminals: [expect.objectContaining({ id })] } } });
    expect(replies.get(2)).toMatchObject({ result: { structuredContent: { status: 'done', output: 'still-here' } } });
  });

  it('through the bridge: an oversize call fails with input_too_large and the next call works', async () => {
    const home = tempHome();
    const f = await fixture(home);
    const { client } = await bridge(home, paired(f));
    await expect(client.callTool({ name: 'terminal_list', arguments: { pad: 'x'.repeat(maxBridgeLineBytes) } })).rejects.toMatchObject({
      data: { code: 'input_too_large' },
    });
    expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
  });

  it('frees the session of a bridge that vanishes mid-call, and its queue slot', async () => {
    const home = tempHome();
    const f = await fixture(home);
    const token = paired(f);
    const first = await bridge(home, token);
    const opened = await call(first.client, 'terminal_open', { title: 'vanishing' });
    // Runs until the test ends (a gate nobody opens), not a sleep a loaded machine could outlast.
    const held = gate(f.project);
    const inFlight = first.client
      .callTool({ name: 'terminal_send', arguments: { id: opened.id, text: `until [ -e ${held.path} ]; do sleep 0.05; done`, waitMs: 50_000 } }, undefined, {
        timeout: 70_000,
      })
      .catch(() => 'gone');
    await until(() => f.host.get(opened.id as string)?.session.status === 'running');
    process.kill(first.transport.pid!, 'SIGKILL');
    expect(await inFlight).toBe('gone');
    await until(() => f.bridgeChannel!.sessionCount === 0);
    expect(f.layer.service.connectedAgents()).toEqual([]);
    // The same agent again: its write slot was released, so this send is not refused as busy.
    const second = await bridge(home, token);
    expect(await call(second.client, 'terminal_send', { id: opened.id, text: 'echo after', input: true, waitMs: 300 })).toMatchObject({ status: 'running' });
  });

  it('forgets calls the agent cancelled: more of them than either bound leaves the next call answered', async () => {
    const home = tempHome();
    const f = await fixture(home);
    const { client } = await bridge(home, paired(f));
    const opened = await call(client, 'terminal_open', { title: 'cancelled waits' });
    const held = gate(f.project);
    expect(await call(client, 'terminal_send', { id: opened.id, text: `until [ -e ${held.path} ]; do sleep 0.05; done`, waitMs: 200 })).toMatchObject({
      status: 'running',
    });
    // MCP: a cancelled request gets no answer. Each one must still leave the bridge's and the
    // host's books (256 and 64 calls in flight): 300 of them, 30 at a time.
    expect(await cancelledWaits(client, opened.id, { batches: 10, perBatch: 30, waitMs: 50_000, afterMs: 30 })).toEqual(new Set(['cancelled']));
    expect(await call(client, 'terminal_list')).toMatchObject({ terminals: [expect.objectContaining({ id: opened.id })] });
    await until(() => f.bridgeChannel!.sessionCount === 1);
    expect(await call(client, 'terminal_wait', { id: opened.id, waitMs: 100 })).toMatchObject({ status: 'running' });
  });

  it('ends the channel of a revoked agent; its next call is refused', async () => {
    const home = tempHome();
    const f = await fixture(home);
    const { client } = await bridge(home, paired(f));
    expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
    f.layer.revokeAgent({ name: 'claude-code' });
    await until(() => f.bridgeChannel!.sessionCount === 0);
    expect(await call(client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_denied' } });
  });

  it('uses mcpUrl when instance.json has no bridgeSocket (an older host)', async () => {
    const home = tempHome();
    const f = await fixture(home, { bridgeSocket: false });
    expect(f.bridgeChannel).toBeNull();
    const { client } = await bridge(home, paired(f));
    expect(await call(client, 'terminal_list')).toEqual({ terminals: [] });
    expect(f.layer.mcp.sessionCount).toBe(1);
  });
});
