import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TandemError } from '../../../shared/errors.js';
import { DEFAULT_LIMITS } from '../../../shared/limits.js';
import { type DiscoverySearch, findInstance, notRunningMessage, processDiscoveryEnv, untrustedSocket } from '../../host/discovery.js';
import { isRunOf, parseInstance, type InstanceInfo } from '../../host/instance.js';
import { hostProves } from '../../host/instance-proof.js';
import { stateDir } from '../../state-dir.js';
import {
  BridgeChannel,
  ChannelClosedBeforeHello,
  ChannelPairing,
  ChannelUnreachable,
  type PairingAnswer,
  type RequestId,
  resultLine,
} from './bridge-channel.js';
import { systemClock, waitFor } from '../../clock.js';
import { BridgeStdioTransport } from './bridge-stdio.js';
import { bridgeHeaders } from '../mcp/mcp-http.js';
import { createMcpServer, serverInfo, toolError } from '../mcp/mcp-server.js';
import { settlingFetch } from './settling-fetch.js';
import { agentNamePattern } from '../pairing/tokens.js';

export interface BridgeOptions {
  /** The claimed agent name (`--name`), else the MCP client's own name. */
  name?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** How often a pending pairing request is polled while a tool call waits (ms). */
  pairPollMs?: number;
}

function safeName(name: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9 ._-]/g, '-')
    .slice(0, 64)
    .replace(/^[^A-Za-z0-9]+/, '');
  return agentNamePattern.test(cleaned) ? cleaned : 'agent';
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || typeof value === 'number';
}

/** instance.json names no bridge channel: the one case where the bridge uses HTTP. */
class NoChannel extends Error {}

/**
 * The upstream side of the stdio bridge: finds the running instance, gets a token (the
 * environment's, a stored one, or by a pairing request) and relays tool calls: over the
 * instance's bridge channel when it publishes one (`bridgeSocket`, and then only there), else
 * over HTTP (`mcpUrl`) once the server proved it is that run (instance-proof.ts).
 * Every failure is a tool result with a contract code; the next call tries again.
 */
export class Upstream {
  private client: Client | null = null;
  private channel: BridgeChannel | null = null;
  /** Single flight for the channel, as `connecting` is for HTTP. */
  private opening: Promise<BridgeChannel> | null = null;
  /** Where the client's answers go (the bridge's stdout); set by `runBridge`. */
  private write: (line: string) => void = () => undefined;
  private connectedTo: string | null = null;
  private token: string | null;
  /** Where the token came from: a refused configured token is final; others are re-paired. */
  private tokenSource: 'env' | 'file' | 'pairing' | null;
  private pairing: { requestId: string; pairUrl: string } | null = null;
  private channelPairing: { path: string; request: ChannelPairing } | null = null;
  /** Single flight: tool calls that arrive together share one connect (and one pairing request). */
  private connecting: Promise<Client> | null = null;
  private readonly env: NodeJS.ProcessEnv;
  private readonly cwd: string;

  constructor(
    private readonly nameOf: () => string,
    private readonly opts: BridgeOptions = {},
  ) {
    this.env = opts.env ?? process.env;
    this.cwd = opts.cwd ?? process.cwd();
    this.token = this.env.TANDEM_TOKEN || null;
    this.tokenSource = this.token ? 'env' : null;
  }

  private tokenFile(): string {
    return join(
      stateDir({ platform: process.platform, env: this.env, home: this.env.HOME ?? this.env.USERPROFILE ?? '' }),
      'agents',
      `${safeName(this.nameOf())}.token`,
    );
  }

  /** Sends relayed answers (whole JSON-RPC lines) to the client. */
  attach(write: (line: string) => void): void {
    this.write = write;
  }

  /**
   * The running instance wherever its host put instance.json (host/discovery.ts), or where the
   * search looked. Live means this user's process that started when the host did (isRunOf).
   */
  private locate(): (InstanceInfo & { path: string }) | DiscoverySearch {
    const found = findInstance(processDiscoveryEnv(this.env), parseInstance, (info) => isRunOf(info));
    return 'info' in found ? { ...found.info, path: found.path } : found;
  }

  private instance(): InstanceInfo & { path: string } {
    const found = this.locate();
    if ('looked' in found) throw new TandemError('not_running', notRunningMessage(found));
    return found;
  }

  private storedToken(): string | null {
    try {
      return readFileSync(this.tokenFile(), 'utf8').trim() || null;
    } catch {
      return null;
    }
  }

  private async ensureToken(info: InstanceInfo): Promise<string> {
    if (this.token) return this.token;
    const stored = this.storedToken();
    if (stored) {
      this.tokenSource = 'file';
      return (this.token = stored);
    }
    if (info.bridgeSocket) return this.pairOverChannel(info.bridgeSocket);
    if (!this.pairing || this.pairing.pairUrl !== info.pairUrl) {
      const response = await fetch(info.pairUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: safeName(this.nameOf()), pid: process.pid, exe: process.execPath, cwd: this.cwd }),
      });
      const body = (await response.json()) as { requestId?: string; error?: { message: string } };
      if (!response.ok || !body.requestId) throw new TandemError('pairing_denied', body.error?.message ?? 'Tandem refused the pairing request.');
      this.pairing = { requestId: body.requestId, pairUrl: info.pairUrl };
    }
    const deadline = Date.now() + 2000;
    for (;;) {
      const response = await fetch(`${this.pairing.pairUrl}/${this.pairing.requestId}`);
      const outcome = (await response.json()) as { state?: string; token?: string; persistent?: boolean };
      if (outcome.state === 'allowed' && outcome.token) {
        this.pairing = null;
        this.token = outcome.token;
        this.tokenSource = 'pairing';
        if (outcome.persistent) this.storeToken(outcome.token);
        return outcome.token;
      }
      if (outcome.state === 'expired') {
        // Pushed out (a newer request of the same claim, or a flood) or lapsed: ask again next call.
        this.pairing = null;
        throw new TandemError('pairing_pending', 'Tandem is asking the person to allow this agent again; call the tool again shortly.');
      }
      if (outcome.state !== 'pending') {
        this.pairing = null;
        throw new TandemError('pairing_denied', 'The person denied this agent in Tandem; ask them to pair it from the Agents panel.');
      }
      if (Date.now() >= deadline) {
        throw new TandemError('pairing_pending', 'Tandem is asking the person to allow this agent; call the tool again once they have answered.');
      }
      await new Promise((resolve) => setTimeout(resolve, this.opts.pairPollMs ?? 200));
    }
  }

  /**
   * Pairing over the bridge channel (the host reads who asks from the kernel; `/pair` over TCP
   * is refused where the channel exists). One request per bridge, kept open across tool calls:
   * each call waits for the answer a moment, then says `pairing_pending`.
   */
  private async pairOverChannel(path: string): Promise<string> {
    if (!this.channelPairing || this.channelPairing.path !== path) {
      this.channelPairing?.request.close();
      this.channelPairing = {
        path,
        request: new ChannelPairing(path, { name: safeName(this.nameOf()), pid: process.pid, exe: process.execPath, cwd: this.cwd }),
      };
    }
    const current = this.channelPairing;
    const forget = () => {
      if (this.channelPairing === current) this.channelPairing = null;
      current.request.close();
    };
    let answer: PairingAnswer | null;
    try {
      const outcome = await waitFor(systemClock, { ms: 2000, until: current.request.answer });
      answer = outcome.kind === 'met' ? outcome.value : null;
    } catch (error) {
      forget();
      if (error instanceof ChannelUnreachable)
        throw new TandemError('not_running', `Tandem's bridge channel ${path} does not answer (${error.message}); start Tandem again and call the tool again.`);
      throw error;
    }
    if (!answer) throw new TandemError('pairing_pending', 'Tandem is asking the person to allow this agent; call the tool again once they have answered.');
    forget();
    if (answer.state === 'allowed') {
      this.token = answer.token;
      this.tokenSource = 'pairing';
      if (answer.persistent) this.storeToken(answer.token);
      return answer.token;
    }
    if (answer.state === 'expired')
      throw new TandemError('pairing_pending', 'Tandem is asking the person to allow this agent again; call the tool again shortly.');
    throw new TandemError('pairing_denied', 'The person denied this agent in Tandem; ask them to pair it from the Agents panel.');
  }

  private storeToken(token: string): void {
    const file = this.tokenFile();
    mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }

  private async connect(retried = false): Promise<Client> {
    const info = this.instance();
    if (this.client && this.connectedTo === info.mcpUrl) return this.client;
    await this.reset();
    // A TCP port proves nothing (another user can listen on a dead host's port): the token goes
    // over HTTP only to a server that proves it holds this run's instanceKey (instance-proof.ts).
    if (!(await hostProves(new URL(info.mcpUrl).origin, info.instanceKey))) {
      throw new TandemError(
        'not_running',
        `The server at ${new URL(info.mcpUrl).origin} did not prove it is the Tandem ${info.path} names (Tandem exited and something else holds its port?); the agent's token was not sent. Start Tandem again and call the tool again.`,
      );
    }
    const token = await this.ensureToken(info);
    const headers: Record<string, string> = { Authorization: `Bearer ${token}`, [bridgeHeaders.cwd]: encodeURIComponent(this.cwd) };
    if (this.env.TANDEM_TERMINAL_ID) headers[bridgeHeaders.terminalId] = encodeURIComponent(this.env.TANDEM_TERMINAL_ID);
    const client = new Client({ name: `tandem-bridge (${this.nameOf()})`, version: serverInfo.version });
    const transport = new StreamableHTTPClientTransport(new URL(info.mcpUrl), { requestInit: { headers }, fetch: settlingFetch() });
    try {
      await client.connect(transport);
    } catch (error) {
      await client.close().catch(() => undefined);
      if (error instanceof StreamableHTTPError && error.code === 401) {
        this.forgetToken(retried);
        return this.connect(true);
      }
      throw new TandemError('not_running', 'Tandem is not answering; start it (or restart it) and call the tool again.');
    }
    this.client = client;
    this.connectedTo = info.mcpUrl;
    return client;
  }

  /** A refused token: final when configured (or refused twice), else forgotten so the next attempt pairs again. */
  private forgetToken(retried: boolean): void {
    if (this.tokenSource === 'env' || retried) {
      throw new TandemError('pairing_denied', 'Tandem does not accept this agent’s token (revoked, or from another instance); pair the agent again.');
    }
    if (this.tokenSource === 'file' && existsSync(this.tokenFile())) rmSync(this.tokenFile(), { force: true });
    this.token = null;
    this.tokenSource = null;
  }

  /**
   * Takes a client line for the bridge channel: a tool call, when a channel is open or the
   * instance publishes one, and the cancellation of a call that went up it. Anything else (and
   * every line while the instance has no channel) goes to the bridge's own server.
   */
  divert(message: Record<string, unknown>, line: string): boolean {
    if (message.method === 'notifications/cancelled') {
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (!this.channel?.owns(requestId)) return false;
      this.channel.cancel(line, requestId as RequestId);
      return true;
    }
    if (message.method !== 'tools/call' || !isRequestId(message.id)) return false;
    if (this.channel) {
      this.channel.forward(line, message.id);
      return true;
    }
    const info = this.locate();
    if ('looked' in info || !info.bridgeSocket) return false;
    void this.relay(message, message.id, line);
    return true;
  }

  private async relay(message: Record<string, unknown>, id: RequestId, line: string): Promise<void> {
    try {
      this.opening ??= this.openChannelOrRetry().finally(() => (this.opening = null));
      (await this.opening).forward(line, id);
    } catch (error) {
      if (error instanceof NoChannel) {
        // instance.json names no channel (any more): HTTP, after the host proves itself (connect).
        const params = (message.params ?? {}) as { name?: unknown; arguments?: unknown };
        return this.write(resultLine(id, await this.call(String(params.name ?? ''), params.arguments)));
      }
      // A channel named and refused is never a reason to try HTTP: a Tandem that died leaves its
      // socket file, and its TCP port may be anyone's by now.
      const tandem =
        error instanceof TandemError ? error : new TandemError('not_running', 'Tandem is not answering; start it (or restart it) and call the tool again.');
      this.write(resultLine(id, toolError(tandem)));
    }
  }

  /**
   * A channel closed before its hello was answered belongs to a Tandem that went away in that
   * moment: look for Tandem again (a newer one may have published its instance.json, or none
   * runs: not_running says where the bridge looked) and try once more.
   */
  private async openChannelOrRetry(): Promise<BridgeChannel> {
    try {
      return await this.openChannel();
    } catch (error) {
      if (!(error instanceof ChannelClosedBeforeHello)) throw error;
      if (process.env.TANDEM_DEBUG_BRIDGE === '1')
        process.stderr.write('tandem bridge: the channel closed before the hello answer; looking for Tandem again\n');
      return await this.openChannel();
    }
  }

  private async openChannel(retried = false): Promise<BridgeChannel> {
    const info = this.instance();
    if (!info.bridgeSocket) throw new NoChannel();
    const notOurs = untrustedSocket(info.bridgeSocket, processDiscoveryEnv(this.env).uid);
    if (notOurs)
      throw new TandemError(
        'not_running',
        `The bridge channel ${info.bridgeSocket} that ${info.path} names is not trusted (${notOurs}); start Tandem again and call the tool again.`,
      );
    const token = await this.ensureToken(info);
    try {
      const channel = await BridgeChannel.open(
        info.bridgeSocket,
        { token, cwd: this.cwd, terminalId: this.env.TANDEM_TERMINAL_ID || null },
        (answer) => this.write(answer),
        (closed) => {
          if (this.channel === closed) this.channel = null;
        },
      );
      this.channel = channel;
      return channel;
    } catch (error) {
      if (error instanceof ChannelUnreachable) {
        throw new TandemError(
          'not_running',
          `Tandem's bridge channel ${info.bridgeSocket} does not answer (${error.message}): the Tandem ${info.path} names exited without cleaning up, or is starting. Start Tandem again and call the tool again.`,
        );
      }
      if (!(error instanceof TandemError) || error.code !== 'pairing_denied') throw error;
      this.forgetToken(retried);
      return this.openChannel(true);
    }
  }

  async call(name: string, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
    try {
      this.connecting ??= this.connect().finally(() => (this.connecting = null));
      const client = await this.connecting;
      return (await client.callTool({ name, arguments: (args ?? {}) as Record<string, unknown> }, undefined, {
        signal,
        timeout: DEFAULT_LIMITS.maxWaitMs + 15_000,
      })) as CallToolResult;
    } catch (error) {
      if (error instanceof TandemError) return toolError(error);
      // The instance went away mid-call (restart, crash): reconnect on the next call.
      await this.reset();
      return toolError(new TandemError('not_running', 'The connection to Tandem was lost; call the tool again once Tandem runs.'));
    }
  }

  /** Ends both ways up (the bridge is exiting). */
  async close(): Promise<void> {
    this.channelPairing?.request.close();
    this.channelPairing = null;
    this.channel?.close();
    this.channel = null;
    await this.reset();
  }

  async reset(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.connectedTo = null;
    await client?.close().catch(() => undefined);
  }
}

/** `tandem mcp`: an MCP server on stdio that completes its handshake with or without Tandem running. */
export async function runBridge(opts: BridgeOptions = {}): Promise<void> {
  let clientName: string | null = null;
  const upstream = new Upstream(() => opts.name ?? clientName ?? 'agent', opts);
  const server = createMcpServer((name, args, signal) => upstream.call(name, args, signal));
  server.oninitialized = () => {
    clientName = server.getClientVersion()?.name ?? null;
  };
  const transport = new BridgeStdioTransport((message, line) => upstream.divert(message, line));
  upstream.attach((line) => transport.writeLine(line));
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.on('end', () => resolve());
  });
  await upstream.close();
}
