import type { WebSocket } from 'ws';
import { clientMessageSchema, describeIssue, type EventName, type EventPayload, type ServerMessage } from '../../shared/contract.js';
import { type DispatchOptions, Dispatcher, newClientId, toWireError, type UiClient } from '../host/dispatch.js';
import type { TerminalHost } from '../host/host.js';
import { encodeOutputFrame } from './output-frame.js';
import { EventGate } from './event-gate.js';

export interface WsTransportOptions {
  host: TerminalHost;
  /** Passed to each connection's Dispatcher (mintLink is set by the transport). */
  dispatch?: DispatchOptions;
  /** A fresh login link for another tab, addressed like this connection (its Host header). */
  mintLink: () => string;
  /**
   * A socket whose unsent bytes exceed this is closed (default 16 MiB). Output is already
   * bounded by the host's acknowledgement-based flow control; this only catches a client that
   * stopped reading the socket altogether.
   */
  maxBufferedBytes?: number;
  /** Ping interval; a peer that misses one pong is dropped (default 30 s, 0 disables). */
  heartbeatMs?: number;
  /** The server's maxPayload, named in the reason of a 1009 close. */
  maxPayload: number;
}

export const defaultMaxBufferedBytes = 16 * 1024 * 1024;

/** Close codes and reasons of the UI WebSocket. */
export const closeCodes = {
  /** ws closes oversized messages with 1009 itself; this is the reason it is given. */
  tooBig: 1009,
  /** The client stopped reading: too much output is waiting in the socket. */
  overloaded: 1013,
  goingAway: 1001,
} as const;

export function tooBigReason(maxPayload: number): string {
  return `Message larger than ${Math.round(maxPayload / 1024)} KiB; Tandem closed the connection.`;
}

/**
 * One UI client over one WebSocket: `{type:'call', id, op, args}` in, `{type:'result', ...}`
 * and `{type:'event', ...}` out. Malformed messages get a typed `invalid_argument` reply (id
 * null when the message has none) and the connection stays up. Closing the socket detaches
 * the client's views; it never stops a process.
 */
export function serveWsConnection(ws: WebSocket, opts: WsTransportOptions): { client: UiClient; dispatcher: Dispatcher } {
  const maxBuffered = opts.maxBufferedBytes ?? defaultMaxBufferedBytes;
  let open = true;
  let disposed = false;

  const write = (message: ServerMessage | Uint8Array): void => {
    if (!open || ws.readyState !== ws.OPEN) return;
    let text: string | Uint8Array;
    try {
      text = message instanceof Uint8Array ? message : JSON.stringify(message);
    } catch (error) {
      // A result that cannot be written (too deep for JSON) still answers its call.
      if (message instanceof Uint8Array || message.type !== 'result') return;
      text = JSON.stringify({
        type: 'result',
        id: message.id,
        ok: false,
        error: { code: 'internal', message: `The answer could not be sent: ${(error as Error).message}` },
      });
    }
    ws.send(text);
    if (ws.bufferedAmount > maxBuffered) {
      open = false;
      ws.close(closeCodes.overloaded, 'The page stopped reading its connection; reconnecting restores the screen.');
      // The close frame waits behind the unread bytes; do not wait for it forever.
      setTimeout(() => ws.terminate(), 2000).unref();
    }
  };

  // Output goes through sendOutput as binary frames; every other event is JSON.
  const gate = new EventGate((event, payload) => write({ type: 'event', event, payload }));
  const client: UiClient = {
    id: newClientId(),
    send<K extends EventName>(event: K, payload: EventPayload<K>): void {
      gate.send(event, payload);
    },
    sendOutput(attachmentId, seq, data, marks) {
      gate.run('output', () => write(encodeOutputFrame(attachmentId, seq, data, marks)));
    },
  };
  const dispatcher = new Dispatcher(opts.host, client, { ...opts.dispatch, mintLink: opts.mintLink });

  const fail = (id: number | null, message: string): void => {
    write({ type: 'result', id, ok: false, error: { code: 'invalid_argument', message } });
  };

  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      fail(null, 'Tandem expects JSON text messages, not binary ones.');
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(textOf(data));
    } catch {
      fail(null, 'The message is not valid JSON.');
      return;
    }
    const message = clientMessageSchema.safeParse(parsed);
    if (!message.success) {
      const rawId = (parsed as { id?: unknown } | null)?.id;
      fail(typeof rawId === 'number' && Number.isInteger(rawId) && rawId >= 0 ? rawId : null, describeIssue(message.error));
      return;
    }
    const { id, op, args } = message.data;
    const release = op === 'attach' && dispatcher.holdsAttach(args) ? gate.hold() : null;
    dispatcher
      .call(op, args)
      .then(
        (value) => {
          // An attach that finished after the client left would leave an orphan view
          // holding input: detach it.
          if (disposed && op === 'attach') opts.host.detach((value as { attachmentId: string }).attachmentId);
          else write({ type: 'result', id, ok: true, value });
        },
        (error: unknown) => write({ type: 'result', id, ok: false, error: toWireError(error) }),
      )
      .finally(() => release?.());
  });

  // ws closes oversized frames with 1009 but no reason: give the peer one.
  const close = ws.close.bind(ws);
  ws.close = (code?: number, reason?: string | Buffer) => close(code, reason ?? (code === closeCodes.tooBig ? tooBigReason(opts.maxPayload) : undefined));

  let alive = true;
  const heartbeatMs = opts.heartbeatMs ?? 30_000;
  const heartbeat =
    heartbeatMs > 0
      ? setInterval(() => {
          if (ws.readyState !== ws.OPEN) return;
          if (!alive) {
            ws.terminate();
            return;
          }
          alive = false;
          ws.ping();
        }, heartbeatMs)
      : null;
  heartbeat?.unref();
  ws.on('pong', () => {
    alive = true;
  });

  // Errors (a protocol violation, an oversized frame) are followed by close; nothing to add.
  ws.on('error', () => undefined);
  ws.on('close', () => {
    open = false;
    disposed = true;
    if (heartbeat) clearInterval(heartbeat);
    gate.clear();
    dispatcher.dispose();
  });

  return { client, dispatcher };
}

function textOf(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
