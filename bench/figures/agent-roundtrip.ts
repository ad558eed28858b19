/**
 * Agent round trip for `echo`: `terminal_send {id, text: 'echo hi'}` until `done`, through the
 * stdio bridge (`tandem mcp`, its own process) and over the HTTP MCP endpoint, against a real
 * instance in a child process. Baselines in the same run, interleaved: bare node-pty with a
 * prompt marker (the physical floor) and a tmux send-keys/capture-pane loop.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { EchoBaselines } from '../lib/echo-baselines.js';
import { HostProcess } from '../lib/host.js';
import { benchProject, bridgeClient, callTool, httpClient } from '../lib/mcp.js';
import { summarize } from '../lib/stats.js';
import type { Figure, Measurement } from '../lib/types.js';

const agent = 'bench';

/** A tool call that touches no PTY: what MCP and the transports cost by themselves. */
async function list(client: Client): Promise<number> {
  const t0 = performance.now();
  await callTool(client, 'terminal_list', {});
  return performance.now() - t0;
}

async function echo(client: Client, id: string): Promise<number> {
  const t0 = performance.now();
  const result = await callTool(client, 'terminal_send', { id, text: 'echo hi' });
  const elapsed = performance.now() - t0;
  if (result.status !== 'done' || result.output !== 'hi') throw new Error(`terminal_send echo hi: ${JSON.stringify(result).slice(0, 200)}`);
  return elapsed;
}

export const agentRoundtripFigure: Figure = {
  id: 'agent-roundtrip',
  title: 'Agent round trip for echo (MCP)',
  rows: [
    {
      name: 'roundtrip.bridge.echo',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 3 },
      description: 'terminal_send {text: "echo hi"} through the stdio bridge (SDK client → tandem mcp → HTTP → host process) until done',
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
    let echoBaselines: EchoBaselines | null = null;
    try {
      host = await HostProcess.start(opts.home, opts.root, { agent });
      const token = host.info.agentToken!;
      http = await httpClient(host, token, benchProject(opts.home));
      const httpTerminal = String((await callTool(http, 'terminal_open', { title: 'bench http', shell: 'bash', cwd: benchProject(opts.home) })).id);
      let bridgeTerminal: string | null = null;
      let bridgeError: string | null = null;
      try {
        bridge = await bridgeClient(host, opts.root, opts.home, agent, token);
        bridgeTerminal = String((await callTool(bridge, 'terminal_open', { title: 'bench bridge', shell: 'bash' })).id);
      } catch (error) {
        bridgeError = (error as Error).message;
      }
      echoBaselines = await EchoBaselines.start(opts.home, notes, Math.min(iterations, opts.pick(100, 10)));
      const viaHttp: number[] = [];
      const viaBridge: number[] = [];
      const listHttp: number[] = [];
      const listBridge: number[] = [];
      for (let i = 0; i < warmup + iterations; i++) {
        const httpMs = await echo(http, httpTerminal);
        const bridgeMs = bridge && bridgeTerminal ? await echo(bridge, bridgeTerminal) : Number.NaN;
        await echoBaselines.measure(i, warmup);
        const listHttpMs = await list(http);
        const listBridgeMs = bridge && bridgeTerminal ? await list(bridge) : Number.NaN;
        if (i < warmup) continue;
        listHttp.push(listHttpMs);
        if (!Number.isNaN(listBridgeMs)) listBridge.push(listBridgeMs);
        viaHttp.push(httpMs);
        if (!Number.isNaN(bridgeMs)) viaBridge.push(bridgeMs);
      }
      const baselines = echoBaselines.series();
      const median = (values: number[]) => summarize(values)?.median.toFixed(2) ?? '?';
      const split = (own: number[]) => `terminal_list (no PTY) on the same path: median ${median(own)} ms`;
      const note = (own: number[]) => [split(own), ...notes].join('; ');
      const out: Measurement[] = [{ row: 'roundtrip.http.echo', samples: viaHttp, baselines, note: note(listHttp) }];
      out.unshift(
        bridgeError
          ? { row: 'roundtrip.bridge.echo', error: bridgeError, baselines, note: notes.join('; ') || undefined }
          : { row: 'roundtrip.bridge.echo', samples: viaBridge, baselines, note: note(listBridge) },
      );
      return out;
    } finally {
      await bridge?.close().catch(() => undefined);
      await http?.close().catch(() => undefined);
      await host?.stop();
      await echoBaselines?.close();
    }
  },
};
