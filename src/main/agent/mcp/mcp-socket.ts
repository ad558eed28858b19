import { execFile } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { type ErrorCode, TandemError } from '../../../shared/errors.js';
import { type Clock, systemClock } from '../../clock.js';
import { LineSplitter, trailingId } from './line-splitter.js';
import { linkSignals, sourceController } from './linked-signal.js';
import { maxInflightPerSession } from './mcp-http.js';
import { createMcpServer, runTool, toolError } from './mcp-server.js';
import type { AgentService } from '../service/service.js';
import type { AgentConnection } from '../types.js';
import type { AgentIdentity } from '../pairing/tokens.js';
import { type PairingBroker, pairingClaimSchema } from '../pairing/pairing.js';
import { namedPipePeer, type PeerFacts, unixSocketPeer } from '../pairing/peer.js';
import { describeIssue } from '../../../shared/contract.js';
import { staleShortSocketDirs } from '../../launch/socket-path.js';

/** The first line on the channel: `{ token, cwd?, terminalId? }` as a JSON-RPC request. */
export const bridgeHelloMethod = 'tandem/hello';
/**
 * Or, for a bridge without a token, a pairing request `{ name, pid, exe, cwd }` (claims): the
 * host reads who asks from the kernel, and answers this request once the person decided (the
 * result is the outcome: `allowed` with the token, `denied`, `expired`). Another `tandem/pair`
 * on the same connection replaces the waiting one; closing the connection withdraws it.
 */
export const bridgePairMethod = 'tandem/pair';
/** One message on the channel, either way, at most (bytes; the same bound as a `/mcp` body). */
export const maxBridgeLineBytes = 1024 * 1024;
/** Bridge sessions at once; a bridge that exits closes its socket, so each one is live. */
export const maxBridgeSessions = 128;
/** One token's share of the bridge sessions (a quarter), so one agent cannot take them all. */
export const maxBridgeSessionsPerToken = maxBridgeSessions / 4;
/** Pairing connections open at once (each holds at most one waiting request). */
export const maxPairingConnections = 64;
/** Requests a pairing connection may send while the kernel is asked who it is; one more ends it (capacity). */
export const maxQueuedBeforePeer = 4;
/** Connections that have not said hello yet, at once, and how long each may take. */
export const maxPendingHellos = 32;
export const helloTimeoutMs = 5000;
/** Replies a bridge has not read yet; past this it is not reading and is dropped (bytes). */
export const maxUnsentBytes = 16 * 1024 * 1024;
/** The answer to a bridge that says hello while Tandem shuts down (code not_running). */
/** How long close() lets a connection's last line drain to a peer that does not read before ending it. */
export const closeFlushMs = 1000;
export const shuttingDownMessage = 'Tandem is shutting down; its terminals are closing. Call the tool again once Tandem runs again.';
/** A contract error on the channel: JSON-RPC server error, the contract's code in `data.code`. */
export const channelErrorCode = -32001;

export interface McpSocketOptions {
  path: string;
  /** A directory of the socket's own (the short one) to create 0700 and remove; null when it lives in the discovery directory or is a pipe. */
  ownDir: string | null;
  isUiCredential?: (secret: string) => boolean;
  clock?: Clock;
  /** Pairing requests on the channel go here; without it `tandem/pair` is refused. */
  pairing?: PairingBroker;
  /** Who is at the other end of a connection (default: peer.ts, the kernel's view of the platform). */
  identifyPeer?: (socket: Socket) => Promise<PeerFacts>;
}

interface Session {
  socket: Socket;
  connection: AgentConnection;
  server: Server;
  transport: LineTransport;
  /** Aborted when the bridge goes away: its calls release their queue slots. */
  gone: AbortController;
  /** Requests not answered yet, by JSON-RPC id: the server's, and the tool calls run here. */
  inflight: Set<string | number>;
  /** Tool calls run here (not by the SDK server), each with its cancellation. */
  calls: Map<string | number, AbortController>;
}

type Id = string | number | null;

/** With TANDEM_DEBUG_BRIDGE=1, why each channel closed goes to stderr (the bridge logs its side too). */
function debug(text: string): void {
  if (process.env.TANDEM_DEBUG_BRIDGE === '1') process.stderr.write(`tandem host: ${text}\n`);
}

function errorLine(id: Id, rpcCode: number, code: ErrorCode, message: string): string {
  return `${JSON.stringify({ jsonrpc: '2.0', id, error: { code: rpcCode, message, data: { code } } })}\n`;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 && value.length <= 4096 ? value : null;
}

function requestId(message: Record<string, unknown>): Id {
  return typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
}

/** The SDK server's side of one bridge connection: newline-delimited JSON-RPC, as stdio MCP. */
class LineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(
    private readonly write: (line: string) => void,
    private readonly answered: (id: string | number) => void,
    private readonly end: () => void,
  ) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if ('id' in message && ('result' in message || 'error' in message)) this.answered(message.id as string | number);
    this.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    this.end();
  }
}

/**
 * The stdio bridge's persistent channel: a Unix-domain socket (0600, in a 0700 directory) or a
 * named pipe. A connection opens with `tandem/hello` and the agent's token (the same check as
 * `/mcp`); then its lines go unchanged to an MCP server kept for that connection, so a tool
 * call costs one line each way. Closing the socket ends the session and aborts its calls.
 */
export class McpSocketEndpoint {
  private readonly sessions = new Set<Session>();
  private pendingHellos = 0;
  /** Set by close(): connections still saying hello are told Tandem is shutting down. */
  private closing = false;
  private readonly shuttingDown = new Set<() => void>();
  /**
   * Every accepted connection until it closes, with what it is now. close() ends each one
   * itself: a refused connection is only half-closed by `end()` and stayed open (and the
   * server's close() waited on it) for as long as its peer kept its end (issue 22).
   */
  private readonly connections = new Map<Socket, 'hello' | 'refused' | 'pairing' | 'session'>();
  private readonly clock: Clock;

  private constructor(
    private readonly net: NetServer,
    private readonly service: AgentService,
    private readonly opts: McpSocketOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    net.on('connection', (socket) => this.accept(socket));
    service.tokens.onRevoked(({ tokenHash }) => {
      for (const session of this.sessions) if (session.connection.identity.tokenHash === tokenHash) session.socket.destroy();
    });
  }

  static async listen(service: AgentService, opts: McpSocketOptions): Promise<McpSocketEndpoint> {
    if (process.platform !== 'win32') {
      if (opts.ownDir) {
        // The instance lock is held: another short directory of this discovery directory is a crashed instance's.
        for (const stale of staleShortSocketDirs(opts.ownDir)) rmSync(stale, { recursive: true, force: true });
        ensurePrivateDir(opts.ownDir);
      }
      // The instance lock is held: a socket file left here is a crashed instance's.
      rmSync(opts.path, { force: true });
    }
    const net = createServer();
    await new Promise<void>((resolve, reject) => {
      net.once('error', reject);
      net.listen(opts.path, () => {
        net.off('error', reject);
        resolve();
      });
    });
    if (process.platform !== 'win32') chmodSync(opts.path, 0o600);
    // Pairing now goes over this channel, which proves who asks; /pair over TCP refuses it.
    if (opts.pairing) opts.pairing.channelPath = opts.path;
    return new McpSocketEndpoint(net, service, opts);
  }

  get path(): string {
    return this.opts.path;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Connections that have not said hello yet. */
  get pendingHelloCount(): number {
    return this.pendingHellos;
  }

  private accept(socket: Socket): void {
    socket.on('error', () => undefined);
    this.connections.set(socket, 'hello');
    socket.once('close', () => this.connections.delete(socket));
    if (this.closing) {
      debug('refused a bridge connection: shutting down');
      this.refuse(socket, errorLine(null, channelErrorCode, 'not_running', shuttingDownMessage));
      return;
    }
    if (this.pendingHellos >= maxPendingHellos) {
      debug(`refused a bridge connection: ${maxPendingHellos} hellos pending`);
      this.refuse(socket, errorLine(null, channelErrorCode, 'capacity', 'Too many bridge connections are starting at once; try again.'));
      return;
    }
    this.pendingHellos += 1;
    let said = false;
    // A shutdown answers a bridge still saying hello (it would otherwise wait out helloTimeoutMs,
    // or get a session on a closing host): the same answer as a connection that arrives then.
    const onShutdown = () => refuse(null, 'not_running', shuttingDownMessage);
    this.shuttingDown.add(onShutdown);
    const timer = this.clock.setTimeout(
      () => refuse(null, 'forbidden', `No ${bridgeHelloMethod} within ${helloTimeoutMs} ms; the bridge channel starts with the agent's token.`),
      helloTimeoutMs,
    );
    const settle = () => {
      if (said) return false;
      said = true;
      this.shuttingDown.delete(onShutdown);
      this.pendingHellos -= 1;
      this.clock.clearTimeout(timer);
      return true;
    };
    const refuse = (id: Id, code: ErrorCode, message: string) => {
      debug(`refused a bridge before its hello: ${code} ${message}`);
      if (settle()) this.refuse(socket, errorLine(id, channelErrorCode, code, message));
    };
    socket.once('close', () => {
      if (settle()) debug('a bridge connection closed before its hello');
    });
    let session: Session | null = null;
    /** Set once the connection is a pairing request: its later lines go here. */
    let pairLine: ((message: Record<string, unknown>) => void) | null = null;
    const splitter = new LineSplitter(
      maxBridgeLineBytes,
      (line) => {
        if (session) return this.receive(session, line);
        if (pairLine) {
          let message: Record<string, unknown> | null = null;
          try {
            message = JSON.parse(line) as Record<string, unknown>;
          } catch {
            message = null;
          }
          return pairLine(message ?? {});
        }
        if (said) return;
        let hello: Record<string, unknown>;
        try {
          hello = JSON.parse(line) as Record<string, unknown>;
        } catch {
          return refuse(null, 'invalid_argument', `The first line is not JSON; the bridge channel starts with ${bridgeHelloMethod}.`);
        }
        const id = requestId(hello ?? {});
        if (hello?.method === bridgePairMethod) {
          settle();
          return this.pairOn(socket, (next) => (pairLine = next), hello);
        }
        if (hello?.method !== bridgeHelloMethod)
          return refuse(id, 'forbidden', `The bridge channel starts with ${bridgeHelloMethod} and the agent's token; nothing else runs before it.`);
        const params = (hello.params ?? {}) as Record<string, unknown>;
        const token = text(params.token);
        if (!token) return refuse(id, 'forbidden', 'Missing token; pair this agent in Tandem first.');
        if (this.opts.isUiCredential?.(token)) return refuse(id, 'forbidden', 'UI credentials are not accepted on the bridge channel; use an agent token.');
        const identity = this.service.tokens.identify(token);
        if (!identity) return refuse(id, 'pairing_denied', 'This token is not valid (revoked or never paired); pair the agent again.');
        let held = 0;
        for (const open of this.sessions) if (open.connection.identity.tokenHash === identity.tokenHash) held += 1;
        if (held >= maxBridgeSessionsPerToken)
          return refuse(
            id,
            'capacity',
            `This agent already holds ${maxBridgeSessionsPerToken} bridge sessions, its share of Tandem's ${maxBridgeSessions}; close some of its bridges and try again.`,
          );
        if (this.sessions.size >= maxBridgeSessions)
          return refuse(id, 'capacity', `Tandem already serves ${maxBridgeSessions} bridges; end one (close an agent) and try again.`);
        settle();
        session = this.open(socket, identity, params);
        this.write(session.socket, `${JSON.stringify({ jsonrpc: '2.0', id, result: {} })}\n`);
      },
      (tail) => {
        if (!session) return refuse(null, 'input_too_large', `The first line is longer than ${maxBridgeLineBytes} bytes.`);
        this.write(
          socket,
          errorLine(trailingId(tail), -32600, 'input_too_large', `A message longer than ${maxBridgeLineBytes} bytes was dropped; send smaller input.`),
        );
      },
    );
    socket.on('data', (chunk: Buffer) => splitter.push(chunk));
  }

  /** Pairing connections (after their first request) at once; past this a new one is refused. */
  private pairingConnections = 0;
  private readonly pairingSockets = new Set<Socket>();
  /** The kernel lookup of the last pairing connection; the next one starts after it. */
  private identifying: Promise<void> = Promise.resolve();
  /** Pairing connections accepted so far, and the socket table (`ss -x`) read once the last `seq` of them was accepted. */
  private pairingSeq = 0;
  private socketTable: { seq: number; output: Promise<string | null> } | null = null;

  /**
   * The kernel's socket table for the lookup of connection `seq`: the one already read if it was
   * read after that connection was accepted, else a fresh one. A flood of connections costs a
   * table per turn of lookups, not one `ss` per connection: 64 of them in turn took over 30 s on
   * a loaded machine, and the flood test waited them out (issue 22).
   */
  private tableFor(seq: number): Promise<string | null> {
    if (!this.socketTable || this.socketTable.seq < seq) this.socketTable = { seq: this.pairingSeq, output: readSocketTable() };
    return this.socketTable.output;
  }

  /**
   * A connection that asks to pair: who asks is read from the kernel once, before the first
   * request counts; each `tandem/pair` line (the first and any later one, which replaces it) is
   * answered when decided. The connection closing withdraws its waiting request.
   */
  private pairOn(socket: Socket, setLines: (handler: (message: Record<string, unknown>) => void) => void, first: Record<string, unknown>): void {
    const broker = this.opts.pairing;
    if (!broker) {
      this.refuse(socket, errorLine(requestId(first), channelErrorCode, 'forbidden', 'This Tandem takes pairing requests at its pairUrl.'));
      return;
    }
    if (this.pairingConnections >= maxPairingConnections) {
      this.refuse(
        socket,
        errorLine(
          requestId(first),
          channelErrorCode,
          'capacity',
          `${maxPairingConnections} pairing connections are open already; try again once the person answered some.`,
        ),
      );
      return;
    }
    this.connections.set(socket, 'pairing');
    this.pairingConnections += 1;
    this.pairingSockets.add(socket);
    const queued: Array<Record<string, unknown>> = [first];
    let peer: PeerFacts | null = null;
    /**
     * Set once the connection's last line went out: what it sends after that is never asked
     * (issue 22: a later line of a refused connection could still open a request, so one
     * connection was both refused and waiting), and it is answered once.
     */
    let ended = false;
    const end = (line: string) => {
      ended = true;
      queued.length = 0;
      this.refuse(socket, line);
    };
    /** Lines of this connection in order; a second request replaces the first (the broker knows the connection). */
    // A connection holds its place only while a request of it waits: a bad line ends one that has none.
    const refuseLine = (line: string) => (broker.waitingOn(socket) ? this.write(socket, line) : end(line));
    const ask = (message: Record<string, unknown>) => {
      if (ended) return;
      const id = requestId(message);
      if (message.method !== bridgePairMethod || id === null) {
        return refuseLine(errorLine(id, -32600, 'invalid_argument', `A pairing connection takes only ${bridgePairMethod} requests.`));
      }
      const parsed = pairingClaimSchema.safeParse(message.params);
      if (!parsed.success) return refuseLine(errorLine(id, channelErrorCode, 'invalid_argument', describeIssue(parsed.error)));
      let requestIdOf: string;
      try {
        requestIdOf = broker.request(parsed.data, { connection: socket, peer: peer! });
      } catch (error) {
        const tandem = error instanceof TandemError ? error : new TandemError('invalid_argument', String(error));
        // A refusal ends the connection: a flood pays a connection for every try.
        return end(errorLine(id, channelErrorCode, tandem.code, tandem.message));
      }
      void broker.waitOutcome(requestIdOf).then((outcome) => {
        if (ended) return;
        this.write(socket, `${JSON.stringify({ jsonrpc: '2.0', id, result: { requestId: requestIdOf, ...outcome } })}\n`);
        // Done with this connection, unless the request was replaced by a newer one on it.
        if (!broker.waitingOn(socket)) end('');
      });
    };
    setLines((message) => {
      if (ended) return;
      if (peer) return ask(message);
      // Still reading who asks: a few lines wait, a flood of them ends the connection, with why
      // (it was closed without a word, so a flood's connections were not all answered: issue 22).
      if (queued.push(message) > maxQueuedBeforePeer) {
        end(
          errorLine(
            requestId(message),
            channelErrorCode,
            'capacity',
            `More than ${maxQueuedBeforePeer} pairing requests arrived before Tandem knew who sent them; send one and wait for its answer.`,
          ),
        );
      }
    });
    socket.once('close', () => {
      this.pairingConnections -= 1;
      this.pairingSockets.delete(socket);
      broker.connectionClosed(socket);
    });
    const seq = ++this.pairingSeq;
    const identify =
      this.opts.identifyPeer ??
      (process.platform === 'win32'
        ? async () => namedPipePeer()
        : (s: Socket) => unixSocketPeer(s, { ownUid: process.getuid?.() ?? -1, ss: () => this.tableFor(seq) }));
    // One at a time: a flood of connections runs the kernel lookups (ss, /proc) in turn, not all at once.
    const identified = this.identifying.then(() => (socket.destroyed || ended ? Promise.reject(new Error('gone')) : identify(socket)));
    const turn = identified.then(
      () => undefined,
      () => undefined,
    );
    this.identifying = turn;
    // The last lookup done: the table goes (it may be megabytes on a busy machine).
    void turn.then(() => {
      if (this.identifying === turn) this.socketTable = null;
    });
    void identified.then(
      (facts) => {
        peer = facts;
        for (const message of queued.splice(0)) ask(message);
      },
      () => void (ended || socket.destroy()),
    );
  }

  private open(socket: Socket, identity: AgentIdentity, params: Record<string, unknown>): Session {
    const connection = this.service.connect(identity, { cwd: text(params.cwd), ownTerminalId: text(params.terminalId) });
    const gone = sourceController(maxInflightPerSession);
    const server = createMcpServer(async (name, args, signal) => {
      const linked = linkSignals([signal, gone.signal]);
      try {
        return await runTool(this.service, connection, name, args, linked.signal);
      } finally {
        linked.dispose();
      }
    });
    const inflight = new Set<string | number>();
    const transport = new LineTransport(
      (line) => this.write(socket, line),
      (id) => inflight.delete(id),
      () => socket.destroy(),
    );
    const session: Session = { socket, connection, server, transport, gone, inflight, calls: new Map() };
    this.sessions.add(session);
    socket.once('close', (hadError) => {
      debug(`bridge session of ${identity.name} closed${hadError ? ' with an error' : ''}`);
      this.sessions.delete(session);
      const reason = new Error('The agent disconnected.');
      gone.abort(reason);
      for (const call of session.calls.values()) call.abort(reason);
      this.service.disconnect(connection.id);
      transport.onclose?.();
    });
    void server.connect(transport);
    return session;
  }

  /** One line after hello: checked just enough to bound it, then handed to the session's server. */
  private receive(session: Session, line: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return this.write(
        session.socket,
        errorLine(null, -32700, 'invalid_argument', 'A line on the bridge channel is not JSON; each line is one JSON-RPC message.'),
      );
    }
    const id = requestId(message ?? {});
    if (typeof message !== 'object' || message === null || Array.isArray(message) || message.jsonrpc !== '2.0') {
      return this.write(session.socket, errorLine(id, -32600, 'invalid_argument', 'A line on the bridge channel is not a JSON-RPC 2.0 message.'));
    }
    if (typeof message.method === 'string' && id !== null) {
      if (session.inflight.has(id))
        return this.write(session.socket, errorLine(id, -32600, 'invalid_argument', `Request id ${JSON.stringify(id)} is already in flight; use a new id.`));
      if (session.inflight.size >= maxInflightPerSession) {
        return this.write(
          session.socket,
          errorLine(id, channelErrorCode, 'busy', `This bridge already has ${maxInflightPerSession} calls in flight; wait for some to finish.`),
        );
      }
      session.inflight.add(id);
      if (message.method === 'tools/call') return void this.call(session, id, message.params);
    }
    if (message.method === 'notifications/cancelled') {
      // MCP: a cancelled request is not answered, so it leaves the books now, not at an answer.
      const cancelled = (message.params as { requestId?: unknown } | null)?.requestId;
      if (typeof cancelled === 'string' || typeof cancelled === 'number') {
        session.calls.get(cancelled)?.abort(new Error('The agent cancelled the call.'));
        session.inflight.delete(cancelled);
      }
    }
    session.transport.onmessage?.(message as JSONRPCMessage);
  }

  /**
   * A tool call, run here rather than by the session's SDK server: the one hot request skips
   * the SDK's per-message schema checks and its promise chain (0.4 ms of a call's host time).
   * Its arguments are checked by the tool's own schema in runTool, as through the server. A
   * call cancelled or whose bridge went away is not answered.
   */
  private async call(session: Session, id: string | number, params: unknown): Promise<void> {
    // One controller per call, aborted by a cancellation or when the bridge goes (the session's
    // close aborts every call in `calls`): no listener on a long-lived signal per call, which
    // cost a cold call 0.15 ms in Node's EventTarget.
    const cancel = new AbortController();
    session.calls.set(id, cancel);
    if (session.gone.signal.aborted) cancel.abort(session.gone.signal.reason);
    let result: CallToolResult;
    try {
      const call = params as { name?: unknown; arguments?: unknown } | null;
      result =
        typeof call === 'object' && call !== null && typeof call.name === 'string'
          ? await runTool(this.service, session.connection, call.name, call.arguments, cancel.signal)
          : toolError(new TandemError('invalid_argument', 'tools/call needs params.name (a Tandem tool, see tools/list) and params.arguments.'));
    } finally {
      session.calls.delete(id);
    }
    if (cancel.signal.aborted) return;
    session.inflight.delete(id);
    // The id goes last, as the SDK writes it: the bridge reads it from the line's end.
    this.write(session.socket, `{"jsonrpc":"2.0","result":${JSON.stringify(result)},"id":${JSON.stringify(id)}}\n`);
  }

  private write(socket: Socket, line: string): void {
    if (socket.destroyed) return;
    if (socket.writableLength > maxUnsentBytes) {
      debug(`dropped a bridge that read none of ${socket.writableLength} bytes`);
      socket.destroy();
      return;
    }
    socket.write(line);
  }

  /** The connection's last line, then its end; it counts as refused until its peer closes or close() ends it. */
  private refuse(socket: Socket, line: string): void {
    if (this.connections.has(socket)) this.connections.set(socket, 'refused');
    socket.end(line);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const refuse of [...this.shuttingDown]) refuse();
    for (const session of this.sessions) session.socket.destroy();
    for (const socket of this.pairingSockets) socket.destroy();
    const closed = new Promise<void>((resolve) => this.net.close(() => resolve()));
    // The server's close waits for every connection: end the rest now, each once its last
    // line (a refusal, the shutdown answer) is written, or after closeFlushMs if its peer reads none.
    const left = [...this.connections.entries()].filter(([socket]) => !socket.destroyed);
    if (left.length > 0) debug(`closing ${left.length} connections still open: ${left.map(([, kind]) => kind).join(', ')}`);
    await Promise.all(
      left.map(
        ([socket]) =>
          new Promise<void>((done) => {
            const timer = this.clock.setTimeout(() => socket.destroy(), closeFlushMs);
            socket.once('close', () => {
              this.clock.clearTimeout(timer);
              done();
            });
            if (socket.writableLength === 0) socket.destroy();
            else {
              socket.once('drain', () => socket.destroy());
              socket.once('finish', () => socket.destroy());
            }
          }),
      ),
    );
    await closed;
    if (process.platform !== 'win32') {
      rmSync(this.opts.path, { force: true });
      if (this.opts.ownDir) rmSync(this.opts.ownDir, { recursive: true, force: true });
    }
  }
}

/** The kernel's Unix socket table with each socket's peer and holders (peer.ts reads it); null where ss fails. */
function readSocketTable(): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('ss', ['-xpnH'], { timeout: 5000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => resolve(error ? null : stdout));
  });
}

/** A directory for the socket that only this user can enter, refusing one someone else prepared. */
function ensurePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a private directory of this user; the bridge channel is off (bridges use HTTP).`);
  }
}
