import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorCode } from '../../../shared/errors.js';
import { LineSplitter, trailingId } from '../mcp/line-splitter.js';
import { maxBridgeLineBytes } from '../mcp/mcp-socket.js';

/** A client line the bridge sends up as it is, instead of to its own server; true when taken. */
export type Divert = (message: Record<string, unknown>, line: string) => boolean;

function errorLine(id: string | number | null, rpcCode: number, code: ErrorCode, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code: rpcCode, message, data: { code } } });
}

function idOf(value: unknown): string | number | null {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * The bridge's stdio: newline-delimited JSON-RPC, as the SDK's stdio transport reads it, with
 * one difference: a line `divert` takes (a tool call, when Tandem has a bridge channel) never
 * reaches the bridge's own server and is not parsed beyond JSON, so it goes up byte for byte.
 * Lines are bounded like the channel's, so an oversize one fails here with a clear error.
 */
export class BridgeStdioTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly splitter: LineSplitter;
  private closed = false;
  private readonly onData = (chunk: Buffer) => this.splitter.push(chunk);
  private readonly onEnd = () => void this.close();

  constructor(
    private readonly divert: Divert,
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
  ) {
    this.splitter = new LineSplitter(
      maxBridgeLineBytes,
      (line) => this.receive(line),
      (tail) =>
        this.writeLine(
          errorLine(trailingId(tail), -32600, 'input_too_large', `A message longer than ${maxBridgeLineBytes} bytes was dropped; send smaller input.`),
        ),
    );
  }

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('end', this.onEnd);
  }

  private receive(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return this.writeLine(errorLine(null, -32700, 'invalid_argument', 'A line on stdin is not JSON; each line is one JSON-RPC message.'));
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && this.divert(value as Record<string, unknown>, line)) return;
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) return this.writeLine(errorLine(idOf(value), -32600, 'invalid_argument', 'A line on stdin is not a JSON-RPC 2.0 message.'));
    this.onmessage?.(parsed.data);
  }

  /** One line to the client, as it is (the host's answers) or serialized (the bridge's own). */
  writeLine(line: string): void {
    this.stdout.write(`${line}\n`);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.writeLine(JSON.stringify(message));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('end', this.onEnd);
    this.onclose?.();
  }
}
