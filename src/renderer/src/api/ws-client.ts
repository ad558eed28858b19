/**
 * The contract over the UI WebSocket of `tandem serve` (runs in the page; no Node imports).
 * Calls carry a request id and resolve from the matching result; events go to listeners.
 * When the connection drops, pending calls fail with `not_running`, and the client reconnects
 * with backoff; after each reconnect it runs `onReconnect` so the UI can list and re-attach
 * (views do not survive a connection: the server detached them, the terminals kept running).
 */
import type { EventName, EventPayload, OpArgs, OpName, OpResult, TandemApi } from '../../../shared/contract';
import { decodeServerMessage } from '../../../shared/frames';
import { wsAuthPrefix, wsProtocol } from '../../../shared/wire';
import { TandemCallError } from './errors';
import type { SessionCheck } from './session';

export type ConnectionStatus = 'connecting' | 'connected' | 'reconnecting' | 'login_required' | 'closed';

/**
 * What the page knows about the Tandem it was connected to, once the connection dropped:
 * `same` (it answered again: its terminals kept running), `unreachable` (nothing answers yet:
 * nothing is known about the terminals), `stopped` (it said it was shutting down: its
 * terminals were closed) or `restarted` (another run of Tandem answers: the terminals of the
 * one this page knew ended with it).
 */
export type HostState = 'same' | 'unreachable' | 'stopped' | 'restarted';

/** The close code Tandem gives every page when it shuts down (src/main/web/ws-transport.ts, closeCodes.goingAway). */
const goingAway = 1001;

/** The part of the browser's WebSocket the client uses (the `ws` package's client matches it too). */
export interface WebSocketLike {
  readonly readyState: number;
  binaryType: 'blob' | 'arraybuffer' | string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: () => void): void;
}

export type WebSocketFactory = (url: string, protocols: string[]) => WebSocketLike;

export interface WsClientOptions {
  /** `ws://<host>/ws` */
  url: string;
  /** This tab's session secret. */
  secret: string;
  createSocket?: WebSocketFactory;
  /** Runs after every successful reconnect (not after the first connect). */
  onReconnect?: () => void | Promise<void>;
  onStatus?: (status: ConnectionStatus, detail?: string) => void;
  /** Asked after a failed connect: 'invalid' stops reconnecting with status login_required. Sends the secret. */
  checkSession?: () => Promise<SessionCheck>;
  /**
   * Asked before every reconnect, before the secret is sent: whether the server proves it is the
   * run that logged this page in (session.ts proveRun). Only `same` lets the page reconnect.
   */
  proveRun: () => Promise<'same' | 'other' | 'unreachable'>;
  /** What became known about the Tandem this page was connected to (see HostState). */
  onHost?: (state: HostState) => void;
  /** Error replies that belong to no call (a message the server could not parse). */
  onProtocolError?: (message: string) => void;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

const OPEN = 1;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export class WsClient implements TandemApi {
  readonly transport = 'websocket' as const;
  private socket: WebSocketLike | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<EventName, Set<(payload: unknown) => void>>();
  private closedByUs = false;
  private backoffMs: number;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private statusValue: ConnectionStatus = 'connecting';
  private host: HostState | null = null;

  private constructor(private readonly opts: WsClientOptions) {
    this.backoffMs = opts.initialBackoffMs ?? 250;
  }

  /** Connects; rejects with `forbidden` (log in again) or `not_running` when the first connection fails. */
  static async connect(opts: WsClientOptions): Promise<WsClient> {
    const client = new WsClient(opts);
    client.setStatus('connecting');
    const opened = await client.open();
    if (!opened) {
      const session = (await opts.checkSession?.())?.session ?? 'unreachable';
      client.closedByUs = true;
      if (session === 'invalid') {
        client.setStatus('login_required');
        throw new TandemCallError('forbidden', 'This page is no longer logged in (Tandem restarted?): open the link that `tandem serve` printed.');
      }
      client.setStatus('closed');
      throw new TandemCallError('not_running', 'Tandem is not reachable: is `tandem serve` still running?');
    }
    client.setStatus('connected');
    return client;
  }

  get status(): ConnectionStatus {
    return this.statusValue;
  }

  call<K extends OpName>(op: K, args: OpArgs<K>): Promise<OpResult<K>> {
    const socket = this.socket;
    if (!socket || socket.readyState !== OPEN) {
      return Promise.reject(new TandemCallError('not_running', 'Tandem is not connected right now; reconnecting.'));
    }
    const id = this.nextId++;
    return new Promise<OpResult<K>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        socket.send(JSON.stringify({ type: 'call', id, op, args }));
      } catch (error) {
        this.pending.delete(id);
        reject(new TandemCallError('not_running', `The message could not be sent: ${(error as Error).message}`));
      }
    });
  }

  on<K extends EventName>(event: K, listener: (payload: EventPayload<K>) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    const entry = listener as (payload: unknown) => void;
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }

  /** Closes for good (no reconnect). */
  close(): void {
    this.closedByUs = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.socket?.close(1000, 'closed by the page');
    this.failPending('The connection to Tandem was closed.');
    this.setStatus('closed');
  }

  // ---- connection ---------------------------------------------------------------------------

  /** Opens one socket; resolves true once open, false if it closed first. */
  private open(): Promise<boolean> {
    const create: WebSocketFactory = this.opts.createSocket ?? ((url, protocols) => new WebSocket(url, protocols));
    return new Promise<boolean>((resolve) => {
      let opened = false;
      let socket: WebSocketLike;
      try {
        socket = create(this.opts.url, [wsProtocol, `${wsAuthPrefix}${this.opts.secret}`]);
      } catch {
        resolve(false);
        return;
      }
      this.socket = socket;
      // Output frames arrive as binary messages (src/shared/frames.ts).
      socket.binaryType = 'arraybuffer';
      socket.addEventListener('open', () => {
        opened = true;
        resolve(true);
      });
      socket.addEventListener('message', (event) => this.onMessage(event.data));
      socket.addEventListener('error', () => undefined);
      socket.addEventListener('close', (event) => {
        if (this.socket === socket) this.socket = null;
        if (!opened) {
          resolve(false);
          return;
        }
        this.onDropped(event.code, event.reason);
      });
    });
  }

  private onDropped(code: number, reason: string): void {
    this.failPending(`The connection to Tandem was lost${reason ? ` (${reason})` : ''}.`);
    if (this.closedByUs) return;
    // Unknown until something answers: a dropped network and a crashed Tandem look the same here.
    this.setHost(code === goingAway ? 'stopped' : null);
    this.setStatus('reconnecting', reason || `code ${code}`);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closedByUs || this.reconnectTimer) return;
    const max = this.opts.maxBackoffMs ?? 5000;
    const delay = Math.min(this.backoffMs, max);
    this.backoffMs = Math.min(this.backoffMs * 2, max);
    // Jitter, so many tabs do not hammer a restarting server in step.
    this.reconnectTimer = setTimeout(
      () => {
        this.reconnectTimer = null;
        void this.reconnect();
      },
      delay * (0.75 + Math.random() * 0.5),
    );
  }

  private async reconnect(): Promise<void> {
    if (this.closedByUs) return;
    // A socket that opens proves nothing (after a crash anyone may listen on the port): first the
    // server proves it is the run that issued this page's secret, and only then gets the secret.
    const run = await this.opts.proveRun();
    if (this.closedByUs) return;
    if (run === 'unreachable') {
      if (this.host !== 'stopped') this.setHost('unreachable');
      this.scheduleReconnect();
      return;
    }
    if (run === 'other') {
      // Something answers that is not the run this page knew: that run and its terminals are gone.
      this.closedByUs = true;
      this.setHost('restarted');
      this.setStatus('login_required', 'Tandem restarted: open the link that `tandem serve` printed to log in to the new one.');
      return;
    }
    const opened = await this.open();
    if (this.closedByUs) {
      this.socket?.close(1000, 'closed by the page');
      return;
    }
    if (!opened) {
      const check = (await this.opts.checkSession?.()) ?? { session: 'unreachable' };
      if (check.session === 'invalid') {
        // The same run (it proved so) forgot this page's session: its terminals still run.
        this.closedByUs = true;
        this.setHost('same');
        this.setStatus(
          'login_required',
          'This page is no longer logged in; Tandem still runs (and its terminals with it): open the link that `tandem serve` printed.',
        );
        return;
      }
      if (check.session === 'unreachable' && this.host !== 'stopped') this.setHost('unreachable');
      this.scheduleReconnect();
      return;
    }
    this.backoffMs = this.opts.initialBackoffMs ?? 250;
    // The run that issued this page's secret proved itself, and took the secret: its terminals kept running.
    this.setHost('same');
    this.setStatus('connected');
    try {
      await this.opts.onReconnect?.();
    } catch (error) {
      console.error('Restoring the Tandem UI after a reconnect failed:', error);
    }
  }

  private setHost(state: HostState | null): void {
    if (state === this.host) return;
    this.host = state;
    if (state) this.opts.onHost?.(state);
  }

  private setStatus(status: ConnectionStatus, detail?: string): void {
    this.statusValue = status;
    this.opts.onStatus?.(status, detail);
  }

  private failPending(message: string): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const entry of pending) entry.reject(new TandemCallError('not_running', message));
  }

  private onMessage(data: unknown): void {
    const message = typeof data === 'string' || data instanceof ArrayBuffer ? decodeServerMessage(data) : null;
    if (!message) {
      this.opts.onProtocolError?.('Tandem sent a message that is neither JSON nor an output frame.');
      return;
    }
    if (message.type === 'event') {
      for (const listener of [...(this.listeners.get(message.event) ?? [])]) {
        try {
          listener(message.payload);
        } catch (error) {
          console.error(`A listener of the Tandem "${message.event}" event failed:`, error);
        }
      }
      return;
    }
    if (message.type !== 'result') return;
    if (message.id === null) {
      if (!message.ok) this.opts.onProtocolError?.(message.error.message);
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    if (message.ok) pending.resolve(message.value);
    else pending.reject(new TandemCallError(message.error.code, message.error.message));
  }
}
