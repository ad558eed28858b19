// The MCP tools table (src/main/agent/mcp/tool-defs.ts): what `tools/list` tells clients is the
// public contract (agent-api.md), so it stays byte for byte what the fixture holds. The fixture
// was generated from `toolList()` before the tools became one table (issue 25); regenerate it
// only for a deliberate contract change, made in agent-api.md too:
//   node --import tsx -e "import('./src/main/agent/mcp/tool-defs.ts').then(m => process.stdout.write(JSON.stringify(m.toolList(), null, 2) + '\n'))" > tests/unit/fixtures/tool-list.json
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createMcpServer, runTool } from '../../src/main/agent/mcp/mcp-server.js';
import type { AgentService } from '../../src/main/agent/service/service.js';
import type { AgentConnection } from '../../src/main/agent/types.js';
import { type ToolName, toolNames, toolList, type ToolService } from '../../src/main/agent/mcp/tool-defs.js';

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
      expect(listed.tools.map((tool) => tool.name)).toEqual([
        'terminal_list',
        'terminal_open',
        'terminal_send',
        'terminal_wait',
        'terminal_read',
        'terminal_signal',
        'terminal_handoff',
        'terminal_close',
      ]);
      const tools = sent.flatMap((message) => ('result' in message && 'tools' in message.result ? [message.result.tools] : []));
      expect(tools).toHaveLength(1);
      expect(JSON.stringify(tools[0])).toBe(JSON.stringify(JSON.parse(fixture)));
    } finally {
      await client.close();
      await server.close();
    }
  });
});

/** A ToolService that records what each tool asked of it, in order, and answers with what it got. */
function recordingService(fail?: Error) {
  const calls: Array<{ method: string; connection: string; args?: unknown; signal?: AbortSignal; inside: string | null }> = [];
  let listeningOn: string | null = null;
  const record = (method: string) => (connection: string, args?: unknown, signal?: AbortSignal) => {
    calls.push({ method, connection, args, signal, inside: listeningOn });
    if (fail) throw fail;
    return Promise.resolve({ method, args });
  };
  const service: ToolService<string> = {
    listening: async (connection, id, run) => {
      calls.push({ method: 'listening', connection, args: id, inside: null });
      listeningOn = id;
      try {
        return await run();
      } finally {
        listeningOn = null;
      }
    },
    list: (connection) => (calls.push({ method: 'list', connection, inside: listeningOn }), { terminals: [] }),
    open: record('open'),
    send: record('send'),
    wait: record('wait'),
    read: record('read'),
    signal: record('signal'),
    handoff: record('handoff'),
    close: record('close'),
  };
  return { service, calls };
}

function structured(result: Awaited<ReturnType<typeof runTool>>): unknown {
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent;
}

describe('tools/call through the table', () => {
  const cases: Array<{ tool: ToolName; args: Record<string, unknown>; method: string; parsed?: unknown; listens: boolean }> = [
    { tool: 'terminal_list', args: {}, method: 'list', listens: false },
    { tool: 'terminal_open', args: { title: '  build  ', cols: 80 }, method: 'open', parsed: { title: 'build', cols: 80 }, listens: false },
    { tool: 'terminal_send', args: { id: 't1', text: 'ls', waitMs: 5 }, method: 'send', listens: true },
    { tool: 'terminal_wait', args: { id: 't2', since: 'c1' }, method: 'wait', listens: true },
    { tool: 'terminal_read', args: { id: 't3', offset: 2 }, method: 'read', listens: false },
    { tool: 'terminal_signal', args: { id: 't4', signal: 'SIGINT' }, method: 'signal', listens: false },
    {
      tool: 'terminal_handoff',
      args: { id: 't5', message: ' log in please ' },
      method: 'handoff',
      parsed: { id: 't5', message: 'log in please' },
      listens: true,
    },
    { tool: 'terminal_close', args: { id: 't6' }, method: 'close', listens: false },
  ];

  it('covers every tool of the table', () => {
    expect(cases.map((c) => c.tool).sort()).toEqual([...toolNames].sort());
  });

  for (const c of cases) {
    it(`${c.tool} runs ${c.method} with its parsed arguments${c.listens ? ', while the agent is shown listening' : ''}`, async () => {
      const { service, calls } = recordingService();
      const signal = new AbortController().signal;
      const result = await runTool(service, 'conn-1', c.tool, c.args, signal);
      expect(result.isError).toBeUndefined();
      const id = (c.args as { id?: string }).id;
      const expected = [
        ...(c.listens ? [{ method: 'listening', connection: 'conn-1', args: id, inside: null }] : []),
        {
          method: c.method,
          connection: 'conn-1',
          ...(c.method === 'list' ? {} : { args: c.parsed ?? c.args }),
          ...(['open', 'send', 'wait', 'signal', 'handoff'].includes(c.method) ? { signal } : {}),
          inside: c.listens ? id : null,
        },
      ];
      expect(calls).toEqual(expected);
      expect(structured(result)).toEqual(c.method === 'list' ? { terminals: [] } : { method: c.method, args: c.parsed ?? c.args });
    });
  }

  it('refuses a malformed call as invalid_argument naming the field, before the service hears of it', async () => {
    const { service, calls } = recordingService();
    for (const [tool, args, field] of [
      ['terminal_send', { id: 't1', waitMs: -1 }, 'waitMs'],
      ['terminal_open', { title: 'a\u202eb' }, 'title'],
      ['terminal_signal', { id: 't1', signal: 'SIGSEGV' }, 'signal'],
      ['terminal_close', { id: 't1', force: true }, 'force'],
      ['terminal_read', {}, 'id'],
    ] as const) {
      const result = await runTool(service, 'conn-1', tool, args);
      expect(result.isError).toBe(true);
      const error = (structured(result) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toContain(field);
    }
    expect(calls).toEqual([]);
  });

  it('refuses a name that is not a tool, and reports a failure inside the service as internal', async () => {
    const unknown = await runTool(recordingService().service, 'conn-1', 'terminal_launch', {});
    expect(structured(unknown)).toEqual({ error: { code: 'invalid_argument', message: 'name: "terminal_launch" is not a Tandem tool; call tools/list.' } });
    const failed = await runTool(recordingService(new TypeError('x is undefined')).service, 'conn-1', 'terminal_close', { id: 't1' });
    expect(failed.isError).toBe(true);
    expect((structured(failed) as { error: { code: string } }).error.code).toBe('internal');
  });

  it('AgentService is a ToolService of its own connections', () => {
    expectTypeOf<AgentService>().toExtend<ToolService<AgentConnection>>();
  });
});
