/** MCP clients for figures (the official SDK): over HTTP with a bearer token, and through the stdio bridge. */
import { type ChildProcess, spawn } from 'node:child_process';
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

/** Throws unless a terminal_send of `echo hi` came back done with its output. */
export function expectHi(result: Record<string, unknown>, path: string): void {
  if (result.status !== 'done' || result.output !== 'hi') throw new Error(`terminal_send echo hi (${path}): ${JSON.stringify(result).slice(0, 200)}`);
}

/** terminal_send `echo hi` through an SDK client; the milliseconds until its result. */
export async function timedEcho(client: Client, id: string): Promise<number> {
  const t0 = performance.now();
  const result = await callTool(client, 'terminal_send', { id, text: 'echo hi' });
  const elapsed = performance.now() - t0;
  expectHi(result, 'MCP');
  return elapsed;
}

/** Calls a tool and returns its structured result; a tool error throws. */
export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
  const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(structured).slice(0, 200)}`);
  return structured;
}

/**
 * The floor under the bridge: a bare Node relay process between a client and the host's bridge
 * channel (it says hello with the token, then copies bytes both ways and parses nothing). What
 * the bridge costs beyond this relay is its own; what an SDK client costs beyond raw JSON-RPC
 * lines over the same relay is the client's.
 */
function relayScript(socketPath: string, hello: Record<string, unknown>): string {
  return [
    `const s = require('node:net').connect(${JSON.stringify(socketPath)});`,
    `s.write(JSON.stringify({ jsonrpc: '2.0', id: 'relay-hello', method: 'tandem/hello', params: ${JSON.stringify(hello)} }) + '\\n');`,
    `let greeting = '';`,
    `const first = (d) => { greeting += d; const i = greeting.indexOf('\\n'); if (i < 0) return; s.off('data', first);`,
    `  if (!greeting.slice(0, i).includes('"result"')) { process.stderr.write(greeting.slice(0, i)); process.exit(1); }`,
    `  const rest = greeting.slice(i + 1); if (rest) process.stdout.write(rest); s.pipe(process.stdout); process.stdin.pipe(s); };`,
    `s.setEncoding('utf8'); s.on('data', first); s.on('close', () => process.exit(0));`,
  ].join('\n');
}

/** One relay process with raw JSON-RPC lines over its stdio: `call` is a tools/call, answered in order. */
export class RawRelayClient {
  private nextId = 1;
  private buffer = '';
  private readonly waiting = new Map<number, (message: Record<string, unknown>) => void>();

  private constructor(private readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let i = this.buffer.indexOf('\n'); i >= 0; i = this.buffer.indexOf('\n')) {
        const message = JSON.parse(this.buffer.slice(0, i)) as Record<string, unknown>;
        this.buffer = this.buffer.slice(i + 1);
        this.waiting.get(message.id as number)?.(message);
        this.waiting.delete(message.id as number);
      }
    });
  }

  static async start(socketPath: string, token: string, project: string): Promise<RawRelayClient> {
    const child = spawn(process.execPath, ['-e', relayScript(socketPath, { token, cwd: project })], { stdio: ['pipe', 'pipe', 'inherit'] });
    const client = new RawRelayClient(child);
    await client.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'tandem-bench-relay', version: '1.0.0' } });
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    return client;
  }

  request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  /** A tools/call; its structured result, or a throw for an error. */
  async call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const reply = await this.request('tools/call', { name, arguments: args });
    const result = reply.result as { structuredContent?: Record<string, unknown>; isError?: boolean } | undefined;
    if (!result || result.isError) throw new Error(`${name} over the relay: ${JSON.stringify(reply).slice(0, 200)}`);
    return result.structuredContent ?? {};
  }

  close(): void {
    this.child.kill();
  }
}

/** The official SDK client over the same bare relay (StdioClientTransport spawns it). */
export async function sdkRelayClient(socketPath: string, token: string, project: string): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: ['-e', relayScript(socketPath, { token, cwd: project })], stderr: 'inherit' });
  const client = new Client({ name: 'tandem-bench-sdk-relay', version: '1.0.0' });
  await client.connect(transport);
  return client;
}
