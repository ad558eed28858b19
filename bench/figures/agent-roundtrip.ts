/**
 * Agent round trip for `echo`: `terminal_send {id, text: 'echo hi'}` until `done`, through the
 * stdio bridge (`tandem mcp`, its own process, over the instance's bridge channel) and over the
 * HTTP MCP endpoint, against a real instance in a child process. Baselines in the same run,
 * interleaved: the engine's own round trip (a TerminalSession in this process: what the agent
 * layer and the transport add is the difference), bare node-pty with a prompt marker (the
 * physical floor) and a tmux send-keys/capture-pane loop; for the bridge, the same call through a
 * bare relay process (raw JSON-RPC, and the SDK client) splits the bridge's own cost from the
 * hop's and the client's. The calls of one iteration run in a rotating order: a call right
 * after another pays for the tail of that one's work (its prompt still being parsed) and would
 * otherwise always land on the same row.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { EchoBaselines } from '../lib/echo-baselines.js';
import { expectStatus, SessionScope } from '../lib/engine.js';
import { HostProcess } from '../lib/host.js';
import { benchProject, bridgeClient, callTool, expectHi, httpClient, RawRelayClient, sdkRelayClient, timedEcho as echo } from '../lib/mcp.js';
import { summarize } from '../lib/stats.js';
import type { Figure, Measurement } from '../lib/types.js';

const agent = 'bench';
const relayAgent = 'bench-relay';

/** A tool call that touches no PTY: what MCP and the transports cost by themselves. */
async function list(client: Client): Promise<number> {
  const t0 = performance.now();
  await callTool(client, 'terminal_list', {});
  return performance.now() - t0;
}

export const agentRoundtripFigure: Figure = {
  id: 'agent-roundtrip',
  title: 'Agent round trip for echo (MCP)',
  rows: [
    {
      name: 'roundtrip.bridge.echo',
      unit: 'ms',
      target: { metric: 'over', op: '<=', value: 0.6 },
      description: 'terminal_send {text: "echo hi"} through the stdio bridge (SDK client → tandem mcp → bridge channel → host process) until done',
    },
    {
      name: 'roundtrip.bridge-http.echo',
      unit: 'ms',
      target: null,
      description: 'the same through a bridge that finds no bridgeSocket (an older host: tandem mcp → HTTP → host process), the path before the channel',
    },
    {
      name: 'roundtrip.http.echo',
      unit: 'ms',
      target: null,
      description: 'terminal_send {text: "echo hi"} over the HTTP MCP endpoint (SDK client → host process) until done',
    },
  ],
  async run(opts) {
    const iterations = opts.pick(200, 20);
    const warmup = opts.pick(10, 3);
    const notes: string[] = [];
    let host: HostProcess | null = null;
    let http: Client | null = null;
    let bridge: Client | null = null;
    let legacy: Client | null = null;
    let relayRaw: RawRelayClient | null = null;
    let relaySdk: Client | null = null;
    let echoBaselines: EchoBaselines | null = null;
    const scope = new SessionScope(opts.home);
    try {
      const session = await scope.open('bash');
      // The relay baselines pair as an agent of their own: each agent may hold four terminals.
      host = await HostProcess.start(opts.home, opts.root, { agent, agents: [relayAgent] });
      const token = host.info.agentToken!;
      http = await httpClient(host, token, benchProject(opts.home));
      const httpTerminal = String((await callTool(http, 'terminal_open', { title: 'bench http', shell: 'bash', cwd: benchProject(opts.home) })).id);
      let bridgeTerminal: string | null = null;
      let legacyTerminal: string | null = null;
      let relayRawTerminal: string | null = null;
      let relaySdkTerminal: string | null = null;
      let bridgeError: string | null = null;
      try {
        bridge = await bridgeClient(host, opts.root, opts.home, agent, token);
        bridgeTerminal = String((await callTool(bridge, 'terminal_open', { title: 'bench bridge', shell: 'bash' })).id);
        // instance.json as an older host wrote it: no bridgeSocket, so this bridge relays over HTTP.
        const { bridgeSocket: _channel, ...older } = JSON.parse(readFileSync(join(host.tandemHome, 'instance.json'), 'utf8')) as Record<string, unknown>;
        if (!_channel) throw new Error('the host published no bridgeSocket');
        const olderInstance = join(host.tandemHome, 'older-instance.json');
        writeFileSync(olderInstance, JSON.stringify(older), { mode: 0o600 });
        legacy = await bridgeClient(host, opts.root, opts.home, agent, token, { instance: olderInstance });
        legacyTerminal = String((await callTool(legacy, 'terminal_open', { title: 'bench bridge http', shell: 'bash' })).id);
        const relayToken = host.info.agentTokens[relayAgent]!;
        relayRaw = await RawRelayClient.start(String(_channel), relayToken, benchProject(opts.home));
        relaySdk = await sdkRelayClient(String(_channel), relayToken, benchProject(opts.home));
        relayRawTerminal = String((await relayRaw.call('terminal_open', { title: 'bench relay raw', shell: 'bash' })).id);
        relaySdkTerminal = String((await callTool(relaySdk, 'terminal_open', { title: 'bench relay sdk', shell: 'bash' })).id);
      } catch (error) {
        bridgeError = (error as Error).message;
      }
      echoBaselines = await EchoBaselines.start(opts.home, notes, Math.min(iterations, opts.pick(100, 10)));
      const viaHttp: number[] = [];
      const viaBridge: number[] = [];
      const viaLegacy: number[] = [];
      const listHttp: number[] = [];
      const listBridge: number[] = [];
      const engine: number[] = [];
      const viaRelayRaw: number[] = [];
      const viaRelaySdk: number[] = [];
      const timed = async (call: () => Promise<unknown>): Promise<number> => {
        const t0 = performance.now();
        await call();
        return performance.now() - t0;
      };
      const rawEcho = async (client: RawRelayClient, id: string) => {
        expectHi(await client.call('terminal_send', { id, text: 'echo hi' }), 'bare relay');
      };
      // Each entry measures one call and keeps it (after warm-up) in its series.
      const calls: Array<[number[], () => Promise<number>]> = [
        [engine, () => timed(async () => expectStatus(await session.send({ text: 'echo hi' }), 'done', 'engine echo'))],
        [viaHttp, () => echo(http!, httpTerminal)],
      ];
      if (bridge && bridgeTerminal) calls.push([viaBridge, () => echo(bridge!, bridgeTerminal!)]);
      if (legacy && legacyTerminal) calls.push([viaLegacy, () => echo(legacy!, legacyTerminal!)]);
      if (relayRaw && relayRawTerminal) calls.push([viaRelayRaw, () => timed(() => rawEcho(relayRaw!, relayRawTerminal!))]);
      if (relaySdk && relaySdkTerminal) calls.push([viaRelaySdk, () => echo(relaySdk!, relaySdkTerminal!)]);
      for (let i = 0; i < warmup + iterations; i++) {
        for (let k = 0; k < calls.length; k++) {
          const [series, call] = calls[(i + k) % calls.length]!;
          const ms = await call();
          if (i >= warmup) series.push(ms);
        }
        await echoBaselines.measure(i, warmup);
        const listHttpMs = await list(http);
        const listBridgeMs = bridge && bridgeTerminal ? await list(bridge) : Number.NaN;
        if (i < warmup) continue;
        listHttp.push(listHttpMs);
        if (!Number.isNaN(listBridgeMs)) listBridge.push(listBridgeMs);
      }
      const baselines = [{ name: 'engine.echo', samples: engine }, ...echoBaselines.series()];
      const median = (values: number[]) => summarize(values)?.median.toFixed(2) ?? '?';
      const split = (own: number[]) => `terminal_list (no PTY) on the same path: median ${median(own)} ms`;
      const note = (own: number[]) => [split(own), ...notes].join('; ');
      const out: Measurement[] = [
        bridgeError ? { row: 'roundtrip.bridge-http.echo', error: bridgeError } : { row: 'roundtrip.bridge-http.echo', samples: viaLegacy, baselines },
        { row: 'roundtrip.http.echo', samples: viaHttp, baselines, note: note(listHttp) },
      ];
      out.unshift(
        bridgeError
          ? { row: 'roundtrip.bridge.echo', error: bridgeError, baselines, note: notes.join('; ') || undefined }
          : {
              row: 'roundtrip.bridge.echo',
              samples: viaBridge,
              baselines: [...baselines, { name: 'bare relay, raw JSON-RPC', samples: viaRelayRaw }, { name: 'bare relay, SDK client', samples: viaRelaySdk }],
              note: note(listBridge),
            },
      );
      return out;
    } finally {
      await bridge?.close().catch(() => undefined);
      await legacy?.close().catch(() => undefined);
      await relaySdk?.close().catch(() => undefined);
      relayRaw?.close();
      await http?.close().catch(() => undefined);
      await host?.stop();
      await echoBaselines?.close();
      await scope.closeAll();
    }
  },
};
