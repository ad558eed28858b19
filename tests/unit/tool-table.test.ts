// The MCP tools table (src/main/agent/tool-defs.ts): what `tools/list` tells clients is the
// public contract (agent-api.md), so it stays byte for byte what the fixture holds. The fixture
// was generated from `toolList()` before the tools became one table (issue 25); regenerate it
// only for a deliberate contract change, and say so in the changelog:
//   node --import tsx -e "import('./src/main/agent/tool-defs.ts').then(m => process.stdout.write(JSON.stringify(m.toolList(), null, 2) + '\n'))" > tests/unit/fixtures/tool-list.json
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createMcpServer } from '../../src/main/agent/mcp-server.js';
import { toolList } from '../../src/main/agent/tool-defs.js';

const fixture = readFileSync(new URL('./fixtures/tool-list.json', import.meta.url), 'utf8');

describe('tools/list', () => {
  it('is byte for byte the listing the contract had before the table', () => {
    expect(`${JSON.stringify(toolList(), null, 2)}\n`).toBe(fixture);
  });

  it('goes out on the wire as that listing, to a real SDK client', async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const sent: JSONRPCMessage[] = [];
    const send = serverSide.send.bind(serverSide);
    serverSide.send = (message, options) => {
      sent.push(message);
      return send(message, options);
    };
    const server = createMcpServer(() => Promise.reject(new Error('no call in this test')));
    await server.connect(serverSide);
    const client = new Client({ name: 'tool-table-test', version: '1' });
    await client.connect(clientSide);
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name)).toEqual(['terminal_list', 'terminal_open', 'terminal_send', 'terminal_wait', 'terminal_read', 'terminal_signal', 'terminal_handoff', 'terminal_close']);
      const tools = sent.flatMap((message) => ('result' in message && 'tools' in message.result ? [message.result.tools] : []));
      expect(tools).toHaveLength(1);
      expect(JSON.stringify(tools[0])).toBe(JSON.stringify(JSON.parse(fixture)));
    } finally {
      await client.close();
      await server.close();
    }
  });
});
