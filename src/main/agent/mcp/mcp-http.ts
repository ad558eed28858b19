import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ErrorCode } from '../../../shared/errors.js';
import { readBody, sendJson } from '../../web/http.js';
import { checkRequest } from '../../web/origin.js';
import { linkSignals, sourceController } from './linked-signal.js';
import { createMcpServer, runTool } from './mcp-server.js';
import { forgetRequest, heldStreams, releaseAnsweredStreams } from './mcp-stream-release.js';
import type { AgentService } from '../service/service.js';
import type { AgentConnection } from '../types.js';
import type { AgentIdentity } from '../pairing/tokens.js';

/** Headers the stdio bridge sets so the host knows the agent's project and its own terminal. */
export const bridgeHeaders = { cwd: 'x-tandem-cwd', terminalId: 'x-tandem-terminal-id', clientName: 'x-tandem-client-name' } as const;

export interface McpHttpOptions {
  allowOrigins?: readonly string[];
  /** UI session secrets are refused here, as agent tokens are on the UI transport. */
  isUiCredential?: (secret: string) => boolean;
  /** A request body larger than this is refused (bytes). */
  maxBodyBytes?: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  connection: AgentConnection;
  /** Open GET streams: while one is open, the agent is connected; when the last closes, it is gone. */
  streams: number;
  /** Aborted when the agent goes away: its calls release their queue slots. */
  gone: AbortController;
  /** In-flight requests by JSON-RPC id, aborted when their HTTP request is dropped or the agent cancels them. */
  inflight: Map<string | number, { controller: AbortController; res: ServerResponse }>;
  /**
   * Requests cancelled before they arrived: a request and its cancellation are separate POSTs
   * and may overtake each other. Such a request, when it comes, is not run. At most
   * maxInflightPerSession of them are remembered, the oldest forgotten first.
   */
  cancelledEarly: Set<string | number>;
  lastActivityAt: number;
}

function isRequest(body: unknown): boolean {
  const id = (body as { id?: unknown } | null)?.id;
  return Array.isArray(body) || typeof id === 'string' || typeof id === 'number';
}

/** A session with no open stream and no request for this long is over (its agent is gone). */
export const idleSessionMs = 10 * 60_000;
/**
 * At most this many sessions: a new one first ends the longest-idle session without an open
 * stream or a call in flight (a bridge that exited never says goodbye); if every one is live,
 * it is refused.
 */
export const maxSessions = 128;
/**
 * One token's share of the sessions (a quarter): past it a new session of that token first ends
 * that token's own longest-idle one without an open stream or a call in flight, else is refused
 * as `capacity`, so one agent cannot take every session from the others.
 */
export const maxSessionsPerToken = maxSessions / 4;
/** Calls in flight on one session at once; more are refused as `busy`. */
export const maxInflightPerSession = 64;

/** A refusal as a JSON-RPC error whose data carries the contract code. */
function refuse(res: ServerResponse, status: number, code: ErrorCode, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code: -32001, message, data: { code } }, id: null });
}

function bearer(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1]! : null;
}

function headerValue(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (typeof value !== 'string' || value.length === 0 || value.length > 4096) return null;
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/**
 * `/mcp`: MCP Streamable HTTP for paired agents. Every request needs a loopback Host, a
 * same-origin (or allowed) Origin when present, and the agent's bearer token; a session is
 * bound to the token that opened it, and revoking the token ends the session.
 */
export class McpHttpEndpoint {
  private readonly sessions = new Map<string, Session>();
  private readonly idleTimer: ReturnType<typeof setInterval>;
  /** Initialize requests under way: they count against the session cap before they register. */
  private opening = 0;
  private readonly openingBy = new Map<string, number>();

  constructor(
    private readonly service: AgentService,
    private readonly opts: McpHttpOptions = {},
  ) {
    this.idleTimer = setInterval(() => this.endIdle(), 60_000);
    this.idleTimer.unref();
    service.tokens.onRevoked(({ tokenHash }) => {
      for (const [id, session] of this.sessions) if (session.connection.identity.tokenHash === tokenHash) void this.end(id);
    });
  }

  /** Streams the SDK's transports hold across sessions (the leaks' window; see mcp-stream-release.ts). */
  get heldStreams(): number {
    let held = 0;
    for (const session of this.sessions.values()) held += heldStreams(session.transport);
    return held;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const check = checkRequest({ host: req.headers.host, origin: req.headers.origin }, this.opts.allowOrigins);
    if (!check.ok) return refuse(res, check.status, 'forbidden', check.message);
    const token = bearer(req);
    if (!token) return refuse(res, 401, 'forbidden', 'Missing Authorization: Bearer <token>; pair this agent in Tandem first.');
    if (this.opts.isUiCredential?.(token)) return refuse(res, 403, 'forbidden', 'UI credentials are not accepted on /mcp; use an agent token.');
    const identity = this.service.tokens.identify(token);
    if (!identity) return refuse(res, 401, 'forbidden', 'This token is not valid (revoked or never paired); pair the agent again.');

    const sessionId = req.headers['mcp-session-id'];
    let body: unknown;
    if (req.method === 'POST') {
      try {
        const text = await readBody(req, this.opts.maxBodyBytes ?? 1024 * 1024);
        if (text === null) throw new Error('too large');
        body = text ? JSON.parse(text) : undefined;
      } catch {
        return refuse(res, 413, 'input_too_large', 'The request body is too large or not JSON.');
      }
    }
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (!session) return refuse(res, 404, 'not_found', 'Unknown MCP session; initialize a new one.');
      if (session.connection.identity.tokenHash !== identity.tokenHash) return refuse(res, 403, 'forbidden', 'This MCP session belongs to another token.');
      // Requests only: a notification (a cancellation above all) frees slots rather than taking one.
      if (req.method === 'POST' && isRequest(body) && session.inflight.size >= maxInflightPerSession) {
        return refuse(res, 429, 'busy', `This session already has ${maxInflightPerSession} calls in flight; wait for some to finish.`);
      }
      if (!this.track(session, req, res, body)) return;
      await session.transport.handleRequest(req, res, body);
      // The SDK leaves each answered request's Response in the transport (see mcp-stream-release.ts).
      if (req.method === 'POST') releaseAnsweredStreams(session.transport);
      if (req.method === 'DELETE') await this.end(sessionId);
      return;
    }
    if (req.method !== 'POST') return refuse(res, 400, 'invalid_argument', 'Start with an initialize request (POST) before opening a stream.');
    if (!this.makeRoom(identity.tokenHash)) {
      return refuse(
        res,
        503,
        'capacity',
        `This agent already holds ${maxSessionsPerToken} live MCP sessions, its share of Tandem's ${maxSessions}; close some of its clients and try again.`,
      );
    }
    if (!this.makeRoom(null)) {
      return refuse(res, 503, 'capacity', `Tandem already serves ${maxSessions} live agent sessions; end one (close an agent) and try again.`);
    }
    this.opening += 1;
    this.openingBy.set(identity.tokenHash, (this.openingBy.get(identity.tokenHash) ?? 0) + 1);
    try {
      await this.open(identity, req, res, body);
    } finally {
      this.opening -= 1;
      const left = (this.openingBy.get(identity.tokenHash) ?? 1) - 1;
      if (left > 0) this.openingBy.set(identity.tokenHash, left);
      else this.openingBy.delete(identity.tokenHash);
    }
  }

  /**
   * Below the cap (counting sessions being opened), ending the longest-idle one with nothing open
   * if need be: the whole cap (`tokenHash` null), or one token's share among its own sessions.
   */
  private makeRoom(tokenHash: string | null): boolean {
    const mine = (session: Session) => tokenHash === null || session.connection.identity.tokenHash === tokenHash;
    const held =
      tokenHash === null ? this.sessions.size + this.opening : [...this.sessions.values()].filter(mine).length + (this.openingBy.get(tokenHash) ?? 0);
    if (held < (tokenHash === null ? maxSessions : maxSessionsPerToken)) return true;
    let idlest: [string, Session] | null = null;
    for (const entry of this.sessions) {
      const [, session] = entry;
      if (!mine(session) || session.streams > 0 || session.inflight.size > 0) continue;
      if (!idlest || session.lastActivityAt < idlest[1].lastActivityAt) idlest = entry;
    }
    if (!idlest) return false;
    // end() forgets the session at once; the SDK's close finishes on its own.
    void this.end(idlest[0]);
    return true;
  }

  /** Liveness: GET streams and dropped requests tell when the agent went away. */
  private endIdle(): void {
    const now = Date.now();
    for (const [id, session] of this.sessions) {
      if (session.streams === 0 && session.inflight.size === 0 && now - session.lastActivityAt > idleSessionMs) void this.end(id);
    }
  }

  /** Books the request; false when it was answered here (cancelled before it came) and must not run. */
  private track(session: Session, req: IncomingMessage, res: ServerResponse, body: unknown): boolean {
    session.lastActivityAt = Date.now();
    if (!this.service.isLive(session.connection.id)) {
      session.gone = sourceController(maxInflightPerSession);
      this.service.reconnect(session.connection);
    }
    if (req.method === 'GET') {
      session.streams += 1;
      res.on('close', () => {
        session.streams -= 1;
        if (session.streams === 0) {
          session.gone.abort(new Error('The agent disconnected.'));
          this.service.disconnect(session.connection.id);
        }
      });
      return true;
    }
    if (req.method !== 'POST') return true;
    this.forgetCancelled(session, body);
    const id = (body as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string' && typeof id !== 'number') return true;
    if (session.cancelledEarly.delete(id)) {
      res.writeHead(202).end();
      return false;
    }
    const controller = new AbortController();
    session.inflight.set(id, { controller, res });
    res.on('close', () => {
      session.inflight.delete(id);
      if (!res.writableFinished) controller.abort(new Error('The agent dropped the request.'));
    });
    return true;
  }

  /**
   * MCP answers no cancelled request, and the SDK then leaves that request's POST open and its
   * entries in the transport for the life of the session (the gap python-sdk closed in pull
   * request 3188; fastmcp's pull request 325 describes it in this SDK). Each one also held a
   * slot of the session's in-flight bound, so enough cancellations made every later call busy.
   * A cancellation of a call in flight here stops the call; if the SDK has taken it (and so will
   * not answer), it also frees the slot, ends its POST with an empty 202 (as python-sdk does)
   * and drops the SDK's entries. The notification then goes on to the SDK as usual.
   */
  private forgetCancelled(session: Session, body: unknown): void {
    const message = body as { method?: unknown; params?: { requestId?: unknown } } | null;
    if (message?.method !== 'notifications/cancelled') return;
    const requestId = message.params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const call = session.inflight.get(requestId);
    if (!call) {
      session.cancelledEarly.add(requestId);
      if (session.cancelledEarly.size > maxInflightPerSession) session.cancelledEarly.delete(session.cancelledEarly.values().next().value!);
      return;
    }
    call.controller.abort(new Error('The agent cancelled the call.'));
    // Not taken by the SDK yet (the two POSTs raced): the call runs aborted and is answered at once.
    if (!forgetRequest(session.transport, requestId)) return;
    session.inflight.delete(requestId);
    if (!call.res.headersSent) call.res.writeHead(202);
    call.res.end();
  }

  private async open(identity: AgentIdentity, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const connection = this.service.connect(identity, { cwd: headerValue(req, bridgeHeaders.cwd), ownTerminalId: headerValue(req, bridgeHeaders.terminalId) });
    let session: Session | null = null;
    const server = createMcpServer(async (name, args, signal, requestId) => {
      const signals = [signal];
      if (session) {
        signals.push(session.gone.signal);
        const dropped = session.inflight.get(requestId);
        if (dropped) signals.push(dropped.controller.signal);
      }
      const linked = linkSignals(signals);
      try {
        return await runTool(this.service, connection, name, args, linked.signal);
      } finally {
        linked.dispose();
      }
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomBytes(16).toString('base64url'),
      // Plain JSON replies to POSTs: no SSE framing per tool call (about 0.5 ms a call faster
      // than SSE replies here; the SDK's JSON-mode leak is released after each POST instead).
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        session = {
          transport,
          server,
          connection,
          streams: 0,
          gone: sourceController(maxInflightPerSession),
          inflight: new Map(),
          cancelledEarly: new Set(),
          lastActivityAt: Date.now(),
        };
        this.sessions.set(id, session);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      this.service.disconnect(connection.id);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    if (!transport.sessionId) {
      // Not an initialize request: nothing was kept.
      this.service.disconnect(connection.id);
      await server.close();
    }
  }

  private async end(sessionId: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    this.service.disconnect(session.connection.id);
    await session.server.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.idleTimer);
    await Promise.all([...this.sessions.keys()].map((id) => this.end(id)));
  }
}
