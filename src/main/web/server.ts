import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { DispatchOptions } from '../host/dispatch.js';
import type { TerminalHost } from '../host/host.js';
import { type AuthOptions, presentedSecret, UiAuth, offeredProtocols } from './auth.js';
import { wsProtocol } from '../../shared/wire.js';
import { tcpClientUids } from '../tcp-table.js';
import { challengeHeader, challengePattern, runProofLabel, sessionIdHeader, sessionIdLabel, sessionKeyLabel } from '../../shared/session-proof.js';
import { checkRequest, normalizeOrigin } from './origin.js';
import { readBody, sendJson } from './http.js';
import { commonHeaders, serveStatic } from './static.js';
import { closeCodes, defaultMaxBufferedBytes, serveWsConnection } from './ws-transport.js';

/** A handler the agent layer mounts on the same server (`/mcp`, `/pair`). Host and Origin are checked before it runs. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: { pathname: string; search: string }) => void | Promise<void>;

export interface WebServerOptions {
  host: TerminalHost;
  /** Passed to each UI connection's Dispatcher (the transport sets mintLink). */
  dispatch?: DispatchOptions;
  /** The built renderer (out/renderer); null in the desktop app, whose port serves agents only. */
  rendererDir: string | null;
  /** 0 (the default) picks a free port. The server always binds 127.0.0.1. */
  port?: number;
  /** Origins allowed besides the page's own (`--allow-origin`), as `scheme://host[:port]`. */
  allowOrigins?: readonly string[];
  /** Recognizes agent tokens (the agent layer's token store) so the UI transport can refuse them clearly. */
  isAgentToken?: (secret: string) => boolean;
  /** Largest WebSocket message accepted (default 1 MiB); larger ones close the connection with 1009. */
  maxPayload?: number;
  maxBufferedBytes?: number;
  heartbeatMs?: number;
  auth?: AuthOptions;
  /** Connections open at once (default `defaultMaxConnections`); past it a new one is closed as it comes. */
  maxConnections?: number;
}

export const defaultMaxPayload = 1024 * 1024;
/**
 * Connections open at once: a page holds a WebSocket and a few kept HTTP connections, an agent
 * over HTTP one or two; past it (a flood of idle connections) new ones are closed as they come,
 * so the process keeps descriptors for its terminals and its agents' socket.
 */
export const defaultMaxConnections = 512;
const maxSessionBody = 4096;
/** Proof keys kept (one per session issued; UiAuth keeps at most 1024 sessions). */
const maxProofKeys = 4096;

interface Route {
  prefix: string;
  handler: RouteHandler;
}

/**
 * The loopback HTTP server of `tandem serve`: the built UI, POST /session (login token to
 * session secret), the UI WebSocket at /ws, and routes the agent layer mounts (/mcp, /pair).
 * Every request first passes the Host and Origin rules of origin.ts.
 */
export class WebServer {
  readonly auth: UiAuth;
  /**
   * Random per start: named (header `X-Tandem-Instance`) only to a page that proved its session
   * or was proved to (never on a 401: anyone could read it and replay it after a crash).
   */
  readonly instanceId = randomBytes(12).toString('base64url');
  /**
   * Session id → proof key of every session this run issued (shared/session-proof.ts), so it can
   * prove to a page that it is the run that logged it in. Kept past a session's end (the page is
   * then told truly that this Tandem still runs); bounded like the sessions.
   */
  private readonly proofKeys = new Map<string, Buffer>();
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly routes: Route[] = [];
  private readonly allowOrigins: string[];
  private readonly maxPayload: number;
  private closing: Promise<void> | null = null;
  private boundPort = 0;

  private constructor(private readonly opts: WebServerOptions) {
    this.auth = new UiAuth(opts.auth);
    // A revoke ends the connections too, not only later handshakes (the page then asks for a login).
    this.auth.onRevoke(() => {
      // terminate, not close: a closing socket still delivers what its peer sends until the handshake ends.
      for (const client of this.wss.clients) client.terminate();
    });
    this.maxPayload = opts.maxPayload ?? defaultMaxPayload;
    this.allowOrigins = (opts.allowOrigins ?? []).map((origin) => {
      const normalized = normalizeOrigin(origin);
      if (!normalized) throw new Error(`--allow-origin ${origin} is not an origin (scheme://host[:port]).`);
      return normalized;
    });
    this.http = createServer((req, res) => {
      this.onRequest(req, res).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: { code: 'internal', message: `Tandem could not answer: ${(error as Error).message}` } });
        else res.destroy();
      });
    });
    keepIdleConnections(this.http);
    this.http.maxConnections = opts.maxConnections ?? defaultMaxConnections;
    // Only the person's own processes may speak to it: the kernel names the uid of the other end
    // of a loopback connection (Linux), and another user's is closed before a byte is read (a
    // black-box round held 20,000 idle connections as another user, and the process's descriptors
    // ran out for every agent and page). Elsewhere the bound above holds.
    const ownUid = process.getuid?.() ?? null;
    if (ownUid !== null) {
      // Looked up in a batch per loop turn, before the next turn reads any of them.
      let pending: Socket[] = [];
      this.http.on('connection', (socket: Socket) => {
        if (pending.push(socket) > 1) return;
        setImmediate(() => {
          const batch = pending;
          pending = [];
          const uids = tcpClientUids(batch);
          batch.forEach((each, index) => {
            const uid = uids[index];
            if (uid !== null && uid !== undefined && uid !== ownUid) each.destroy();
          });
        });
      });
    }
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: this.maxPayload,
      perMessageDeflate: false,
      clientTracking: true,
      // Never echo the secret-carrying protocol back.
      handleProtocols: (protocols) => (protocols.has(wsProtocol) ? wsProtocol : false),
    });
    this.http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.onUpgrade(req, socket, head));
    this.http.on('clientError', (_error, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    });
  }

  static async start(opts: WebServerOptions): Promise<WebServer> {
    const server = new WebServer(opts);
    await new Promise<void>((resolve, reject) => {
      server.http.once('error', reject);
      server.http.listen(opts.port ?? 0, '127.0.0.1', () => {
        server.http.off('error', reject);
        resolve();
      });
    });
    server.boundPort = (server.http.address() as AddressInfo).port;
    return server;
  }

  /** The port it listens on (127.0.0.1 only). */
  get port(): number {
    return this.boundPort;
  }

  /** `http://127.0.0.1:PORT` */
  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A fresh login URL to print: single use, 10 minutes (no reusable secret is ever printed). */
  loginUrl(): string {
    return `${this.origin}/#login=${this.auth.mint()}`;
  }

  /** A single-use login URL, addressed with `hostHeader` (the tab's own Host, e.g. a tunnel's port). */
  mintLoginUrl(hostHeader?: string): string {
    return `http://${hostHeader ?? `127.0.0.1:${this.port}`}/#login=${this.auth.mint()}`;
  }

  /** True for any UI credential (session secret or login token): the agent layer refuses these on /mcp. */
  isUiCredential(secret: string): boolean {
    return this.auth.isSession(secret) || this.auth.isLoginToken(secret);
  }

  /**
   * Mounts `handler` on `prefix` (the path itself and everything below it, e.g. `/mcp` and
   * `/mcp/...`). Host and Origin are checked before the handler runs. Returns an unmount.
   */
  route(prefix: string, handler: RouteHandler): () => void {
    if (!prefix.startsWith('/') || prefix.endsWith('/') || ['/ws', '/session', '/assets'].includes(prefix)) {
      throw new Error(`Cannot mount a route on "${prefix}".`);
    }
    const route = { prefix, handler };
    this.routes.push(route);
    this.routes.sort((a, b) => b.prefix.length - a.prefix.length);
    return () => {
      const index = this.routes.indexOf(route);
      if (index >= 0) this.routes.splice(index, 1);
    };
  }

  /** Connected UI sockets (tests and diagnostics). */
  get connections(): number {
    return this.wss.clients.size;
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      for (const client of this.wss.clients) client.close(closeCodes.goingAway, 'Tandem is shutting down.');
      this.http.close(() => resolve());
      // Sockets that do not finish their close handshake promptly are cut.
      setTimeout(() => {
        for (const client of this.wss.clients) client.terminate();
        this.http.closeAllConnections();
      }, 500).unref();
      this.http.closeIdleConnections();
    });
    return this.closing;
  }

  // ---- HTTP ---------------------------------------------------------------------------------

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const check = checkRequest({ host: req.headers.host, origin: req.headers.origin }, this.allowOrigins);
    if (!check.ok) {
      sendJson(res, check.status, { error: { code: 'forbidden', message: check.message } });
      return;
    }
    const url = splitUrl(req.url);
    if (!url) {
      sendJson(res, 400, { error: { code: 'invalid_argument', message: 'The request target must be a path.' } });
      return;
    }
    const route = this.routes.find((entry) => url.pathname === entry.prefix || url.pathname.startsWith(`${entry.prefix}/`));
    if (route) {
      await route.handler(req, res, url);
      return;
    }
    if (this.opts.rendererDir === null) {
      sendJson(res, 404, { error: { code: 'not_found', message: 'The desktop app serves agents here (/mcp, /pair); the browser UI is `tandem serve`.' } });
      return;
    }
    if (url.pathname === '/session') {
      this.allowCors(req, res);
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { ...commonHeaders, 'Cache-Control': 'no-store' });
        res.end();
        return;
      }
      await this.onSession(req, res);
      return;
    }
    if (url.pathname === '/ws') {
      sendJson(res, 426, { error: { code: 'invalid_argument', message: 'This is the WebSocket endpoint of the Tandem UI.' } }, { Upgrade: 'websocket' });
      return;
    }
    await serveStatic(this.opts.rendererDir, req, res, url.pathname, req.headers.host!);
  }

  /**
   * A page at an origin listed with --allow-origin (e.g. a UI dev server) may read /session
   * responses; the page's own origin needs no CORS, and no other origin gets this far.
   */
  private allowCors(req: IncomingMessage, res: ServerResponse): void {
    const origin = req.headers.origin;
    if (!origin || !this.allowOrigins.includes(origin.toLowerCase())) return;
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST');
    res.setHeader('Access-Control-Allow-Headers', `Content-Type, X-Tandem-Session, ${sessionIdHeader}, ${challengeHeader}`);
    res.setHeader('Access-Control-Expose-Headers', instanceHeader);
    res.setHeader('Access-Control-Max-Age', '600');
    res.setHeader('Vary', 'Origin');
  }

  /**
   * POST /session `{"login": "<token>"}` → `{"secret": "<session secret>"}`.
   * GET /session with `X-Tandem-Session: <secret>` → 204 when that secret is valid, else 401.
   * GET /session with `X-Tandem-Session-Id` and `X-Tandem-Challenge` (no secret) → 200
   * `{"proof"}` when this run issued that session (shared/session-proof.ts), else 401: a page
   * that lost its connection learns whether this is still its Tandem before it sends its secret.
   */
  private async onSession(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET') {
      const id = req.headers[sessionIdHeader.toLowerCase()];
      const challenge = req.headers[challengeHeader.toLowerCase()];
      if (typeof id === 'string' && typeof challenge === 'string') {
        const key = this.proofKeys.get(id);
        if (key && challengePattern.test(challenge)) {
          const proof = createHmac('sha256', key).update(`${runProofLabel}${challenge}`).digest('base64url');
          sendJson(res, 200, { proof }, { [instanceHeader]: this.instanceId });
        } else {
          sendJson(res, 401, { error: { code: 'forbidden', message: 'This run of Tandem did not log this page in.' } });
        }
        return;
      }
      const secret = req.headers['x-tandem-session'];
      if (typeof secret === 'string' && this.auth.isSession(secret)) {
        res.writeHead(204, { ...commonHeaders, 'Cache-Control': 'no-store', [instanceHeader]: this.instanceId });
        res.end();
      } else {
        sendJson(res, 401, { error: { code: 'forbidden', message: 'This page is not logged in; open the login link that tandem serve printed.' } });
      }
      return;
    }
    if (req.method !== 'POST') {
      sendJson(res, 405, { error: { code: 'invalid_argument', message: 'Use POST to log in.' } }, { Allow: 'GET, POST' });
      return;
    }
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      sendJson(res, 415, { error: { code: 'invalid_argument', message: 'Send the login as application/json.' } });
      return;
    }
    const body = await readBody(req, maxSessionBody);
    if (body === null) {
      sendJson(res, 413, { error: { code: 'input_too_large', message: 'The login request is too large.' } });
      return;
    }
    let login: unknown;
    try {
      login = (JSON.parse(body) as { login?: unknown } | null)?.login;
    } catch {
      sendJson(res, 400, { error: { code: 'invalid_argument', message: 'The login request is not valid JSON.' } });
      return;
    }
    const secret = this.auth.exchange(login);
    if (!secret) {
      sendJson(res, 401, {
        error: {
          code: 'forbidden',
          message:
            'This login link is not valid: each link works once, for 10 minutes. Get a new one from an open Tandem tab, or from tandem serve (kill -USR2 <its pid> prints one to its terminal).',
        },
      });
      return;
    }
    this.rememberProofKey(secret);
    sendJson(res, 200, { secret });
  }

  private rememberProofKey(secret: string): void {
    const id = createHash('sha256').update(`${sessionIdLabel}${secret}`).digest('base64url');
    this.proofKeys.set(id, createHash('sha256').update(`${sessionKeyLabel}${secret}`).digest());
    while (this.proofKeys.size > maxProofKeys) this.proofKeys.delete(this.proofKeys.keys().next().value!);
  }

  // ---- WebSocket ----------------------------------------------------------------------------

  private onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const check = checkRequest({ host: req.headers.host, origin: req.headers.origin }, this.allowOrigins);
    if (!check.ok) return refuseUpgrade(socket, check.status, 'forbidden', check.message);
    const url = splitUrl(req.url);
    if (!url || url.pathname !== '/ws' || this.opts.rendererDir === null) {
      return refuseUpgrade(socket, 404, 'not_found', 'There is no WebSocket endpoint here; the Tandem UI connects to /ws.');
    }
    const secret = presentedSecret(req.headers);
    if (secret && this.opts.isAgentToken?.(secret)) {
      return refuseUpgrade(socket, 403, 'forbidden', 'Agent tokens are not accepted by the UI transport; agents connect to /mcp.');
    }
    if (!secret || !this.auth.isSession(secret)) {
      return refuseUpgrade(socket, 401, 'forbidden', 'This connection has no valid session; open the login link that tandem serve printed.');
    }
    if (!offeredProtocols(req.headers['sec-websocket-protocol']).includes(wsProtocol)) {
      return refuseUpgrade(socket, 400, 'invalid_argument', `Offer the ${wsProtocol} subprotocol.`);
    }
    const hostHeader = req.headers.host!;
    this.wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      // Held while open: a tab left open is not idle; revoked in between, it goes at once.
      const release = this.auth.hold(secret);
      if (!release) {
        ws.terminate();
        return;
      }
      ws.once('close', release);
      serveWsConnection(ws, {
        host: this.opts.host,
        dispatch: this.opts.dispatch,
        mintLink: () => this.mintLoginUrl(hostHeader),
        maxBufferedBytes: this.opts.maxBufferedBytes ?? defaultMaxBufferedBytes,
        heartbeatMs: this.opts.heartbeatMs,
        maxPayload: this.maxPayload,
      });
    });
  }
}

function splitUrl(raw: string | undefined): { pathname: string; search: string } | null {
  if (!raw || !raw.startsWith('/')) return null;
  const q = raw.indexOf('?');
  return q < 0 ? { pathname: raw, search: '' } : { pathname: raw.slice(0, q), search: raw.slice(q) };
}

/** The header of GET /session that names this run of Tandem (WebServer.instanceId). */
export const instanceHeader = 'X-Tandem-Instance';

const statusText: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' };

/** Answers a refused upgrade with a plain HTTP response (JSON body naming the reason) and closes. */
function refuseUpgrade(socket: Socket, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  const headers = [
    `HTTP/1.1 ${status} ${statusText[status] ?? 'Error'}`,
    'Connection: close',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    ...Object.entries(commonHeaders).map(([name, value]) => `${name}: ${value}`),
  ];
  if (socket.writable) socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
  else socket.destroy();
}

/**
 * How long an idle keep-alive connection stays open (Node's default is 5 s). A client reusing a
 * connection just as the server closes it gets ECONNRESET for a request the server never read,
 * and fetch does not retry a POST (every MCP call is one): seen as `fetch failed` in loaded runs,
 * where a client's event loop lagged past its own 4 s margin. Clients take the `Keep-Alive:
 * timeout` hint less a second, so closes are rarer by the same factor.
 */
export const idleKeepAliveMs = 65_000;

export function keepIdleConnections(server: import('node:http').Server): void {
  server.keepAliveTimeout = idleKeepAliveMs;
  // Headers of a new request on a kept connection must be allowed at least as long.
  server.headersTimeout = idleKeepAliveMs + 1000;
}
