/**
 * Soak: four agents calling tools without pause through real stdio bridges against a host in
 * its own process (started with --expose-gc): two keep one terminal each, two open one, make
 * 25 calls on it and close it, over and over. The run has two phases (the second is the last
 * 60 s of the full run); between them every agent stops with only the keepers' terminals open,
 * so the checkpoints compare like with like: heap after forced full collections, RSS and open
 * descriptors. RSS and descriptors are also sampled while the agents run.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { HostProcess, type HostMemory } from '../lib/host.js';
import { bridgeClient, callTool } from '../lib/mcp.js';
import { sleep } from '../lib/procs.js';
import type { Figure, Measurement } from '../lib/types.js';

const keepers = ['soak-keep-1', 'soak-keep-2'];
const churners = ['soak-churn-1', 'soak-churn-2'];
const callsPerTerminal = 25;
const mib = (bytes: number) => bytes / (1024 * 1024);

interface Agent {
  name: string;
  client: Client;
  stderr: string[];
  /** The keeper's terminal, opened once. */
  terminal: string | null;
  calls: number;
  opened: number;
}

/** One call of the mix: mostly cheap sends and lists, with a read now and then. */
async function step(agent: Agent, id: string, i: number): Promise<void> {
  agent.calls += 1;
  if (i % 5 === 0) await callTool(agent.client, 'terminal_list', {});
  else if (i % 5 === 1) await callTool(agent.client, 'terminal_read', { id, count: 20 });
  else if (i % 5 === 2) await callTool(agent.client, 'terminal_send', { id, text: `echo soak-${i}` });
  else await callTool(agent.client, 'terminal_send', { id, text: 'true' });
}

async function keep(agent: Agent, running: () => boolean): Promise<void> {
  for (let i = 0; running(); i++) await step(agent, agent.terminal!, i);
}

async function churn(agent: Agent, running: () => boolean): Promise<void> {
  while (running()) {
    const id = String((await callTool(agent.client, 'terminal_open', { title: 'soak churn', shell: 'bash' })).id);
    agent.calls += 1;
    agent.opened += 1;
    // A phase's end cuts the cycle short: the terminal is closed at once.
    for (let i = 0; i < callsPerTerminal - 2 && running(); i++) await step(agent, id, i);
    await callTool(agent.client, 'terminal_close', { id });
    agent.calls += 1;
  }
}

export const soakFigure: Figure = {
  id: 'soak',
  title: 'Soak: four agents through bridges, host memory and descriptors',
  rows: [
    {
      name: 'soak.calls',
      unit: 'count',
      target: null,
      description: 'tool calls the four agents made over the whole run (120 s full, 2 s quick)',
    },
    {
      name: 'soak.heap-growth.last60s',
      unit: 'MiB',
      target: { metric: 'median', op: '<', value: 5 },
      description: 'host heap after forced full GCs: end of the run minus start of the last phase (60 s full)',
    },
    {
      name: 'soak.rss-growth.last60s',
      unit: 'MiB',
      target: { metric: 'median', op: '<', value: 25 },
      description: 'host RSS at the end of the run minus at the start of the last phase (60 s full)',
    },
    {
      name: 'soak.fd-growth.last60s',
      unit: 'count',
      target: { metric: 'median', op: '<=', value: 0 },
      description: 'host descriptors other than sockets (PTYs, pipes, files) at the end minus at the start of the last phase, the same terminals open at both',
    },
    {
      name: 'soak.bridge-warnings',
      unit: 'count',
      target: { metric: 'median', op: '<=', value: 0 },
      description: 'lines with "Warning" on the four bridges\' stderr (MaxListenersExceededWarning and the like)',
    },
  ],
  async run(opts) {
    const firstPhaseMs = opts.pick(60_000, 1_000);
    const lastPhaseMs = opts.pick(60_000, 1_000);
    const sampleMs = opts.pick(5_000, 500);
    let host: HostProcess | null = null;
    const agents: Agent[] = [];
    try {
      host = await HostProcess.start(opts.home, opts.root, { agents: [...keepers, ...churners], exposeGc: true });
      const started = await Promise.allSettled(
        [...keepers, ...churners].map(async (name) => {
          const stderr: string[] = [];
          const client = await bridgeClient(host!, opts.root, opts.home, name, host!.info.agentTokens[name]!, { onStderr: (text) => stderr.push(text) });
          const agent: Agent = { name, client, stderr, terminal: null, calls: 0, opened: 0 };
          agents.push(agent);
          if (keepers.includes(name)) agent.terminal = String((await callTool(client, 'terminal_open', { title: 'soak keep', shell: 'bash' })).id);
          return agent;
        }),
      );
      const failed = started.find((result) => result.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      // Keepers first, in a fixed order: the loops below pick their role by position.
      agents.sort((a, b) => [...keepers, ...churners].indexOf(a.name) - [...keepers, ...churners].indexOf(b.name));
      const t0 = performance.now();
      const samples: Array<{ s: number; m: HostMemory }> = [];
      const sample = async () => {
        samples.push({ s: (performance.now() - t0) / 1000, m: await host!.memory() });
      };
      const phase = async (ms: number) => {
        let running = true;
        const loops = agents.map((agent, i) => (i < keepers.length ? keep(agent, () => running) : churn(agent, () => running)));
        const sampler = (async () => {
          while (running) {
            await sleep(sampleMs);
            if (running) await sample();
          }
        })();
        await sleep(ms);
        running = false;
        await Promise.all([...loops, sampler]);
      };
      const start = await host.memory(true);
      await phase(firstPhaseMs);
      const middle = await host.memory(true);
      await phase(lastPhaseMs);
      const end = await host.memory(true);
      const calls = agents.reduce((sum, agent) => sum + agent.calls, 0);
      const opened = agents.reduce((sum, agent) => sum + agent.opened, 0);
      const warnings = agents.flatMap((agent) => agent.stderr.join('').split('\n').filter((line) => /warning/i.test(line)).map((line) => `${agent.name}: ${line.trim()}`));
      const seconds = (firstPhaseMs + lastPhaseMs) / 1000;
      const heapText = (m: HostMemory) => mib(m.heapUsed).toFixed(1);
      // Where RSS that is not live heap sits: V8's committed heap, and memory outside it.
      const splitText = (m: HostMemory) => `${mib(m.heapTotal).toFixed(0)}/${mib(m.external).toFixed(0)}/${mib(m.arrayBuffers).toFixed(0)}`;
      const fdText = (m: HostMemory) => `${m.fds ?? '?'} (${m.sockets ?? '?'} sockets)`;
      const series = samples.map((p) => `${p.s.toFixed(0)}s ${mib(p.m.rss).toFixed(0)}/${p.m.fds ?? '?'}/${p.m.sockets ?? '?'}`).join(', ');
      const note = [
        `${calls} calls in ${seconds} s (${(calls / seconds).toFixed(0)}/s), ${opened} terminals opened and closed`,
        `heap after GC: start ${heapText(start)}, after ${firstPhaseMs / 1000} s ${heapText(middle)}, end ${heapText(end)} MiB`,
        `V8 heap committed/external/array buffers ${splitText(start)} → ${splitText(middle)} → ${splitText(end)} MiB`,
        `RSS ${mib(start.rss).toFixed(0)} → ${mib(middle.rss).toFixed(0)} → ${mib(end.rss).toFixed(0)} MiB; descriptors ${fdText(start)} → ${fdText(middle)} → ${fdText(end)}`,
        `RSS MiB/descriptors/sockets while running: ${series}`,
      ].join('; ');
      const out: Measurement[] = [
        { row: 'soak.calls', samples: [calls], note },
        { row: 'soak.heap-growth.last60s', samples: [mib(end.heapUsed - middle.heapUsed)] },
        { row: 'soak.rss-growth.last60s', samples: [mib(end.rss - middle.rss)] },
        end.fds === null || middle.fds === null
          ? { row: 'soak.fd-growth.last60s', status: 'skipped', note: 'descriptors are counted from /proc (Linux only)' }
          : { row: 'soak.fd-growth.last60s', samples: [end.fds - end.sockets! - (middle.fds - middle.sockets!)] },
        { row: 'soak.bridge-warnings', samples: [warnings.length], note: warnings.slice(0, 2).join(' | ') || undefined },
      ];
      return out;
    } finally {
      for (const agent of agents) await agent.client.close().catch(() => undefined);
      await host?.stop();
    }
  },
};
