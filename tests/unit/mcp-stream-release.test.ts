import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { canReleaseStreams, heldStreams, releaseAnsweredStreams } from '../../src/main/agent/mcp/mcp-stream-release.js';
import { createMcpServer, toolResult } from '../../src/main/agent/mcp/mcp-server.js';

// The SDK's own server transport in JSON-response mode, as /mcp runs it, behind a real HTTP
// server and the SDK's own client; `release` is what McpHttpEndpoint does after each POST.
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(release: boolean, handler: (name: string) => Promise<void> = async () => undefined) {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => 'session', enableJsonResponse: true });
  const server = createMcpServer(async (name) => {
    await handler(name);
    return toolResult({ name });
  });
  await server.connect(transport);
  const http: HttpServer = createServer((req, res) => {
    void transport.handleRequest(req, res).then(() => {
      if (release && req.method === 'POST') releaseAnsweredStreams(transport);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const client = new Client({ name: 'release-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/`)));
  cleanups.push(async () => {
    await client.close();
    await server.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return { transport, client };
}

describe('releaseAnsweredStreams (SDK issue 2559 workaround)', () => {
  it('finds the fields it works on in the installed SDK', async () => {
    const { transport } = await serve(true);
    expect(canReleaseStreams(transport)).toBe(true);
  });

  it('keeps nothing per answered call, where the SDK alone keeps every one', async () => {
    const leaky = await serve(false);
    const released = await serve(true);
    for (let i = 0; i < 100; i++) {
      await leaky.client.callTool({ name: 'terminal_list', arguments: {} });
      await released.client.callTool({ name: 'terminal_list', arguments: {} });
    }
    // Both hold the client's GET stream. When the first fails, the SDK has fixed its JSON-mode
    // lifecycle and the workaround can go.
    expect(heldStreams(leaky.transport)).toBeGreaterThanOrEqual(101);
    expect(heldStreams(released.transport)).toBe(1);
  });

  it('never releases a call still in flight: it is answered after many others came and went', async () => {
    let finishSlow!: () => void;
    const slowGate = new Promise<void>((resolve) => (finishSlow = resolve));
    const { transport, client } = await serve(true, (name) => (name === 'terminal_wait' ? slowGate : Promise.resolve()));
    const slow = client.callTool({ name: 'terminal_wait', arguments: {} });
    for (let i = 0; i < 50; i++) await client.callTool({ name: 'terminal_list', arguments: {} });
    // The GET stream and the slow call.
    expect(heldStreams(transport)).toBe(2);
    finishSlow();
    expect((await slow).structuredContent).toEqual({ name: 'terminal_wait' });
  });
});
