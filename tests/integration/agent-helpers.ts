import { keepIdleConnections } from '../../src/main/web/server.js';
import { createServer, type Server as HttpServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AgentLayer } from '../../src/main/agent/layer.js';
import { McpSocketEndpoint } from '../../src/main/agent/mcp/mcp-socket.js';
import { bridgeSocketPath } from '../../src/main/launch/socket-path.js';
import { bridgeHeaders } from '../../src/main/agent/mcp/mcp-http.js';
import { type HostOptions, TerminalHost } from '../../src/main/host/host.js';
import { InstanceLock } from '../../src/main/host/instance.js';
import { provePath, proveHandler } from '../../src/main/host/instance-proof.js';
import type { SandboxMode } from '../../src/main/sandbox/types.js';
import { sandboxAvailable } from './sandbox-helpers.js';

export interface AgentFixture {
  host: TerminalHost;
  layer: AgentLayer;
  url: string;
  home: string;
  stateDir: string;
  /** The fixture's private root: home and stateDir are inside it. */
  root: string;
  /** The stdio bridge's channel, published as `bridgeSocket` (with a tandemHome, unless `bridgeSocket: false`). */
  bridgeChannel: McpSocketEndpoint | null;
  /** An MCP client over HTTP with a bearer token (the official SDK). */
  /** The agents' project (inside home): clients announce it as the bridge does, so it is their default cwd. */
  project: string;
  /** An MCP client over HTTP with a bearer token (the official SDK), announcing `project` unless `headers` say otherwise. */
  client(token: string, headers?: Record<string, string>): Promise<Client>;
  call(client: Client, name: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A real host with the agent layer's real /mcp and /pair handlers on a loopback HTTP server. */
export async function startAgentFixture(
  opts: {
    trustLocalAgents?: boolean;
    unattendedGraceMs?: number;
    tandemHome?: string;
    defaultSandbox?: SandboxMode;
    trustedSandbox?: SandboxMode;
    procTier?: boolean;
    env?: Record<string, string>;
    agentStartupFiles?: 'user' | 'clean';
    bridgeSocket?: boolean;
    host?: Partial<HostOptions>;
  } = {},
): Promise<AgentFixture> {
  const root = mkdtempSync(join(tmpdir(), 'tandem-agent-'));
  const home = join(root, 'home');
  const stateDir = join(root, 'state');
  const { mkdirSync } = await import('node:fs');
  const project = join(home, 'project');
  mkdirSync(project, { recursive: true });
  const host = new TerminalHost({
    home,
    env: { ...process.env, HOME: home, ZDOTDIR: undefined, ...opts.env },
    agentStartupFiles: opts.agentStartupFiles ?? 'clean',
    procTier: opts.procTier,
    ...opts.host,
    // A hang bound, not the product's 30 s: on one busy core a shell's start takes longer (issue 22).
    limits: { startupTimeoutMs: 90_000, ...opts.host?.limits },
  });
  // New pairings are confined by default; where bubblewrap cannot run, the other suites run unconfined.
  const defaultSandbox = opts.defaultSandbox ?? (sandboxAvailable ? undefined : 'off');
  const layer = new AgentLayer(host, {
    stateDir,
    trustLocalAgents: opts.trustLocalAgents,
    unattendedGraceMs: opts.unattendedGraceMs,
    defaultSandbox,
    trustedSandbox: opts.trustedSandbox,
  });
  const routes = layer.routes();
  // Answered with the key publish() writes, as the runtime does (bridges send no token over TCP before it).
  let prove: ReturnType<typeof proveHandler> = async (_req, res) => void res.writeHead(404).end();
  const server: HttpServer = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === provePath) return void prove(req, res);
    const route = path === '/mcp' ? routes['/mcp'] : path.startsWith('/pair') ? routes['/pair'] : undefined;
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    route(req, res, path).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  keepIdleConnections(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const clients: Client[] = [];
  // With a TANDEM_HOME, publish instance.json there as the app does, so bridges find us.
  const lock = opts.tandemHome ? new InstanceLock({ ...process.env, TANDEM_HOME: opts.tandemHome }) : null;
  lock?.acquire();
  if (lock) prove = proveHandler(lock.instanceKey);
  // As an older host would, when told: no bridge channel, so bridges use mcpUrl.
  const socketAt = lock && opts.bridgeSocket !== false ? bridgeSocketPath(process.platform, lock.dir) : null;
  const bridgeChannel = socketAt
    ? await McpSocketEndpoint.listen(layer.service, { path: socketAt.path, ownDir: socketAt.dir === lock!.dir ? null : socketAt.dir, pairing: layer.pairing })
    : null;
  lock?.publish({
    pid: process.pid,
    version: host.version,
    mcpUrl: `${url}/mcp`,
    pairUrl: `${url}/pair`,
    ...(bridgeChannel ? { bridgeSocket: bridgeChannel.path } : {}),
  });
  return {
    host,
    layer,
    url,
    home,
    stateDir,
    root,
    bridgeChannel,
    project,
    async client(token, headers = {}) {
      const client = new Client({ name: 'test-agent', version: '1.0.0' });
      const announced = { Authorization: `Bearer ${token}`, [bridgeHeaders.cwd]: encodeURIComponent(project), ...headers };
      const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: announced } });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async call(client, name, args = {}) {
      // Longer than the fixture's 90 s startup bound, so a slow open answers with its own error.
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 100_000 });
      const structured = result.structuredContent as Record<string, unknown>;
      const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
      // Clients that show the model only `content` lose nothing.
      if (JSON.stringify(structured) !== text) throw new Error('content text differs from structuredContent');
      return result.isError ? { isError: true, ...structured } : structured;
    },
    async close() {
      await bridgeChannel?.close();
      lock?.release();
      await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
      await layer.close();
      await host.shutdown();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * `batches` rounds of `perBatch` terminal_wait calls on `id`, each cancelled by the SDK client
 * (notifications/cancelled) a moment after it went out; the outcome of every call ('cancelled'
 * unless one was answered first).
 */
export async function cancelledWaits(
  client: Client,
  id: unknown,
  opts: { batches: number; perBatch: number; waitMs: number; afterMs: number },
): Promise<Set<string>> {
  const outcomes = new Set<string>();
  for (let batch = 0; batch < opts.batches; batch++) {
    const aborts = Array.from({ length: opts.perBatch }, () => new AbortController());
    const calls = aborts.map((abort) =>
      client.callTool({ name: 'terminal_wait', arguments: { id, waitMs: opts.waitMs } }, undefined, { timeout: 70_000, signal: abort.signal }).then(
        () => 'answered',
        () => 'cancelled',
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, opts.afterMs));
    for (const abort of aborts) abort.abort();
    for (const outcome of await Promise.all(calls)) outcomes.add(outcome);
  }
  return outcomes;
}
