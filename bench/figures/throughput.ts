/**
 * Throughput of a colored `yes | head -c` stream from the PTY to a connected WebSocket client
 * (a real instance in a child process; the client in the bench process acknowledges every
 * frame as it arrives), and the host's event-loop delay during that flood. Baselines in the same
 * run, interleaved: node-pty reading the same stream in the bench process, a bare relay
 * process sending node-pty's reads to a WebSocket client (ws-relay.ts), and a bare
 * @xterm/headless parse of the same characters. Rates are output characters received per
 * second (the PTY turns each `\n` into `\r\n`, so a bit more than the stream's size).
 */
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { BareMarkerShell } from '../lib/bare-pty.js';
import { HostProcess, type LoopDelay } from '../lib/host.js';
import { summarize } from '../lib/stats.js';
import type { Figure } from '../lib/types.js';
import { BenchWsClient, waitForText } from '../lib/ws-client.js';
import { BareWsRelay } from '../lib/ws-relay.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

const MiB = 2 ** 20;
const cols = 120;
const rows = 30;
/** One line of the stream as `yes` prints it (29 bytes). */
const line = '\x1b[32mgreen line of text\x1b[0m\n';

function floodCommand(bytes: number): string {
  return `yes "$(printf '\\033[32mgreen line of text\\033[0m')" | head -c ${bytes}`;
}

/** The characters a PTY delivers for `floodCommand(bytes)` (onlcr: `\n` → `\r\n`). */
function streamText(bytes: number): string {
  const whole = Math.floor(bytes / line.length);
  const rest = line.slice(0, bytes % line.length);
  return line.replace('\n', '\r\n').repeat(whole) + rest.replace('\n', '\r\n');
}

/**
 * Parses `text` in PTY-sized chunks on a bare headless terminal, keeping a few MiB queued (xterm
 * refuses more than 50 MB pending) so the parser never idles; resolves with the milliseconds taken.
 */
async function headlessParse(text: string): Promise<number> {
  const term = new Terminal({ cols, rows, scrollback: 1000, allowProposedApi: true });
  try {
    const chunk = 64 * 1024;
    const maxQueued = 64;
    const parsed: Array<Promise<void>> = [];
    const t0 = performance.now();
    for (let at = 0; at < text.length; at += chunk) {
      parsed.push(new Promise<void>((resolve) => term.write(text.slice(at, at + chunk), resolve)));
      if (parsed.length > maxQueued) await parsed[parsed.length - 1 - maxQueued / 2];
    }
    await parsed[parsed.length - 1];
    return performance.now() - t0;
  } finally {
    term.dispose();
  }
}

const rate = (chars: number, ms: number) => chars / MiB / (ms / 1000);

export const throughputFigure: Figure = {
  id: 'throughput',
  title: 'Throughput to a WebSocket client',
  rows: [
    {
      name: 'throughput.websocket.64mib',
      unit: 'MiB/s',
      target: { metric: 'ratio', op: '>=', value: 0.8 },
      description:
        '64 MiB colored `yes | head -c` (4 MiB in quick mode) from the PTY through the host process to a WebSocket client that acks as the UI does (ack-batcher.ts); baselines: node-pty reading the same stream, a bare relay process sending those reads to a WebSocket client, a bare @xterm/headless parse of it',
    },
    {
      name: 'throughput.event-loop-delay.p99',
      unit: 'ms',
      target: { metric: 'median', op: '<', value: 50 },
      description: "the host process's event-loop delay p99 during each flood (perf_hooks.monitorEventLoopDelay, 1 ms resolution)",
    },
  ],
  async run(opts) {
    const bytes = opts.pick(64, 4) * MiB;
    const rounds = opts.pick(3, 1);
    let host: HostProcess | null = null;
    let client: BenchWsClient | null = null;
    let bare: BareMarkerShell | null = null;
    let relay: BareWsRelay | null = null;
    try {
      host = await HostProcess.start(opts.home, opts.root);
      client = await BenchWsClient.connect(host.info.origin, host.info.login);
      const ws = client;
      const terminal = await ws.call<{ id: string }>('create', { shell: 'bash', cwd: opts.home, cols, rows, title: 'bench flood' });
      const { attachmentId } = await ws.call<{ attachmentId: string }>('attach', { id: terminal.id, cols, rows });
      bare = await BareMarkerShell.start(opts.home, cols, rows);
      relay = await BareWsRelay.start(opts.home, opts.root, cols, rows);
      const text = streamText(bytes);

      let marker = 0;
      /** One flood through the host to the client: characters received and milliseconds. */
      const viaWebSocket = async (size: number) => {
        const tag = `-R${++marker}-`;
        const done = waitForText(ws, attachmentId, `BENCH${tag}END`, 300_000);
        const before = ws.received;
        const frames = ws.frames;
        const t0 = performance.now();
        ws.type(attachmentId, `${floodCommand(size)}; printf 'BENCH%sEND\\n' ${tag}\r`);
        await done;
        const ms = performance.now() - t0;
        // Nothing of this flood may run behind the next measurement.
        const after = await host!.command<{ skippedChars: number; drainMs: number }>('terminal', { id: terminal.id });
        return { chars: ws.received - before, ms, pieces: ws.frames - frames, ...after };
      };
      const viaBareRelay = async (size: number) => {
        const tag = `-B${++marker}-`;
        const done = relay!.until(`BENCH${tag}END`, 300_000);
        const before = relay!.received;
        const t0 = performance.now();
        relay!.type(`${floodCommand(size)}; printf 'BENCH%sEND\\n' ${tag}\r`);
        await done;
        return { chars: relay!.received - before, ms: performance.now() - t0 };
      };
      const viaBarePty = async (size: number) => {
        const before = bare!.received;
        const reads = bare!.reads;
        const t0 = performance.now();
        await bare!.roundTrip(floodCommand(size));
        return { chars: bare!.received - before, ms: performance.now() - t0, pieces: bare!.reads - reads };
      };

      // Warm-up: the shell is at its prompt, the JIT has seen the paths.
      const warm = waitForText(ws, attachmentId, 'BENCH-W-END', 10_000);
      ws.type(attachmentId, `printf 'BENCH%sEND\\n' -W-\r`);
      await warm;
      await viaWebSocket(MiB);
      await viaBarePty(MiB);
      await viaBareRelay(MiB);
      await headlessParse(streamText(MiB));

      const wsRates: number[] = [];
      const ptyRates: number[] = [];
      const relayRates: number[] = [];
      const xtermRates: number[] = [];
      const delays: LoopDelay[] = [];
      const clientCpu: number[] = [];
      const frameKiB: number[] = [];
      const readKiB: number[] = [];
      const drains: number[] = [];
      let skippedChars = 0;
      for (let round = 0; round < rounds; round++) {
        await host.startLoopDelay();
        const cpu0 = process.cpuUsage();
        const viaWs = await viaWebSocket(bytes);
        const cpu = process.cpuUsage(cpu0);
        delays.push(await host.stopLoopDelay());
        drains.push(viaWs.drainMs);
        skippedChars = viaWs.skippedChars;
        clientCpu.push((cpu.user + cpu.system) / 1000 / viaWs.ms);
        wsRates.push(rate(viaWs.chars, viaWs.ms));
        frameKiB.push(viaWs.chars / viaWs.pieces / 1024);
        const raw = await viaBarePty(bytes);
        readKiB.push(raw.chars / raw.pieces / 1024);
        ptyRates.push(rate(raw.chars, raw.ms));
        const relayed = await viaBareRelay(bytes);
        relayRates.push(rate(relayed.chars, relayed.ms));
        xtermRates.push(rate(text.length, await headlessParse(text)));
      }
      if (ws.ackErrors.length > 0) throw new Error(`acknowledgements failed: ${ws.ackErrors[0]}`);
      const med = (values: number[]) => summarize(values)?.median ?? Number.NaN;
      const hostCpu = med(delays.map((d) => (d.cpuUserMs + d.cpuSystemMs) / d.wallMs));
      const note =
        `${(bytes / MiB).toFixed(0)} MiB stream (${(text.length / MiB).toFixed(1)} MiB through the PTY) × ${rounds}; ` +
        `CPU time per wall second during the flood (all threads, 100% = one core): host process ${(100 * hostCpu).toFixed(0)}%, client ${(100 * med(clientCpu)).toFixed(0)}%; ` +
        `flow control paused the PTY ${med(delays.map((d) => d.pauses)).toFixed(0)} times for ${(100 * med(delays.map((d) => d.pausedMs / d.wallMs))).toFixed(0)}% of the flood; ` +
        `mean output frame ${med(frameKiB).toFixed(1)} KiB (raw node-pty read: ${med(readKiB).toFixed(1)} KiB); ` +
        `the host's emulator skipped ${(skippedChars / MiB).toFixed(1)} MiB it could not parse in time and finished parsing ${med(drains).toFixed(0)} ms after the client had everything`;
      return [
        {
          row: 'throughput.websocket.64mib',
          samples: wsRates,
          baselines: [
            { name: 'raw node-pty reading the stream', samples: ptyRates },
            { name: 'bare relay process to a WebSocket client', samples: relayRates },
            { name: 'bare @xterm/headless parse', samples: xtermRates },
          ],
          note,
        },
        {
          row: 'throughput.event-loop-delay.p99',
          samples: delays.map((d) => d.p99),
          note: `per flood: p50 ${delays.map((d) => d.p50.toFixed(1)).join(', ')} ms, max ${delays.map((d) => d.max.toFixed(0)).join(', ')} ms`,
        },
      ];
    } finally {
      await client?.close();
      await host?.stop();
      await bare?.close();
      await relay?.close();
    }
  },
};
