/** MCP clients for figures (the official SDK): over HTTP with a bearer token, and through the stdio bridge. */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HostProcess } from './host.js';

/** The agents' project inside the bench's HOME: confined terminals open there without asking (a workspace of HOME would ask). */
export function benchProject(home: string): string {
  const project = join(home, 'project');
  mkdirSync(project, { recursive: true });
  return project;
}

export async function httpClient(host: HostProcess, token: string, project: string): Promise<Client> {
  const client = new Client({ name: 'tandem-bench', version: '1.0.0' });
  // Announces its project as the bridge does.
  const headers = { Authorization: `Bearer ${token}`, 'x-tandem-cwd': encodeURIComponent(project) };
  const transport = new StreamableHTTPClientTransport(new URL(`${host.info.origin}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

/** The built CLI the package's `tandem` command runs; the bridge is `tandem mcp`. */
export function builtCli(root: string): string {
  return join(root, 'out', 'main', 'cli.js');
}

/**
 * `node bin/tandem.js mcp --name NAME` with the host's TANDEM_HOME and the agent's token;
 * `onStderr` receives what the bridge writes there (warnings, for one).
 */
export async function bridgeClient(
  host: HostProcess,
  root: string,
  home: string,
  name: string,
  token: string,
  /** `instance`: a discovery file to use instead of the host's (TANDEM_INSTANCE). */
  opts: { onStderr?: (text: string) => void; instance?: string } = {},
): Promise<Client> {
  const profDir = process.env.BENCH_CPU_PROF_DIR;
  if (!existsSync(builtCli(root))) throw new Error(`${builtCli(root)} is missing: run \`npx electron-vite build\` first`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    // BENCH_CPU_PROF_DIR profiles the bridge too.
    args: [...(profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), join(root, 'bin', 'tandem.js'), 'mcp', '--name', name],
    cwd: benchProject(home),
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      TANDEM_HOME: host.tandemHome,
      TANDEM_TOKEN: token,
      ...(opts.instance ? { TANDEM_INSTANCE: opts.instance } : {}),
    },
    stderr: 'pipe',
  });
  if (opts.onStderr) (transport.stderr as NodeJS.ReadableStream | null)?.setEncoding('utf8').on('data', opts.onStderr);
  const client = new Client({ name: 'tandem-bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Calls a tool and returns its structured result; a tool error throws. */
export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
  const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(structured).slice(0, 200)}`);
  return structured;
}
