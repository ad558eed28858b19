/**
 * A real Tandem instance in its own process, so a bench client never shares the host's event
 * loop: the runtime (instance lock, TerminalHost, AgentLayer, WebServer on 127.0.0.1 with /ws,
 * /mcp and /pair), as `tandem serve` starts it.
 *
 *   node [--expose-gc] --import tsx bench/probes/host-child.ts --renderer DIR [--agent NAME]...
 *
 * Environment: TANDEM_HOME (the state directory) and HOME as the bench sets them. Prints one
 * line `BENCH-HOST-READY <json>` (origin, login token, agent tokens), then answers one JSON
 * command per stdin line with `BENCH-HOST <json>`:
 *   {id, cmd: 'eld-start'}            starts an event-loop delay histogram (and a CPU counter)
 *   {id, cmd: 'eld-stop'}             stops it: p50/p99/max/mean delay in ms, CPU ms used, and
 *                                     how often and how long flow control paused a PTY
 *   {id, cmd: 'terminal', args: {id}} waits until the terminal's emulator has parsed everything
 *                                     received; how long that took, and what it skipped
 *   {id, cmd: 'memory', args: {gc}}   heap, RSS, open descriptors and sockets among them; with gc
 *                                     (and --expose-gc) after forced full collections
 *   {id, cmd: 'stop'}                 tears everything down and exits
 * End of stdin or SIGTERM also stop it.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { writeHeapSnapshot } from 'node:v8';
import { type Runtime, startRuntime } from '../../src/main/runtime.js';
import { TerminalSession } from '../../src/main/terminal/session/session.js';

const { values } = parseArgs({ options: { renderer: { type: 'string' }, agent: { type: 'string', multiple: true } } });

function send(line: string): void {
  process.stdout.write(`${line}\n`);
}

let runtime: Runtime | null = null;
let stopping: Promise<void> | null = null;

function stop(code = 0): Promise<void> {
  stopping ??= (async () => {
    try {
      await runtime?.stop();
    } finally {
      process.exit(code);
    }
  })();
  return stopping;
}

interface Command {
  id: number;
  cmd: string;
  args?: Record<string, unknown>;
}

/**
 * Flow-control accounting for the measurement window: how often, and how long, the host kept a
 * PTY paused because its viewers were behind (observed on TerminalSession, nothing changed).
 */
const flow = { pauses: 0, pausedMs: 0, pausedSince: 0 };
const { pause, resume } = TerminalSession.prototype;
TerminalSession.prototype.pause = function (this: TerminalSession) {
  if (flow.pausedSince === 0) {
    flow.pauses += 1;
    flow.pausedSince = performance.now();
  }
  pause.call(this);
};
TerminalSession.prototype.resume = function (this: TerminalSession) {
  if (flow.pausedSince !== 0) {
    flow.pausedMs += performance.now() - flow.pausedSince;
    flow.pausedSince = 0;
  }
  resume.call(this);
};

/** Open descriptors, and how many of them are sockets (HTTP keep-alive connections come and go). */
function openDescriptors(): { all: number; sockets: number } {
  const fds = readdirSync('/proc/self/fd');
  let sockets = 0;
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:')) sockets += 1;
    } catch {
      // Closed while listing (the directory's own descriptor, for one).
    }
  }
  return { all: fds.length, sockets };
}

let histogram: IntervalHistogram | null = null;
let cpuStart: NodeJS.CpuUsage | null = null;
let wallStart = 0;

async function handle(command: Command): Promise<unknown> {
  switch (command.cmd) {
    case 'eld-start': {
      histogram?.disable();
      // 1 ms resolution: the sampling timer itself is cheap, and delays are reported beyond it.
      histogram = monitorEventLoopDelay({ resolution: 1 });
      histogram.enable();
      cpuStart = process.cpuUsage();
      wallStart = performance.now();
      flow.pauses = 0;
      flow.pausedMs = 0;
      if (flow.pausedSince !== 0) flow.pausedSince = wallStart;
      return {};
    }
    case 'eld-stop': {
      if (!histogram || !cpuStart) throw new Error('eld-start first');
      histogram.disable();
      const cpu = process.cpuUsage(cpuStart);
      const ms = (ns: number) => ns / 1e6;
      const result = {
        p50: ms(histogram.percentile(50)),
        p99: ms(histogram.percentile(99)),
        max: ms(histogram.max),
        mean: ms(histogram.mean),
        samples: histogram.count,
        cpuUserMs: cpu.user / 1000,
        cpuSystemMs: cpu.system / 1000,
        wallMs: performance.now() - wallStart,
        pauses: flow.pauses,
        pausedMs: flow.pausedMs + (flow.pausedSince !== 0 ? performance.now() - flow.pausedSince : 0),
      };
      histogram = null;
      cpuStart = null;
      return result;
    }
    case 'terminal': {
      // Waits until the host's emulator has parsed everything received (nothing runs behind the next measurement).
      const session = runtime!.host.get(String(command.args?.id ?? '')).session;
      const t0 = performance.now();
      await session.drained();
      return { skippedChars: session.headless.skippedChars, drainMs: performance.now() - t0 };
    }
    case 'memory': {
      if (command.args?.gc) {
        if (typeof globalThis.gc !== 'function') throw new Error('start the host with --expose-gc');
        // Two passes with a turn between: finalizers (FinalizationRegistry, weak callbacks) run after the first.
        globalThis.gc();
        await new Promise((resolve) => setTimeout(resolve, 50));
        globalThis.gc();
      }
      const usage = process.memoryUsage();
      const fds = process.platform === 'linux' ? openDescriptors() : null;
      return {
        heapUsed: usage.heapUsed,
        heapTotal: usage.heapTotal,
        rss: usage.rss,
        external: usage.external,
        arrayBuffers: usage.arrayBuffers,
        fds: fds?.all ?? null,
        sockets: fds?.sockets ?? null,
      };
    }
    case 'heap-snapshot': {
      // Diagnostics of the soak (BENCH_HEAP_SNAPSHOTS): what the live heap holds, for bench/heap-diff.mjs.
      if (typeof globalThis.gc === 'function') globalThis.gc();
      return { path: writeHeapSnapshot(String(command.args?.path ?? '')) };
    }
    case 'stop':
      setImmediate(() => void stop(0));
      return {};
    default:
      throw new Error(`unknown command ${command.cmd}`);
  }
}

async function main(): Promise<void> {
  runtime = await startRuntime({
    env: process.env,
    port: 0,
    allowOrigins: [],
    trustLocalAgents: false,
    rendererDir: values.renderer ?? null,
    bridge: { command: 'tandem', args: ['mcp'] },
  });
  const agentTokens: Record<string, string> = {};
  for (const name of values.agent ?? []) {
    agentTokens[name] = runtime.agents.pairAgent({ name }).token;
    runtime.agents.setAgentPolicy({ name, policy: 'always' });
  }
  const agentToken = values.agent?.[0] ? agentTokens[values.agent[0]]! : null;
  const login = /#login=(.+)$/.exec(runtime.server.loginUrl())?.[1] ?? null;
  send(`BENCH-HOST-READY ${JSON.stringify({ origin: runtime.server.origin, port: runtime.server.port, login, agentToken, agentTokens, pid: process.pid })}`);
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    let command: Command;
    try {
      command = JSON.parse(line) as Command;
    } catch {
      return;
    }
    handle(command).then(
      (value) => send(`BENCH-HOST ${JSON.stringify({ id: command.id, ok: true, value })}`),
      (error: unknown) => send(`BENCH-HOST ${JSON.stringify({ id: command.id, ok: false, error: (error as Error).message })}`),
    );
  });
  lines.on('close', () => void stop(0));
}

process.on('SIGTERM', () => void stop(0));
process.on('SIGINT', () => void stop(0));

main().catch((error: unknown) => {
  process.stderr.write(`host-child: ${(error as Error).stack ?? String(error)}\n`);
  void stop(1);
});
