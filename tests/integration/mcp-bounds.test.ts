import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { maxInflightPerSession, maxSessions, maxSessionsPerToken } from '../../src/main/agent/mcp/mcp-http.js';
import { gate } from '../support/gate.js';
import { until, waitFor } from '../support/until.js';
import { cancelledWaits, startAgentFixture, type AgentFixture } from './agent-helpers.js';

// The bounds of /mcp, attacked over raw HTTP so the test controls exactly which streams and
// calls are open: sessions held at once, and calls in flight on one session.
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const protocolVersion = '2025-06-18';

interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

function send(
  f: AgentFixture,
  token: string,
  method: 'GET' | 'POST',
  opts: { session?: string; body?: object } = {},
): { req: ClientRequest; reply: Promise<Reply>; headers: Promise<IncomingMessage> } {
  // Announces the fixture's project as the bridge does: a confined open at the home directory would ask.
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': protocolVersion,
    'x-tandem-cwd': encodeURIComponent(f.project),
  };
  if (opts.session) headers['mcp-session-id'] = opts.session;
  if (opts.body) headers['content-type'] = 'application/json';
  let onHeaders!: (res: IncomingMessage) => void;
  const headersReady = new Promise<IncomingMessage>((resolve) => (onHeaders = resolve));
  const req = request(`${f.url}/mcp`, { method, headers });
  const reply = new Promise<Reply>((resolve, reject) => {
    req.on('response', (res) => {
      onHeaders(res);
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  reply.catch(() => undefined);
  req.end(opts.body ? JSON.stringify(opts.body) : undefined);
  return { req, reply, headers: headersReady };
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'bounds', version: '1' } } };

/** A session whose GET stream is open (the agent is live), and a way to drop that stream. */
async function liveSession(f: AgentFixture, token: string): Promise<{ id: string; drop: () => void }> {
  const init = await send(f, token, 'POST', { body: initialize }).reply;
  expect(init.status).toBe(200);
  const id = String(init.headers['mcp-session-id']);
  const stream = send(f, token, 'GET', { session: id });
  expect((await stream.headers).statusCode).toBe(200);
  return { id, drop: () => stream.req.destroy() };
}

async function fixture(): Promise<{ f: AgentFixture; token: string }> {
  const f = await startAgentFixture();
  cleanups.push(() => f.close());
  const token = f.layer.pairAgent({ name: 'bounded' }).token;
  f.layer.setAgentPolicy({ name: 'bounded', policy: 'always' });
  return { f, token };
}

describe('/mcp bounds', () => {
  it(
    `holds at most ${maxSessions} sessions: a new one ends the longest-idle one without a stream, and is refused while every one is live`,
    { timeout: 120_000 },
    async () => {
      const { f, token } = await fixture();
      // Each token holds at most its share: enough agents to fill every session.
      const tokens = [token, ...Array.from({ length: maxSessions / maxSessionsPerToken - 1 }, (_, i) => f.layer.pairAgent({ name: `bounded-${i}` }).token)];
      const sessions = [];
      for (let i = 0; i < maxSessions; i++) sessions.push(await liveSession(f, tokens[i % tokens.length]!));
      const refused = await send(f, token, 'POST', { body: initialize }).reply;
      expect(refused.status).toBe(503);
      expect(JSON.parse(refused.body).error.data.code).toBe('capacity');

      // One agent goes away (its stream closes): the next session takes its place.
      const gone = sessions[7]!;
      gone.drop();
      const admitted = await waitFor(
        () => send(f, tokens[7 % tokens.length]!, 'POST', { body: initialize }).reply,
        (reply) => reply.status === 200,
      );
      expect(admitted.status).toBe(200);
      const ended = await send(f, token, 'POST', { session: gone.id, body: { jsonrpc: '2.0', id: 2, method: 'tools/list' } }).reply;
      expect(ended.status).toBe(404);
      // A live one was not touched.
      const kept = await send(f, tokens[8 % tokens.length]!, 'POST', { session: sessions[8]!.id, body: { jsonrpc: '2.0', id: 2, method: 'tools/list' } }).reply;
      expect(kept.status).toBe(200);
      for (const session of sessions) session.drop();
    },
  );

  it(
    `gives one token at most ${maxSessionsPerToken} sessions (attack 10): past its share it gets capacity, another agent still gets in`,
    { timeout: 120_000 },
    async () => {
      const { f, token } = await fixture();
      const sessions: Array<Awaited<ReturnType<typeof liveSession>>> = [];
      for (let i = 0; i < maxSessionsPerToken; i++) sessions.push(await liveSession(f, token));
      cleanups.push(() => sessions.forEach((session) => session.drop()));
      const refused = await send(f, token, 'POST', { body: initialize }).reply;
      expect(refused.status).toBe(503);
      expect(JSON.parse(refused.body).error).toMatchObject({ data: { code: 'capacity' }, message: expect.stringContaining('its share') });
      expect(f.layer.mcp.sessionCount).toBe(maxSessionsPerToken);
      // Another agent, through the official SDK client, connects and works.
      const other = f.layer.pairAgent({ name: 'other' }).token;
      const client = await f.client(other);
      expect(await f.call(client, 'terminal_list')).toEqual({ terminals: [] });
      // The greedy token's own idle session makes room for its next one; nobody else's is taken.
      sessions[0]!.drop();
      const admitted = await waitFor(
        () => send(f, token, 'POST', { body: initialize }).reply,
        (reply) => reply.status === 200,
      );
      expect(admitted.status).toBe(200);
      expect(await f.call(client, 'terminal_list')).toEqual({ terminals: [] });
    },
  );

  it(`refuses a call beyond ${maxInflightPerSession} in flight on one session as busy, and answers again once they finish`, { timeout: 120_000 }, async () => {
    const { f, token } = await fixture();
    const session = await liveSession(f, token);
    cleanups.push(() => session.drop());
    const call = (id: number, name: string, args: object) =>
      send(f, token, 'POST', { session: session.id, body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } } });
    const opened = JSON.parse((await call(2, 'terminal_open', { title: 'bounded' }).reply).body).result.structuredContent;
    // The waits last until the test ends them (a command's end is their next event), not a bound
    // a loaded machine could reach before they all arrived.
    const waits = Array.from({ length: maxInflightPerSession }, (_, i) => call(100 + i, 'terminal_wait', { id: opened.id, waitMs: 55_000 }));
    // The waits reach the host one by one; once all are tracked, the next call is refused.
    const refused = await waitFor(
      () => call(3, 'terminal_list', {}).reply,
      (reply) => reply.status === 429,
    );
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error.data.code).toBe('busy');
    expect(await f.host.get(opened.id).session.send({ text: 'true' })).toMatchObject({ status: 'done' });
    const settled = await Promise.all(waits.map((wait) => wait.reply));
    expect(settled.every((reply) => reply.status === 200)).toBe(true);
    const after = await call(4, 'terminal_list', {}).reply;
    expect(JSON.parse(after.body).result.structuredContent.terminals).toHaveLength(1);
  });

  it(`forgets calls the agent cancelled: more than ${maxInflightPerSession} of them leave the next call answered`, { timeout: 120_000 }, async () => {
    const { f, token } = await fixture();
    const headers = { authorization: `Bearer ${token}`, 'x-tandem-cwd': encodeURIComponent(f.project) };
    const client = new Client({ name: 'bounded', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`), { requestInit: { headers } }));
    cleanups.push(() => client.close());
    const structured = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 })).structuredContent as Record<string, unknown>;
    const opened = await structured('terminal_open', { title: 'cancelled waits' });
    // Running until the test ends (a gate nobody opens), however long the cancelled waits take.
    const held = gate(f.project);
    cleanups.push(() => held.dispose());
    expect(await structured('terminal_send', { id: opened.id, text: `until [ -e ${held.path} ]; do sleep 0.05; done`, waitMs: 200 })).toMatchObject({
      status: 'running',
    });
    // MCP: a cancelled request gets no answer; it must still leave the session's books. (The
    // SDK's fetch sends a few of the cancellations only after other requests end; those waits
    // run their 3 s.)
    expect(await cancelledWaits(client, opened.id, { batches: 4, perBatch: 30, waitMs: 3_000, afterMs: 50 })).toEqual(new Set(['cancelled']));
    expect(await structured('terminal_wait', { id: opened.id, waitMs: 100 })).toMatchObject({ status: 'running' });
    // Nor does the SDK keep their POSTs once their waits are over: the GET stream is all it holds.
    await until(() => f.layer.mcp.heldStreams <= 1, 'the POSTs to be released');
    expect(f.layer.mcp.heldStreams).toBe(1);
  });
});

describe("the host's terminal slots (black-box round 13)", () => {
  it('an agent whose shells exited holds no slot another open needs: the oldest exited one is kept as a transcript instead', { timeout: 120_000 }, async () => {
    const f = await startAgentFixture({ defaultSandbox: 'off', host: { limits: { maxTerminals: 3 } } });
    cleanups.push(() => f.close());
    const hostile = await f.client(f.layer.pairAgent({ name: 'hostile' }).token);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { id } = (await f.call(hostile, 'terminal_open', { title: `t${i}`, shell: 'bash' })) as { id: string };
      await f.call(hostile, 'terminal_signal', { id, signal: 'SIGHUP' });
      await until(() => f.host.get(id).session.status === 'exited', 'the shell to exit');
      ids.push(id);
    }
    // The person's open and another agent's get a slot; a running terminal is never taken.
    const person = await f.host.create({ shell: 'bash' });
    const other = await f.client(f.layer.pairAgent({ name: 'other' }).token);
    const opened = (await f.call(other, 'terminal_open', { title: 'mine', shell: 'bash' })) as { id: string };
    expect(opened.id).toEqual(expect.any(String));
    expect(f.host.list().map((t) => t.id)).toEqual(expect.arrayContaining([person.id, opened.id, ids[2]]));
    expect(f.host.list().map((t) => t.id)).not.toContain(ids[0]);
    // The last exited one goes next; with every slot running, the limit holds.
    await f.host.create({ shell: 'bash' });
    expect(f.host.list().map((t) => t.id)).not.toContain(ids[2]);
    await expect(f.host.create({ shell: 'bash' })).rejects.toMatchObject({ code: 'capacity' });
    // The agent can still read what they showed: they are transcripts now.
    expect(f.host.roster().map((t) => t.id)).toEqual(expect.arrayContaining(ids));
  });
});
