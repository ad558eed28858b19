import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentLayer } from '../../../src/main/agent/layer';
import { bridgeHeaders } from '../../../src/main/agent/mcp/mcp-http';
import { startServe as startServeInProcess } from '../../../src/main/cli';
import type { TerminalHost } from '../../../src/main/host/host';
import type { WebServer } from '../../../src/main/web/server';
import { missingBuild, projectRoot, serveEnv } from './serve';

export interface InProcessServe {
  origin: string;
  /** A fresh one-time login link at each read. */
  readonly loginUrl: string;
  /** The host itself, for what the UI cannot do (open an agent's terminal without an agent). */
  host: TerminalHost;
  /** The agent layer: pairing requests, approvals and handoffs as agents raise them. */
  agents: AgentLayer;
  server: WebServer;
  /** An agent's project inside the person's home: its terminals open there without asking. */
  project: string;
  /** Headers of an MCP client with `token` that announces `project`, as the stdio bridge does. */
  agentHeaders(token: string): Record<string, string>;
  stop(): Promise<void>;
}

/**
 * `tandem serve` started in this process (the same startServe the CLI runs, serving the built
 * UI), for tests that need the host directly.
 */
export async function startInProcessServe(rendererDir = join(projectRoot, 'out/renderer')): Promise<InProcessServe> {
  const missing = missingBuild();
  if (missing) throw new Error(missing);
  const home = mkdtempSync(join(tmpdir(), 'tandem-ui-e2e-'));
  const io = { out: () => undefined, err: () => undefined, env: serveEnv(home) };
  const project = join(io.env.HOME!, 'project');
  mkdirSync(project, { recursive: true });
  const running = await startServeInProcess({ port: 0, allowOrigins: [], trustLocalAgents: false }, io, rendererDir);
  return {
    origin: running.server.origin,
    // Every read is a fresh link: each works once.
    get loginUrl() {
      return running.server.loginUrl();
    },
    host: running.host,
    agents: running.agents,
    server: running.server,
    project,
    agentHeaders: (token) => ({ Authorization: `Bearer ${token}`, [bridgeHeaders.cwd]: encodeURIComponent(project) }),
    stop: async () => {
      await running.stop();
      rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    },
  };
}

/** Cuts every UI WebSocket as a network failure would (the server's socket set is private). */
export function dropUiConnections(server: WebServer): void {
  const wss = (server as unknown as { wss: { clients: Set<{ terminate(): void }> } }).wss;
  for (const client of wss.clients) client.terminate();
}
