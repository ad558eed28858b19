import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeIssue } from '../../../shared/contract.js';
import { TandemError } from '../../../shared/errors.js';
import { isToolName, type ToolArgs, toolList, type ToolName, tools, type ToolService } from './tool-defs.js';
import { tandemVersion } from '../../version.js';

export const serverInfo = { name: 'tandem', version: tandemVersion };

const instructions =
  'Tandem terminals are shared with the person at the computer: every terminal you open is a tab they see. ' +
  'terminal_send settles on the command’s own end (exit code, cwd) or reports waiting_input with evidence; ' +
  'if the person takes over you get human_handoff and should wait (terminal_wait) for them to hand back.';

/** Every result carries the whole object as text (for clients that show only `content`) and as structuredContent. */
export function toolResult(value: object): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
}

/** A thrown TandemError keeps its code; anything else is Tandem's own failure: `internal`. */
export function toolError(error: unknown): CallToolResult {
  const body =
    error instanceof TandemError
      ? error.toJSON()
      : { code: 'internal' as const, message: `Tandem failed inside this call (not its arguments): ${(error as Error)?.message ?? String(error)}` };
  return { ...toolResult({ error: body }), isError: true };
}

/** Parses arguments in the handler, so a malformed call reaches the agent as `invalid_argument`. */
function parseToolArgs<K extends ToolName>(name: K, args: unknown): ToolArgs<K> {
  const parsed = tools[name].args.safeParse(args ?? {});
  if (!parsed.success) throw new TandemError('invalid_argument', describeIssue(parsed.error));
  return parsed.data;
}

/** One call of the table's tool `name`: its handler gets the arguments its own schema parsed. */
async function runNamed<K extends ToolName, C>(
  name: K,
  service: ToolService<C>,
  connection: C,
  rawArgs: unknown,
  signal: AbortSignal | undefined,
): Promise<object> {
  return await tools[name].run(service, connection, parseToolArgs(name, rawArgs), signal);
}

/** Runs a `tools/call` on the agent layer (AgentService); every failure is a tool result with a contract code. */
export async function runTool<C>(service: ToolService<C>, connection: C, name: string, rawArgs: unknown, signal?: AbortSignal): Promise<CallToolResult> {
  try {
    if (!isToolName(name)) throw new TandemError('invalid_argument', `name: "${name.slice(0, 60)}" is not a Tandem tool; call tools/list.`);
    return toolResult(await runNamed(name, service, connection, rawArgs, signal));
  } catch (error) {
    return toolError(error);
  }
}

/** The low-level MCP server of one connection: tools/list and tools/call, validated by us. */
export function createMcpServer(handler: (name: string, args: unknown, signal: AbortSignal, requestId: string | number) => Promise<CallToolResult>): Server {
  const server = new Server(serverInfo, { capabilities: { tools: {} }, instructions });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList() }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => handler(request.params.name, request.params.arguments, extra.signal, extra.requestId));
  return server;
}
