/** Shared by the web*.test.ts files: a real host and server, raw HTTP, and a `ws` test client. */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { EventName, OpArgs, OpName, OpResult, ServerMessage } from '../../src/shared/contract.js';
import { decodeServerMessage } from '../../src/shared/frames.js';
import { TerminalHost } from '../../src/main/host/host.js';
import { WebServer, type WebServerOptions } from '../../src/main/web/server.js';
import { until, waitBoundMs } from '../support/until.js';

export interface TestServer {
  server: WebServer;
  host: TerminalHost;
  home: string;
  rendererDir: string;
  /** A directory next to rendererDir holding `secret.txt`, which must never be served. */
  outsideFile: string;
  stop(): Promise<void>;
}

export const fixtureIndexHtml = `<!doctype html><html><head><meta charset="UTF-8"><title>Tandem fixture</title></head><body><div id="app"></div><script type="module" src="./assets/app.js"></script></body></html>`;

/** A private HOME and a fixture renderer directory, a real TerminalHost, and the server on a free port. */
export async function startTestServer(opts: Partial<WebServerOptions> = {}, files: Record<string, string> = {}): Promise<TestServer> {
  const root = mkdtempSync(join(tmpdir(), 'tandem-web-'));
  const home = join(root, 'home');
  const rendererDir = join(root, 'renderer');
  mkdirSync(home);
  mkdirSync(join(rendererDir, 'assets'), { recursive: true });
  writeFileSync(join(rendererDir, 'index.html'), fixtureIndexHtml);
  writeFileSync(join(rendererDir, 'assets', 'app.js'), 'console.log("tandem fixture");\n');
  writeFileSync(join(rendererDir, 'assets', 'style.css'), 'body { color: black; }\n');
  writeFileSync(join(rendererDir, '.hidden'), 'hidden\n');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(rendererDir, name), content);
  const outsideFile = join(root, 'secret.txt');
  writeFileSync(outsideFile, 'TOP-SECRET-OUTSIDE\n');
  const host = new TerminalHost({
    env: { ...process.env, HOME: home, SHELL: '/bin/bash', ZDOTDIR: undefined, HISTFILE: undefined },
    home,
  });
  const server = await WebServer.start({ host, rendererDir, heartbeatMs: 0, ...opts });
  return {
    server,
    host,
    home,
    rendererDir,
    outsideFile,
    async stop() {
      await server.close();
      await host.shutdown();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** An HTTP request with full control of the headers (Host included). */
export function rawRequest(port: number, opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    // A connection of its own: Node's global agent keeps sockets alive, and one the server closed
    // after its keep-alive timeout while a test's spawnSync blocked this loop is reused unnoticed
    // ("socket hang up" on the next request: a loaded machine makes that wait longer than 5 s).
    const req = request({ host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path ?? '/', headers: opts.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** POST /session with a login token; returns the session secret. */
export async function login(port: number, token: string, headers: Record<string, string> = {}): Promise<RawResponse & { secret: string | null }> {
  const res = await rawRequest(port, {
    method: 'POST',
    path: '/session',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ login: token }),
  });
  let secret: string | null = null;
  try {
    secret = (JSON.parse(res.body) as { secret?: string }).secret ?? null;
  } catch {
    secret = null;
  }
  return { ...res, secret };
}

export function tokenOf(url: string): string {
  const match = /#login=([A-Za-z0-9_-]+)$/.exec(url);
  if (!match) throw new Error(`no login token in ${url}`);
  return match[1]!;
}

export interface Refusal {
  status: number;
  body: string;
}

/** Opens a UI WebSocket; resolves with the socket, or with the HTTP refusal. */
export function openSocket(
  port: number,
  opts: { secret?: string | null; origin?: string; headers?: Record<string, string>; protocols?: string[] } = {},
): Promise<WebSocket | Refusal> {
  return new Promise((resolve, reject) => {
    const protocols = opts.protocols ?? ['tandem.v1', ...(opts.secret ? [`tandem.auth.${opts.secret}`] : [])];
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, protocols, { origin: opts.origin, headers: opts.headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    ws.once('error', (error) => reject(error));
  });
}

type Result = Extract<ServerMessage, { type: 'result' }>;

/** A `ws` client speaking the UI protocol, recording everything it receives. */
export class TestClient {
  readonly messages: ServerMessage[] = [];
  private nextId = 1;
  private readonly waiters = new Set<() => void>();
  /** Output text per attachment. */
  readonly output = new Map<string, string>();
  /** The last output seq per attachment. */
  readonly lastSeq = new Map<string, number>();
  closed: { code: number; reason: string } | null = null;

  constructor(
    readonly ws: WebSocket,
    /** Acknowledge every frame as it arrives (a client that keeps up). */
    private readonly autoAck = true,
  ) {
    ws.on('message', (data, isBinary) => {
      const message = decodeServerMessage(isBinary ? (data as Buffer) : String(data))!;
      this.messages.push(message);
      if (message.type === 'event' && message.event === 'output') {
        const { attachmentId, seq, data: text } = message.payload as { attachmentId: string; seq: number; data: string };
        this.output.set(attachmentId, (this.output.get(attachmentId) ?? '') + text);
        this.lastSeq.set(attachmentId, seq);
        if (this.autoAck) this.send({ type: 'call', id: this.nextId++, op: 'ack', args: { attachmentId, seq } });
      }
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  static async connect(port: number, secret: string, opts: { autoAck?: boolean; origin?: string; headers?: Record<string, string> } = {}): Promise<TestClient> {
    const ws = await openSocket(port, { secret, origin: opts.origin, headers: opts.headers });
    if (!(ws instanceof WebSocket)) throw new Error(`refused: ${ws.status} ${ws.body}`);
    return new TestClient(ws, opts.autoAck ?? true);
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  /** Sends a call and resolves with its result message (ok or not). */
  async callRaw<K extends OpName>(op: K, args: OpArgs<K>): Promise<Result> {
    const id = this.nextId++;
    this.send({ type: 'call', id, op, args });
    return await this.waitFor(() => this.messages.find((m): m is Result => m.type === 'result' && m.id === id));
  }

  /** Sends a call; resolves with its value, throws on an error result. */
  async call<K extends OpName>(op: K, args: OpArgs<K>): Promise<OpResult<K>> {
    const result = await this.callRaw(op, args);
    if (!result.ok) throw Object.assign(new Error(result.error.message), { code: result.error.code });
    return result.value as OpResult<K>;
  }

  events(event: EventName): unknown[] {
    return this.messages.filter((m) => m.type === 'event' && m.event === event).map((m) => (m as { payload: unknown }).payload);
  }

  /** Resolves with the first truthy value of `check`, re-evaluated on every message. */
  waitFor<T>(check: () => T | undefined | null | false, timeoutMs = waitBoundMs, what = 'condition'): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const first = check();
      if (first) {
        resolve(first);
        return;
      }
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const waiter = () => {
        const value = check();
        if (value) {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(value);
        }
      };
      this.waiters.add(waiter);
    });
  }

  waitForOutput(attachmentId: string, pattern: RegExp | string, timeoutMs = waitBoundMs): Promise<string> {
    return this.waitFor(
      () => {
        const text = this.output.get(attachmentId) ?? '';
        return (typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text)) ? text : null;
      },
      timeoutMs,
      `output ${String(pattern)}`,
    );
  }

  waitForClose(timeoutMs = waitBoundMs): Promise<{ code: number; reason: string }> {
    return this.waitFor(() => this.closed, timeoutMs, 'close');
  }

  close(): void {
    this.ws.close();
  }
}

export function isRefusal(value: WebSocket | Refusal): value is Refusal {
  return !(value instanceof WebSocket);
}

export { isAlive } from '../../src/main/host/instance.js';

/** A child process's exit code, once it exits; rejects if it still runs after `timeoutMs`. */
export function exitOf(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolvePromise(code);
    });
  });
}

export function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  return until(check, what, timeoutMs);
}
