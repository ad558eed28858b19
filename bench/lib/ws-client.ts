/**
 * A lean client of the UI WebSocket transport for figures: login (POST /session), the
 * `tandem.v1` handshake, calls, and output frames handed to a callback and acknowledged as
 * they arrive (a client that keeps up: by default with the renderer's own batching). Unlike the
 * tests' client it keeps nothing it receives.
 */
import WebSocket from 'ws';
import { decodeServerMessage } from '../../src/shared/frames.js';
import { AckBatcher } from '../../src/renderer/src/terminal/ack-batcher.js';

type OutputListener = (attachmentId: string, seq: number, data: string) => void;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export class BenchWsClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Every output frame, in order (set by the figure). */
  onOutput: OutputListener | null = null;
  /** Every other event (`attachmentClosed`, `roster`, …), for figures that watch them. */
  onEvent: ((event: string, payload: unknown) => void) | null = null;
  /**
   * How output is acknowledged: `renderer` as the UI does it (ack-batcher.ts: once
   * `ackEveryChars` arrived since the last ack, or 50 ms after the first unacknowledged frame), `frame` each
   * frame on arrival, `none` not at all.
   */
  ackPolicy: 'renderer' | 'frame' | 'none' = 'renderer';
  private readonly batchers = new Map<string, AckBatcher>();
  /** Failed acknowledgements (a figure that sees one has measured a broken stream). */
  ackErrors: string[] = [];
  closed: { code: number; reason: string } | null = null;
  /** Output characters and frames received so far (all attachments). */
  received = 0;
  frames = 0;

  private constructor(
    private readonly ws: WebSocket,
    /** The session secret: a reload opens /ws again with it, as the page keeps it in sessionStorage. */
    readonly secret: string,
  ) {
    ws.on('message', (raw, isBinary) => this.onMessage(isBinary ? (raw as Buffer) : String(raw)));
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      for (const waiter of this.pending.values()) waiter.reject(new Error(`the WebSocket closed (${code} ${reason.toString()})`));
      this.pending.clear();
    });
  }

  /** Trades the login token for a session secret and opens /ws with it. */
  static async connect(origin: string, login: string): Promise<BenchWsClient> {
    const response = await fetch(`${origin}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login }) });
    const body = (await response.json()) as { secret?: string };
    if (!response.ok || !body.secret) throw new Error(`POST /session: ${response.status} ${JSON.stringify(body)}`);
    return BenchWsClient.reconnect(origin, body.secret);
  }

  /** Opens /ws with a session secret already traded (what a reloaded page does). */
  static async reconnect(origin: string, secret: string): Promise<BenchWsClient> {
    const ws = new WebSocket(`${origin.replace(/^http/, 'ws')}/ws`, ['tandem.v1', `tandem.auth.${secret}`], { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`/ws refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
    return new BenchWsClient(ws, secret);
  }

  private onMessage(raw: string | Buffer): void {
    const message = decodeServerMessage(raw) as
      | { type: 'result'; id: number | null; ok: boolean; value?: unknown; error?: { code: string; message: string } }
      | { type: 'event'; event: string; payload: unknown };
    if (message.type === 'event') {
      if (message.event !== 'output') {
        this.onEvent?.(message.event, message.payload);
        return;
      }
      const { attachmentId, seq, data } = message.payload as { attachmentId: string; seq: number; data: string };
      this.received += data.length;
      this.frames += 1;
      if (this.ackPolicy === 'frame') this.ack(attachmentId, seq);
      else if (this.ackPolicy === 'renderer') this.batcher(attachmentId).applied(seq, data.length);
      this.onOutput?.(attachmentId, seq, data);
      return;
    }
    const waiter = message.id === null ? undefined : this.pending.get(message.id);
    if (!waiter) {
      if (!message.ok) this.ackErrors.push(message.error?.message ?? 'unknown error');
      return;
    }
    this.pending.delete(message.id!);
    if (message.ok) waiter.resolve(message.value);
    else waiter.reject(Object.assign(new Error(`${message.error?.code}: ${message.error?.message}`), { code: message.error?.code }));
  }

  call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`the WebSocket is closed (${this.closed.code} ${this.closed.reason})`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.ws.send(JSON.stringify({ type: 'call', id, op, args }));
    });
  }

  /** Fire-and-forget: the reply is only looked at when it is an error. */
  send(op: string, args: Record<string, unknown>): void {
    this.ws.send(JSON.stringify({ type: 'call', id: this.nextId++, op, args }));
  }

  private batcher(attachmentId: string): AckBatcher {
    let batcher = this.batchers.get(attachmentId);
    if (!batcher) {
      batcher = new AckBatcher((seq) => this.ack(attachmentId, seq));
      this.batchers.set(attachmentId, batcher);
    }
    return batcher;
  }

  ack(attachmentId: string, seq: number): void {
    this.send('ack', { attachmentId, seq });
  }

  /** Typed input to an attachment, without waiting for the (empty) reply. */
  type(attachmentId: string, data: string): void {
    this.send('input', { attachmentId, data, typed: true });
  }

  async close(): Promise<void> {
    for (const batcher of this.batchers.values()) batcher.cancel();
    if (this.closed) return;
    const done = new Promise<void>((resolve) => this.ws.once('close', () => resolve()));
    this.ws.close();
    const timer = setTimeout(() => this.ws.terminate(), 2000);
    await done;
    clearTimeout(timer);
  }
}

/** Resolves when `needle` shows in the output of `attachmentId` (across frame boundaries). */
export function waitForText(client: BenchWsClient, attachmentId: string, needle: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let tail = '';
    const previous = client.onOutput;
    const timer = setTimeout(() => {
      client.onOutput = previous;
      reject(new Error(`no ${JSON.stringify(needle)} in the output within ${timeoutMs} ms`));
    }, timeoutMs);
    client.onOutput = (id, seq, data) => {
      previous?.(id, seq, data);
      if (id !== attachmentId) return;
      // Only the seam between frames is joined (a joined frame would be copied to be searched).
      const keep = needle.length - 1;
      if ((tail + data.slice(0, keep)).includes(needle) || data.includes(needle)) {
        clearTimeout(timer);
        client.onOutput = previous;
        resolve();
        return;
      }
      tail = data.length >= keep ? data.slice(-keep) : (tail + data).slice(-keep);
    };
  });
}
