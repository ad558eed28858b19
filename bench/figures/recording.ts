/**
 * What recording (src/main/record) costs: the same colored flood as `throughput`, through a
 * host that records every byte of it (the per-terminal bound raised to 1 GiB so the whole flood
 * is kept) against a host with recording off, interleaved round by round; and the host
 * process's CPU with one terminal idle at its prompt, recording on against off.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HostProcess } from '../lib/host.js';
import type { Figure } from '../lib/types.js';
import { BenchWsClient, waitForText } from '../lib/ws-client.js';

const MiB = 2 ** 20;
const cols = 120;
const rows = 30;
const floodCommand = (bytes: number) => `yes "$(printf '\\033[32mgreen line of text\\033[0m')" | head -c ${bytes}`;

interface Side {
  host: HostProcess;
  ws: BenchWsClient;
  attachmentId: string;
}

async function side(home: string, root: string, recording: boolean): Promise<Side> {
  const host = await HostProcess.start(home, root, {
    settings: recording ? { recording: true, recordingMaxMiB: 1024, recordingTotalMiB: 100_000 } : { recording: false },
  });
  const ws = await BenchWsClient.connect(host.info.origin, host.info.login);
  const terminal = await ws.call<{ id: string }>('create', { shell: 'bash', cwd: home, cols, rows, title: recording ? 'recorded' : 'not recorded' });
  const { attachmentId } = await ws.call<{ attachmentId: string }>('attach', { id: terminal.id, cols, rows });
  return { host, ws, attachmentId };
}

let marker = 0;
async function flood(s: Side, bytes: number): Promise<number> {
  const tag = `-F${++marker}-`;
  const done = waitForText(s.ws, s.attachmentId, `BENCH${tag}END`, 300_000);
  const before = s.ws.received;
  const t0 = performance.now();
  s.ws.type(s.attachmentId, `${floodCommand(bytes)}; printf 'BENCH%sEND\\n' ${tag}\r`);
  await done;
  return (s.ws.received - before) / MiB / ((performance.now() - t0) / 1000);
}

/** The bytes of every .cast the host has written: the figure is honest only if the flood is in them. */
function castBytes(s: Side): number {
  const dir = join(s.host.tandemHome, 'recordings');
  let total = 0;
  for (const name of readdirSync(dir)) if (name.endsWith('.cast')) total += statSync(join(dir, name)).size;
  return total;
}

async function idleCpu(s: Side, seconds: number): Promise<number> {
  await s.host.startLoopDelay();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const d = await s.host.stopLoopDelay();
  return (100 * (d.cpuUserMs + d.cpuSystemMs)) / d.wallMs;
}

export const recordingFigure: Figure = {
  id: 'recording',
  title: 'Recording (asciicast v3 and timeline) against none',
  rows: [
    {
      name: 'recording.flood.64mib',
      unit: 'MiB/s',
      target: { metric: 'ratio', op: '>=', value: 0.95 },
      description:
        '64 MiB colored `yes | head -c` (4 MiB in quick mode) to a WebSocket client, the host recording all of it (redacted, batched, written off the output path); baseline: the same through a host with recording off, interleaved',
    },
    {
      name: 'recording.idle-prompt-cpu',
      unit: '%',
      target: { metric: 'over', op: '<=', value: 0.1 },
      description:
        "the host process's CPU (all threads, % of one core) over 20 s with one terminal at its prompt and a viewer attached, recording on; baseline: recording off, measured at the same time",
    },
  ],
  async run(opts) {
    const bytes = opts.pick(64, 4) * MiB;
    const rounds = opts.pick(3, 1);
    const seconds = opts.pick(20, 2);
    let on: Side | null = null;
    let off: Side | null = null;
    try {
      on = await side(opts.home, opts.root, true);
      off = await side(opts.home, opts.root, false);
      await flood(on, MiB);
      await flood(off, MiB);
      const onRates: number[] = [];
      const offRates: number[] = [];
      for (let round = 0; round < rounds; round++) {
        // Alternating which goes first: a machine that slows over the run favours neither.
        if (round % 2 === 0) {
          onRates.push(await flood(on, bytes));
          offRates.push(await flood(off, bytes));
        } else {
          offRates.push(await flood(off, bytes));
          onRates.push(await flood(on, bytes));
        }
      }
      // Past the flood's tail: the recorder's batches are written, the emulator has parsed.
      await new Promise((resolve) => setTimeout(resolve, opts.pick(3000, 200)));
      // The recorded side must hold every flood byte (JSON-escaped, so more), the other none.
      const recorded = castBytes(on);
      if (recorded < rounds * bytes + MiB)
        throw new Error(`the recording holds ${(recorded / MiB).toFixed(1)} MiB of ${(rounds * bytes + MiB) / MiB} MiB flooded`);
      const offRecorded = (() => {
        try {
          return castBytes(off);
        } catch {
          return 0;
        }
      })();
      if (offRecorded > 0) throw new Error(`recording off still wrote ${offRecorded} bytes`);
      const onCpu: number[] = [];
      const offCpu: number[] = [];
      for (let i = 0; i < opts.pick(3, 1); i++) {
        const [a, b] = await Promise.all([idleCpu(on, seconds), idleCpu(off, seconds)]);
        onCpu.push(a);
        offCpu.push(b);
      }
      return [
        {
          row: 'recording.flood.64mib',
          samples: onRates,
          baselines: [{ name: 'recording off', samples: offRates }],
          note: `${bytes / MiB} MiB × ${rounds}, the whole flood recorded (${(recorded / MiB).toFixed(0)} MiB of .cast)`,
        },
        {
          row: 'recording.idle-prompt-cpu',
          samples: onCpu,
          baselines: [{ name: 'recording off', samples: offCpu }],
          note: `${seconds} s windows, both hosts side by side`,
        },
      ];
    } finally {
      await on?.ws.close();
      await off?.ws.close();
      await on?.host.stop();
      await off?.host.stop();
    }
  },
};
