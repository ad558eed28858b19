import { connect, type Socket } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ERROR_CODES, type ErrorCode, TandemError } from '../../../shared/errors.js';
import { systemClock, waitFor } from '../../clock.js';
import { LineSplitter, trailingId } from '../mcp/line-splitter.js';
import { bridgeHelloMethod, helloTimeoutMs, maxBridgeLineBytes } from '../mcp/mcp-socket.js';
import { toolError } from '../mcp/mcp-server.js';

export type RequestId = string | number;

/** Calls forwarded and not answered yet; past this the bridge answers `busy` itself. */
export const maxForwarded = 256;
/** The hello's own id: never forwarded to the client. */
const helloId = 'tandem-bridge-hello';

/** A JSON-RPC response line carrying a tool result, for an id the client is waiting on. */
export function resultLine(id: RequestId, result: CallToolResult): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

/** The channel could not be reached at all (no socket, refused): HTTP may still work. */
export class ChannelUnreachable extends Error {}

/**
 * The host's end closed after taking the hello and before answering it, with no refusal: a
 * Tandem exits so (a crash, a kill) and no live one does, since every refusal is an error line
 * and a shutdown answers `not_running` (mcp-socket.ts). The bridge looks for Tandem again once.
 */
export class ChannelClosedBeforeHello extends TandemError {
  constructor() {
    super('not_running', 'Tandem closed the bridge channel before answering it (it exited or restarted); call the tool again once Tandem runs.');
  }
}

function channelError(error: unknown): TandemError {
  const data = (error as { data?: { code?: unknown }; message?: unknown } | undefined) ?? {};
  const code = ERROR_CODES.includes(data.data?.code as ErrorCode) ? (data.data!.code as ErrorCode) : 'not_running';
  return new TandemError(code, typeof data.message === 'string' ? data.message : 'Tandem refused the bridge channel.');
}

/**
 * The bridge's end of the persistent channel (see mcp-socket.ts): after the hello, the client's
 * tool calls go up as the lines they arrived as, and the host's answers come back to the client
 * as they arrive. A channel that closes answers every call still open with `not_running`.
 */
export class BridgeChannel {
  private readonly forwarded = new Set<RequestId>();
  private closed = false;

  private constructor(
    private readonly socket: Socket,
    private readonly write: (line: string) => void,
  ) {}

  static async open(
    path: string,
    hello: { token: string; cwd: string; terminalId: string | null },
    write: (line: string) => void,
    onClose: (channel: BridgeChannel) => void,
  ): Promise<BridgeChannel> {
    const socket = connect(path);
    const channel = new BridgeChannel(socket, write);
    let greet!: { resolve: () => void; reject: (error: Error) => void };
    const greeted = new Promise<void>((resolve, reject) => (greet = { resolve, reject }));
    let open = false;
    const debug = process.env.TANDEM_DEBUG_BRIDGE === '1';
    let phase = 'connecting';
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (debug) process.stderr.write(`tandem bridge: channel error while ${phase}: ${error.code ?? ''} ${error.message}\n`);
      greet.reject(new ChannelUnreachable(error.message));
    });
    socket.on('connect', () => {
      phase = 'waiting for the hello answer';
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: helloId, method: bridgeHelloMethod, params: hello })}\n`);
    });
    socket.on('end', () => debug && process.stderr.write(`tandem bridge: the host ended the channel while ${phase}\n`));
    socket.on('close', () => {
      if (debug) process.stderr.write(`tandem bridge: channel closed while ${phase}\n`);
      greet.reject(new ChannelClosedBeforeHello());
      channel.lost();
      onClose(channel);
    });
    const splitter = new LineSplitter(
      // The host's answers are bounded by its output limits; this only guards against a runaway.
      maxBridgeLineBytes * 8,
      (line) => {
        if (open) return channel.answer(line);
        let reply: { result?: unknown; error?: unknown };
        try {
          reply = JSON.parse(line) as typeof reply;
        } catch {
          return greet.reject(new TandemError('not_running', 'Tandem answered the bridge with something that is not JSON.'));
        }
        if (reply.error || !reply.result) return greet.reject(channelError(reply.error));
        open = true;
        phase = 'open';
        greet.resolve();
      },
      () => socket.destroy(),
    );
    socket.on('data', (chunk: Buffer) => splitter.push(chunk));
    try {
      const outcome = await waitFor(systemClock, { ms: helloTimeoutMs, until: greeted });
      if (outcome.kind !== 'met') throw new TandemError('not_running', 'Tandem did not answer the bridge; call the tool again.');
      return channel;
    } catch (error) {
      socket.destroy();
      throw error;
    }
  }

  /** Whether a call of this id went up here (so its cancellation goes the same way). */
  owns(id: unknown): boolean {
    return (typeof id === 'string' || typeof id === 'number') && this.forwarded.has(id);
  }

  /** Sends one client line up unchanged; `id` is the request's, or null for a notification. */
  forward(line: string, id: RequestId | null): void {
    if (id !== null) {
      if (this.closed)
        return this.write(
          resultLine(id, toolError(new TandemError('not_running', 'The connection to Tandem was lost; call the tool again once Tandem runs.'))),
        );
      if (this.forwarded.size >= maxForwarded)
        return this.write(resultLine(id, toolError(new TandemError('busy', `${maxForwarded} calls are already waiting for Tandem; wait for some to finish.`))));
      this.forwarded.add(id);
    }
    this.socket.write(`${line}\n`);
  }

  /** Sends the client's cancellation of a call that went up here: MCP answers no cancelled call, so it is forgotten now. */
  cancel(line: string, id: RequestId): void {
    this.forwarded.delete(id);
    if (!this.closed) this.socket.write(`${line}\n`);
  }

  private answer(line: string): void {
    // The SDK writes a response's id last: read it there rather than parse a result of up to 256 KiB.
    let id: unknown = trailingId(line.slice(-128));
    if (id === null) {
      try {
        id = (JSON.parse(line) as { id?: unknown }).id;
      } catch {
        return;
      }
    }
    if (typeof id === 'string' || typeof id === 'number') this.forwarded.delete(id);
    this.write(line);
  }

  private lost(): void {
    if (this.closed) return;
    this.closed = true;
    const error = toolError(new TandemError('not_running', 'The connection to Tandem was lost; call the tool again once Tandem runs.'));
    for (const id of this.forwarded) this.write(resultLine(id, error));
    this.forwarded.clear();
  }

  close(): void {
    this.socket.destroy();
  }
}

/** What a pairing request on the channel comes to (mcp-socket.ts `bridgePairMethod`). */
export type PairingAnswer = { state: 'allowed'; token: string; persistent: boolean; name: string } | { state: 'denied' } | { state: 'expired' };

/**
 * A pairing request over the bridge channel: the host reads who asks from the kernel (the
 * socket's peer), and answers the request on this connection once the person decided. The
 * connection stays open while the request waits (closing it withdraws the request), so tool
 * calls meanwhile wait on `answer` for a moment and say `pairing_pending`.
 */
export class ChannelPairing {
  readonly answer: Promise<PairingAnswer>;
  private readonly socket: Socket;

  constructor(path: string, claim: { name: string; pid: number; exe: string; cwd: string }) {
    this.socket = connect(path);
    const socket = this.socket;
    let settle!: { resolve: (answer: PairingAnswer) => void; reject: (error: Error) => void };
    this.answer = new Promise<PairingAnswer>((resolve, reject) => (settle = { resolve, reject }));
    // Nobody may be awaiting yet: a refusal before the first tool call looks is not unhandled.
    this.answer.catch(() => undefined);
    socket.on('error', (error) => settle.reject(new ChannelUnreachable(error.message)));
    socket.on('close', () =>
      settle.reject(new TandemError('not_running', 'Tandem closed the pairing request’s connection (it exited or restarted); call the tool again.')),
    );
    socket.on('connect', () => socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'tandem-bridge-pair', method: 'tandem/pair', params: claim })}\n`));
    const splitter = new LineSplitter(
      64 * 1024,
      (line) => {
        let reply: { result?: PairingAnswer; error?: unknown };
        try {
          reply = JSON.parse(line) as typeof reply;
        } catch {
          return settle.reject(new TandemError('not_running', 'Tandem answered the pairing request with something that is not JSON.'));
        }
        if (reply.error || !reply.result) return settle.reject(channelError(reply.error));
        settle.resolve(reply.result);
      },
      () => socket.destroy(),
    );
    socket.on('data', (chunk: Buffer) => splitter.push(chunk));
  }

  close(): void {
    this.socket.destroy();
  }
}
