/**
 * The first command of a fresh bash terminal: `echo hi` right after the terminal opened, at the
 * engine (a new TerminalSession) and through the stdio bridge (`terminal_open`, then the first
 * `terminal_send`). Each sample is a fresh terminal. Through the bridge, each sample is also a
 * fresh instance and bridge: its first terminal shows the processes' one-time warm-up (V8
 * compiling the send path on first use) in a row of its own, its second terminal (the first
 * closed) the cost of a fresh terminal alone. The baseline is the steady state of the same
 * terminals: the sends that follow the first.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expectStatus, SessionScope } from '../lib/engine.js';
import { HostProcess } from '../lib/host.js';
import { bridgeClient, callTool, timedEcho as echo } from '../lib/mcp.js';
import type { Figure, Measurement } from '../lib/types.js';

const agent = 'bench';
/** Sends after the first one in each terminal, kept as the steady-state baseline. */
const steadySends = 5;

export const firstCommandFigure: Figure = {
  id: 'first-command',
  title: 'First command of a fresh bash terminal',
  rows: [
    {
      name: 'roundtrip.first-command.echo',
      unit: 'ms',
      target: { metric: 'ratio', op: '<=', value: 2 },
      description: 'the first session.send({text: "echo hi"}) of a new bash session, against the later sends of the same sessions',
    },
    {
      name: 'roundtrip.first-command.bridge',
      unit: 'ms',
      target: { metric: 'ratio', op: '<=', value: 2 },
      description:
        'the first terminal_send echo hi of a new terminal through the stdio bridge, in an instance that has run a terminal before, against the later sends of the same terminals',
    },
    {
      name: 'roundtrip.first-command.fresh-instance',
      unit: 'ms',
      target: null,
      description: 'the same in the first terminal of a new instance and bridge: the processes compile the send path on first use',
    },
  ],
  async run(opts) {
    const engineSamples = opts.pick(20, 2);
    const bridgeSamples = opts.pick(10, 1);
    const out: Measurement[] = [];
    const scope = new SessionScope(opts.home);
    try {
      const first: number[] = [];
      const steady: number[] = [];
      for (let i = 0; i < engineSamples; i++) {
        const session = await scope.open('bash');
        for (let j = 0; j <= steadySends; j++) {
          const t0 = performance.now();
          const result = await session.send({ text: 'echo hi' });
          const elapsed = performance.now() - t0;
          expectStatus(result, 'done', 'echo');
          (j === 0 ? first : steady).push(elapsed);
        }
        await scope.close(session);
      }
      out.push({ row: 'roundtrip.first-command.echo', samples: first, baselines: [{ name: 'engine.steady.echo', samples: steady }] });
    } finally {
      await scope.closeAll();
    }
    const freshInstance: number[] = [];
    const first: number[] = [];
    const steady: number[] = [];
    try {
      for (let i = 0; i < bridgeSamples; i++) {
        const host = await HostProcess.start(opts.home, opts.root, { agent });
        let bridge: Client | null = null;
        try {
          bridge = await bridgeClient(host, opts.root, opts.home, agent, host.info.agentToken!);
          for (const firstOf of [freshInstance, first]) {
            const id = String((await callTool(bridge, 'terminal_open', { title: 'bench first', shell: 'bash' })).id);
            for (let j = 0; j <= steadySends; j++) (j === 0 ? firstOf : steady).push(await echo(bridge, id));
            await callTool(bridge, 'terminal_close', { id });
          }
        } finally {
          await bridge?.close().catch(() => undefined);
          await host.stop();
        }
      }
      const baselines = [{ name: 'bridge.steady.echo', samples: steady }];
      out.push({ row: 'roundtrip.first-command.bridge', samples: first, baselines });
      out.push({ row: 'roundtrip.first-command.fresh-instance', samples: freshInstance, baselines });
    } catch (error) {
      out.push({ row: 'roundtrip.first-command.bridge', error: (error as Error).message });
    }
    return out;
  },
};
