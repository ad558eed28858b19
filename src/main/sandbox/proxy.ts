/**
 * The host side of a confined terminal's network (issue 24). A confined terminal has its own
 * network namespace: nothing of the machine's network, loopback and abstract sockets included,
 * is reachable from it. With the network on it gets this proxy, one per terminal, listening on
 * a Unix socket on the host (Linux; a forwarder started from outside relays the sandbox's own
 * loopback port to it, forwarder.ts and resources/sandbox/forward.pl) or on a loopback TCP port the Seatbelt profile alone
 * may reach (macOS). One port serves both protocols, told apart by the first byte:
 * - SOCKS5 (0x05): CONNECT to an IPv4/IPv6 address or a domain name, no authentication;
 * - HTTP: CONNECT host:port (HTTPS and anything tunnelled), and plain-HTTP requests in
 *   absolute form, forwarded one per connection (`Connection: close`);
 * Each target is resolved here, every resolved address is checked (proxy-policy.ts) and the
 * proxy connects to a checked address itself. A refusal answers in the client's protocol (an
 * HTTP 403 whose body is a contract error, SOCKS reply 2) and is recorded (`proxyRefusals`).
 * Bounded: connections per agent, the request head's size and the time to send it.
 */
import { lookup } from 'node:dns/promises';
import { EventEmitter } from 'node:events';
import { rmSync } from 'node:fs';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { addressRefusal, canonicalAddress, domainAllowed, normalizeHost, type RefusalReason, refusalMessage } from './proxy-policy.js';

/** A refused connection, for the person's agents panel (kept in a bounded list per process). */
export interface ProxyRefusal {
  at: string;
  agent: string;
  terminalId: string;
  host: string;
  port: number;
  /** The address the host resolved to, when that was the reason. */
  address: string | null;
  reason: RefusalReason;
  message: string;
}

export interface ProxyOptions {
  agent: string;
  terminalId: string;
  /** The agent's domain list (empty: any public host). */
  domains: readonly string[];
  /** A Unix socket path (Linux), or a loopback TCP port chosen by the system (macOS). */
  listen: { path: string } | { tcp: true };
}

export const proxyBounds = {
  /** Connections through the proxy one agent may hold open at once, across its terminals. */
  connectionsPerAgent: 64,
  /** A request head (HTTP request line and headers, SOCKS greeting and request). */
  headBytes: 64 * 1024,
  /** To send the head, and to connect to the target. */
  headMs: 30_000,
  connectMs: 30_000,
  /** Connections past the bound that are still answered (a capacity error) rather than closed at once. */
  refusalsAnswered: 8,
  /** Refusals kept for the panel. */
  refusalsKept: 200,
};

interface ProxyConfig {
  /** This machine's addresses (tests give a list without the address their "remote" server listens on). */
  ownAddresses: () => Iterable<string>;
  /** The resolver (tests give a slow one: no real resolver can be made slow here). */
  lookup: (host: string) => Promise<Array<{ address: string }>>;
  connectionsPerAgent: number;
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));
}

const defaults: ProxyConfig = {
  ownAddresses: interfaceAddresses,
  lookup: (host) => lookup(host, { all: true, verbatim: true }),
  connectionsPerAgent: proxyBounds.connectionsPerAgent,
};
let config: ProxyConfig = { ...defaults };

/** Tests only: what counts as this machine's addresses, the resolver, the per-agent bound. No argument: the defaults. */
export function configureSandboxProxy(next?: Partial<ProxyConfig>): void {
  config = { ...defaults, ...next };
}

const open = new Map<string, number>();
const refusals: ProxyRefusal[] = [];
const events = new EventEmitter();

/** The recent refusals, oldest first. */
export function proxyRefusals(): readonly ProxyRefusal[] {
  return refusals;
}

export function onProxyRefusal(listener: (refusal: ProxyRefusal) => void): () => void {
  events.on('refusal', listener);
  return () => events.off('refusal', listener);
}

class Refused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly address: string | null = null,
  ) {
    super(message);
  }
}

/** `host:port` of a CONNECT or SOCKS target, for messages. */
function targetText(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export class SandboxProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly opts: ProxyOptions;

  private constructor(opts: ProxyOptions) {
    this.opts = opts;
    this.server = net.createServer({ allowHalfOpen: true }, (socket) => this.accept(socket));
  }

  /**
   * Listens at once: a Unix path is bound inside `listen`, so the socket exists when this
   * returns; a TCP port is known after `listening()`. A later error is said on stderr (the
   * terminal's connections through it are refused).
   */
  static listen(opts: ProxyOptions): SandboxProxy {
    const proxy = new SandboxProxy(opts);
    proxy.server.on('error', (error) => console.error(`[tandem] a confined terminal's proxy failed: ${error.message}`));
    if ('path' in opts.listen) {
      rmSync(opts.listen.path, { force: true });
      proxy.server.listen(opts.listen.path);
    } else proxy.server.listen(0, '127.0.0.1');
    return proxy;
  }

  /** Resolves once the server listens: at once for a Unix path (bound inside `listen`), a tick later for TCP. */
  listening(): Promise<void> {
    return this.server.listening
      ? Promise.resolve()
      : new Promise((resolve, reject) => {
          this.server.once('listening', () => resolve());
          this.server.once('error', reject);
        });
  }

  /** The TCP port (macOS), or null for a Unix socket. */
  get port(): number | null {
    const address = this.server.address();
    return typeof address === 'object' && address !== null ? address.port : null;
  }

  close(): void {
    this.server.close();
    for (const socket of this.sockets) socket.destroy();
    if ('path' in this.opts.listen) rmSync(this.opts.listen.path, { force: true });
  }

  private accept(client: net.Socket): void {
    const agent = this.opts.agent;
    this.sockets.add(client);
    const held = (open.get(agent) ?? 0) + 1;
    open.set(agent, held);
    let released = false;
    client.once('close', () => {
      this.sockets.delete(client);
      const left = (open.get(agent) ?? 1) - 1;
      if (!released) {
        if (left > 0) open.set(agent, left);
        else open.delete(agent);
      }
      released = true;
    });
    client.on('error', () => client.destroy());
    const over = held > config.connectionsPerAgent;
    // Past the bound a few connections wait for their first bytes to be told why in their own
    // protocol; the rest close at once, so a flood holds no descriptors of this process.
    if (held > config.connectionsPerAgent + proxyBounds.refusalsAnswered) {
      client.destroy();
      return;
    }
    client.setTimeout(proxyBounds.headMs, () => client.destroy());
    let head = Buffer.alloc(0);
    let socks: SocksState | null = null;
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      if (head.length > proxyBounds.headBytes) {
        client.off('data', onData);
        this.answerHttp(
          client,
          431,
          this.refuse('', 0, new Refused('malformed', refusalMessage('malformed', '', { what: `its head is over ${proxyBounds.headBytes} bytes` }))),
        );
        return;
      }
      if (head[0] === 0x05) {
        socks ??= { greeted: false };
        const step = socksStep(head, socks);
        if (step.kind === 'more') return;
        client.off('data', onData);
        if (step.kind === 'reply') {
          client.end(step.reply);
          return;
        }
        if (step.kind === 'greeted') {
          client.write(Buffer.from([5, 0]));
          head = head.subarray(step.used);
          socks.greeted = true;
          client.on('data', onData);
          if (head.length > 0) onData(Buffer.alloc(0));
          return;
        }
        this.tunnel(client, step.host, step.port, head.subarray(step.used), over, 'socks');
        return;
      }
      if (head[0] === 0x04) {
        // SOCKS4 is not served: refused at once (reply 0x5b) rather than read as an HTTP head until the bound.
        client.off('data', onData);
        client.end(Buffer.from([0, 0x5b, 0, 0, 0, 0, 0, 0]));
        this.refuse('', 0, new Refused('unsupported', refusalMessage('unsupported', '', { what: 'SOCKS4 is not served; use socks5h:// (ALL_PROXY)' })));
        return;
      }
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      client.off('data', onData);
      this.http(client, head.subarray(0, end).toString('latin1'), head.subarray(end + 4), over);
    };
    client.on('data', onData);
  }

  private http(client: net.Socket, headText: string, rest: Buffer, over: boolean): void {
    const [requestLine = '', ...headerLines] = headText.split('\r\n');
    const match = /^([A-Z]+) (\S+) HTTP\/(1\.[01])$/.exec(requestLine);
    const malformed = (what: string) => this.answerHttp(client, 400, this.refuse('', 0, new Refused('malformed', refusalMessage('malformed', '', { what }))));
    if (!match) return malformed('its request line is not HTTP/1.x');
    const [, method, target, version] = match as unknown as [string, string, string, string];
    if (method === 'CONNECT') {
      const hostPort = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]/]+):(\d{1,5})$/.exec(target);
      if (!hostPort) return malformed('CONNECT needs host:port');
      this.tunnel(client, normalizeHost(hostPort[1]!), Number(hostPort[2]), rest, over, 'connect');
      return;
    }
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return malformed('a request through the proxy names its absolute http:// URL');
    }
    if (url.protocol !== 'http:')
      return this.answerHttp(
        client,
        400,
        this.refuse(
          url.hostname,
          0,
          new Refused(
            'unsupported',
            refusalMessage('unsupported', '', { what: `${url.protocol} URLs go through CONNECT (HTTPS_PROXY), not as a plain request` }),
          ),
        ),
      );
    // Hop-by-hop headers end here; the upstream connection serves this one request.
    const named = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authorization', 'te', 'trailer', 'upgrade']);
    for (const line of headerLines) {
      const [name, value = ''] = line.split(/:(.*)/s);
      if (name?.trim().toLowerCase() === 'connection') for (const token of value.split(',')) named.add(token.trim().toLowerCase());
    }
    const headers = headerLines.filter((line) => !named.has(line.split(':')[0]!.trim().toLowerCase()));
    if (!headers.some((line) => /^host\s*:/i.test(line))) headers.unshift(`Host: ${url.host}`);
    const outHead = Buffer.from(
      `${method} ${url.pathname}${url.search} HTTP/${version}\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n`,
      'latin1',
    );
    this.tunnel(client, normalizeHost(url.hostname), Number(url.port || 80), Buffer.concat([outHead, rest]), over, 'http');
  }

  /** Checks the target, connects to a checked address, and relays both ways. */
  private tunnel(client: net.Socket, host: string, port: number, first: Buffer, over: boolean, kind: 'connect' | 'http' | 'socks'): void {
    const fail = (status: number, socksReply: number, refused: Refused | null, message: string) => {
      const error = refused ? this.refuse(host, port, refused) : { code: 'not_found', message };
      if (kind === 'socks') client.end(socksReplyBytes(socksReply));
      else this.answerHttp(client, status, error);
    };
    const target = targetText(host, port);
    if (over) {
      fail(503, 1, new Refused('capacity', refusalMessage('capacity', target, { limit: config.connectionsPerAgent })), '');
      return;
    }
    if (port < 1 || port > 65535)
      return fail(400, 1, new Refused('malformed', refusalMessage('malformed', target, { what: `port ${port} is out of range` })), '');
    if (!domainAllowed(host, this.opts.domains)) {
      return fail(403, 2, new Refused('domain', refusalMessage('domain', target, { domains: this.opts.domains })), '');
    }
    client.pause();
    void this.resolve(host, target).then(
      (address) => {
        if (client.destroyed) return;
        const upstream = net.connect({ host: address, port, allowHalfOpen: true });
        this.sockets.add(upstream);
        upstream.setTimeout(proxyBounds.connectMs, () => upstream.destroy(new Error('timed out')));
        let connected = false;
        upstream.once('connect', () => {
          connected = true;
          upstream.setTimeout(0);
          client.setTimeout(0);
          if (kind === 'connect') client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (kind === 'socks') client.write(socksReplyBytes(0));
          if (first.length > 0) upstream.write(first);
          client.pipe(upstream);
          upstream.pipe(client);
          client.resume();
        });
        upstream.on('error', (error: NodeJS.ErrnoException) => {
          if (!connected)
            fail(502, error.code === 'ECONNREFUSED' ? 5 : 4, null, `Tandem's sandbox proxy could not connect to ${target} (${error.code ?? error.message}).`);
          else client.destroy();
        });
        upstream.once('close', () => {
          this.sockets.delete(upstream);
          if (connected) client.end();
        });
        client.once('close', () => upstream.destroy());
      },
      (error: unknown) => {
        if (error instanceof Refused) fail(403, 2, error, '');
        else fail(502, 4, null, `Tandem's sandbox proxy could not resolve ${host} (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
      },
    );
  }

  /** One address of `host` the policy admits; refuses when every address it has is refused. */
  private async resolve(host: string, target: string): Promise<string> {
    const own = new Set([...config.ownAddresses()].map(canonicalAddress));
    const addresses = net.isIP(host) ? [host] : (await limitedLookup(host)).map((entry) => entry.address);
    let first: Refused | null = null;
    for (const address of addresses) {
      const reason = addressRefusal(address, own);
      if (reason === null) return address;
      first ??= new Refused(reason, refusalMessage(reason, target, { address: address === host ? undefined : address }), address);
    }
    throw first ?? new Refused('malformed', refusalMessage('malformed', target, { what: `${host} has no address` }));
  }

  private refuse(host: string, port: number, refused: Refused): { code: string; message: string } {
    const record: ProxyRefusal = {
      at: new Date().toISOString(),
      agent: this.opts.agent,
      terminalId: this.opts.terminalId,
      host,
      port,
      address: refused.address,
      reason: refused.reason,
      message: refused.message,
    };
    refusals.push(record);
    if (refusals.length > proxyBounds.refusalsKept) refusals.splice(0, refusals.length - proxyBounds.refusalsKept);
    events.emit('refusal', record);
    return {
      code: refused.reason === 'capacity' ? 'capacity' : refused.reason === 'malformed' || refused.reason === 'unsupported' ? 'invalid_argument' : 'forbidden',
      message: refused.message,
    };
  }

  private answerHttp(client: net.Socket, status: number, error: { code: string; message: string }): void {
    const body = `${JSON.stringify({ error })}\n`;
    const reason =
      { 400: 'Bad Request', 403: 'Forbidden', 431: 'Request Header Fields Too Large', 502: 'Bad Gateway', 503: 'Service Unavailable' }[status] ?? 'Error';
    client.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nX-Tandem-Sandbox: ${error.code}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
}

/**
 * getaddrinfo runs on libuv's thread pool (4 threads), which this process's file system calls
 * share: names that take the resolver's whole timeout must not occupy all of it. At most two
 * lookups run at once, the rest wait in order (as many as connections are open: bounded).
 */
const lookupsAtOnce = 2;
let lookupsRunning = 0;
const lookupsWaiting: Array<() => void> = [];

async function limitedLookup(host: string): Promise<Array<{ address: string }>> {
  // A finishing lookup hands its slot to the next waiter directly, so none can slip in between.
  if (lookupsRunning >= lookupsAtOnce) await new Promise<void>((resolve) => lookupsWaiting.push(resolve));
  else lookupsRunning++;
  try {
    return await config.lookup(host);
  } finally {
    const next = lookupsWaiting.shift();
    if (next) next();
    else lookupsRunning--;
  }
}

interface SocksState {
  greeted: boolean;
}

type SocksStep =
  { kind: 'more' } | { kind: 'reply'; reply: Buffer } | { kind: 'greeted'; used: number } | { kind: 'connect'; host: string; port: number; used: number };

function socksReplyBytes(code: number): Buffer {
  return Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
}

/** SOCKS5 (RFC 1928): the greeting (no authentication), then one CONNECT request. */
function socksStep(buf: Buffer, state: SocksState): SocksStep {
  if (!state.greeted) {
    if (buf.length < 2) return { kind: 'more' };
    const used = 2 + buf[1]!;
    if (buf.length < used) return { kind: 'more' };
    const methods = buf.subarray(2, used);
    return methods.includes(0) ? { kind: 'greeted', used } : { kind: 'reply', reply: Buffer.from([5, 0xff]) };
  }
  if (buf.length < 5) return { kind: 'more' };
  if (buf[0] !== 5) return { kind: 'reply', reply: socksReplyBytes(1) };
  // Only CONNECT: BIND and UDP ASSOCIATE would open the machine to the sandbox's peers.
  if (buf[1] !== 1) return { kind: 'reply', reply: socksReplyBytes(7) };
  const type = buf[3];
  let host: string;
  let at: number;
  if (type === 1) {
    if (buf.length < 10) return { kind: 'more' };
    host = [...buf.subarray(4, 8)].join('.');
    at = 8;
  } else if (type === 3) {
    const length = buf[4]!;
    if (buf.length < 5 + length + 2) return { kind: 'more' };
    host = normalizeHost(buf.subarray(5, 5 + length).toString('latin1'));
    at = 5 + length;
  } else if (type === 4) {
    if (buf.length < 22) return { kind: 'more' };
    const groups: string[] = [];
    for (let i = 0; i < 8; i++) groups.push(buf.readUInt16BE(4 + i * 2).toString(16));
    host = groups.join(':');
    at = 20;
  } else return { kind: 'reply', reply: socksReplyBytes(8) };
  return { kind: 'connect', host, port: buf.readUInt16BE(at), used: at + 2 };
}
