/**
 * Soak: four agents calling tools without pause through real stdio bridges against a host in
 * its own process (started with --expose-gc): two keep one terminal each, two open one, make
 * 25 calls on it and close it, over and over. Every result is checked (an echo's output is what
 * was sent, a read shows the last echo, a list holds the terminal); a wrong one counts as an
 * error. The run has two phases; between them every agent stops with only the kept terminals
 * open, so the checkpoints compare like with like: heap after forced full collections, RSS and
 * open descriptors. RSS and descriptors are also sampled while the agents run.
 *
 * The short run (120 s, the last phase 60 s) is the ordinary bench's. `--soak N` runs N seconds
 * (the last phase its last third) with a person's terminal besides: a WebSocket viewer attached
 * as the UI attaches, a flood (`seq 1 2000000`) every minute and a reload every five (the viewer
 * disconnects, opens /ws again with its session secret, lists and attaches, and the snapshot must
 * show what its previous view showed). Samples (heap after GC, RSS, descriptors, calls, errors)
 * every 5 s go to a JSON file that `bench/plot-soak.mjs` draws.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { HostProcess, type HostMemory } from '../lib/host.js';
import { bridgeClient, callTool } from '../lib/mcp.js';
import { sleep } from '../lib/procs.js';
import type { BenchOptions, Figure, Measurement } from '../lib/types.js';
import { BenchWsClient, waitForText } from '../lib/ws-client.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

const keepers = ['soak-keep-1', 'soak-keep-2'];
const churners = ['soak-churn-1', 'soak-churn-2'];
const callsPerTerminal = 25;
const mib = (bytes: number) => bytes / (1024 * 1024);
/** Error messages kept for the report (all are counted). */
const keptErrors = 50;

/** Wrong or failed results, from agents and the person alike. */
class Errors {
  count = 0;
  readonly first: string[] = [];
  add(message: string): void {
    this.count += 1;
    if (this.first.length < keptErrors) this.first.push(message.slice(0, 300));
  }
}

interface Agent {
  name: string;
  client: Client;
  stderr: string[];
  /** The keeper's terminal, opened once, and its rows. */
  terminal: string | null;
  rows: number;
  calls: number;
  opened: number;
}

function wrong(what: string, result: Record<string, unknown>): Error {
  return new Error(`${what}: ${JSON.stringify(result).slice(0, 200)}`);
}

/** One call of the mix: mostly cheap sends and lists, with a read now and then; the result is checked. */
async function step(agent: Agent, id: string, rows: number, i: number): Promise<void> {
  agent.calls += 1;
  if (i % 5 === 0) {
    const result = await callTool(agent.client, 'terminal_list', {});
    const terminals = result.terminals as Array<{ id: string }> | undefined;
    if (!terminals?.some((t) => t.id === id)) throw wrong(`terminal_list without ${id}`, result);
  } else if (i % 5 === 1) {
    const result = await callTool(agent.client, 'terminal_read', { id, count: 20 });
    if (typeof result.text !== 'string') throw wrong('terminal_read', result);
    // The last echo's output, four calls ago, is three lines above the cursor (two `true` and the
    // prompt since), a line or two more where a send's typeahead was echoed before the prompt; the
    // newest 20 lines count the screen's empty rows below the cursor, so it is in the text only
    // once the cursor is low enough.
    const screenRow = (result.screen as { row?: number } | undefined)?.row ?? 0;
    const echoLine = Number(result.totalLines) - rows + screenRow - 3;
    if (i > 5 && echoLine - 3 >= Number(result.lineBegin) && !result.text.includes(`soak-${i - 4}`)) {
      // The whole read, since the echo is looked for at its end: the line arithmetic above is part of the question.
      const { text, ...rest } = result;
      throw new Error(`terminal_read without soak-${i - 4}: ${JSON.stringify(rest)} text=${JSON.stringify(text)}`);
    }
  } else if (i % 5 === 2) {
    const result = await callTool(agent.client, 'terminal_send', { id, text: `echo soak-${i}` });
    if (result.status !== 'done' || result.exitCode !== 0 || result.output !== `soak-${i}`) throw wrong(`echo soak-${i}`, result);
  } else {
    const result = await callTool(agent.client, 'terminal_send', { id, text: 'true' });
    if (result.status !== 'done' || result.exitCode !== 0 || result.output !== '') throw wrong('true', result);
  }
}

/** A failed call is counted and the agent goes on (after a breath, so a broken host is not hammered). */
async function checked(errors: Errors, agent: Agent, what: () => Promise<void>): Promise<boolean> {
  try {
    await what();
    return true;
  } catch (error) {
    errors.add(`${agent.name}: ${(error as Error).message}`);
    await sleep(100);
    return false;
  }
}

async function keep(agent: Agent, running: () => boolean, errors: Errors): Promise<void> {
  for (let i = 0; running(); i++) await checked(errors, agent, () => step(agent, agent.terminal!, agent.rows, i));
}

async function churn(agent: Agent, running: () => boolean, errors: Errors): Promise<void> {
  while (running()) {
    let id = '';
    let rows = 0;
    agent.calls += 1;
    const opened = await checked(errors, agent, async () => {
      const result = await callTool(agent.client, 'terminal_open', { title: 'soak churn', shell: 'bash' });
      if (typeof result.id !== 'string' || typeof result.rows !== 'number') throw wrong('terminal_open', result);
      id = result.id;
      rows = result.rows;
    });
    if (!opened) continue;
    agent.opened += 1;
    // A phase's end cuts the cycle short: the terminal is closed at once.
    for (let i = 0; i < callsPerTerminal - 2 && running(); i++) await checked(errors, agent, () => step(agent, id, rows, i));
    agent.calls += 1;
    await checked(errors, agent, async () => {
      const result = await callTool(agent.client, 'terminal_close', { id });
      if (result.closed !== true) throw wrong('terminal_close', result);
    });
  }
}

/** Characters `seq 1 n` prints through a PTY (each line ends in \r\n). */
function seqChars(n: number): number {
  let chars = 0;
  for (let digits = 1, low = 1; low <= n; digits++, low *= 10) chars += (Math.min(n, low * 10 - 1) - low + 1) * (digits + 2);
  return chars;
}

function written(term: HeadlessTerminal, data: string): Promise<void> {
  return new Promise((resolve) => term.write(data, resolve));
}

/** What a view shows: its visible lines (right-trimmed) and cursor. */
function screen(term: HeadlessTerminal): { lines: string[]; cursor: string } {
  const buffer = term.buffer.active;
  const lines: string[] = [];
  for (let row = 0; row < term.rows; row++) lines.push(buffer.getLine(buffer.baseY + row)?.translateToString(true) ?? '');
  return { lines, cursor: `${buffer.cursorY},${buffer.cursorX}` };
}

const floodLines = 2_000_000;

/**
 * A person's terminal in the UI: a viewer over /ws that keeps a headless xterm as its screen
 * (snapshot, then every frame in order), acknowledges as the renderer does, floods and reloads.
 */
class Person {
  private client!: BenchWsClient;
  private mirror: HeadlessTerminal | null = null;
  private attachmentId: string | null = null;
  private seq = 0;
  /** Frames that arrived before their attach call's continuation ran (the renderer keeps them too). */
  private early: Array<{ attachmentId: string; seq: number; data: string }> = [];
  private terminalId = '';
  floods: Array<{ t: number; s: number; chars: number }> = [];
  /** `behind`: output characters the snapshot did not cover yet, sent as frames after it. */
  reloads: Array<{ t: number; ok: boolean; behind: number }> = [];

  constructor(
    private readonly origin: string,
    private readonly errors: Errors,
    private readonly t0: number,
  ) {}

  async start(login: string, cwd: string): Promise<void> {
    this.wire(await BenchWsClient.connect(this.origin, login));
    this.terminalId = (await this.client.call<{ id: string }>('create', { shell: 'bash', cwd, title: 'soak person' })).id;
    await this.attach();
  }

  private wire(client: BenchWsClient): void {
    this.client = client;
    client.onOutput = (attachmentId, seq, data) => {
      if (this.attachmentId === null) {
        this.early.push({ attachmentId, seq, data });
        return;
      }
      this.frame(attachmentId, seq, data);
    };
    client.onEvent = (event, payload) => {
      if (event === 'attachmentClosed') this.errors.add(`person: the view was closed: ${JSON.stringify(payload).slice(0, 200)}`);
    };
  }

  private frame(attachmentId: string, seq: number, data: string): void {
    if (attachmentId !== this.attachmentId) return;
    if (seq !== this.seq + 1) this.errors.add(`person: frame ${seq} after ${this.seq}`);
    this.seq = seq;
    this.mirror!.write(data);
  }

  /** Attaches as terminal-controller.svelte.ts does: a fresh screen from the snapshot, then frames. */
  private async attach(): Promise<void> {
    this.attachmentId = null;
    this.early = [];
    const result = await this.client.call<{ attachmentId: string; snapshot: string; seq: number; info: { cols: number; rows: number } }>('attach', {
      id: this.terminalId,
    });
    const term = new Terminal({ cols: result.info.cols, rows: result.info.rows, scrollback: 1000, allowProposedApi: true });
    this.mirror?.dispose();
    this.mirror = term;
    this.seq = result.seq;
    this.attachmentId = result.attachmentId;
    term.write(result.snapshot);
    for (const f of this.early) this.frame(f.attachmentId, f.seq, f.data);
    this.early = [];
    await written(term, '');
  }

  private now(): number {
    return (performance.now() - this.t0) / 1000;
  }

  /** Until the view shows `needle` with the prompt after it, and no frame came for a second. */
  private async settled(needle: string): Promise<void> {
    for (let tries = 0; ; tries++) {
      await written(this.mirror!, '');
      const { lines } = screen(this.mirror!);
      const at = lines.lastIndexOf(needle);
      if (at >= 0 && (lines[at + 1] ?? '') !== '') break;
      if (tries > 600) throw new Error(`no prompt after ${needle} within 60 s`);
      await sleep(100);
    }
    await this.quiet(1000);
    await written(this.mirror!, '');
  }

  /** Until no frame came for `ms` (the prompt after a command has arrived). */
  private async quiet(ms: number): Promise<void> {
    for (let frames = -1; frames !== this.client.frames;) {
      frames = this.client.frames;
      await sleep(ms);
    }
  }

  /** `seq 1 2000000` typed at the prompt; the screen must end with its last lines, all of it must arrive. */
  async flood(k: number): Promise<void> {
    const t = this.now();
    const before = this.client.received;
    const needle = `FLOOD-${k}-END`;
    try {
      const done = waitForText(this.client, this.attachmentId!, needle, 300_000);
      this.client.type(this.attachmentId!, `seq 1 ${floodLines}; printf 'FLOOD%sEND\\n' -${k}-\r`);
      await done;
      const chars = this.client.received - before;
      this.floods.push({ t: Math.round(t), s: Number((this.now() - t).toFixed(1)), chars });
      await written(this.mirror!, '');
      const { lines } = screen(this.mirror!);
      const at = lines.lastIndexOf(needle);
      if (at < 2 || lines[at - 1] !== String(floodLines) || lines[at - 2] !== String(floodLines - 1)) {
        this.errors.add(`person: flood ${k} ends with ${JSON.stringify(lines.slice(Math.max(0, at - 3), at + 1))}`);
      }
      if (chars < seqChars(floodLines)) this.errors.add(`person: flood ${k} brought ${chars} characters, fewer than seq's ${seqChars(floodLines)}`);
    } catch (error) {
      this.errors.add(`person: flood ${k}: ${(error as Error).message}`);
    }
  }

  /**
   * A reload: a marker at the prompt, then the page goes (the socket closes), comes back with its
   * session secret, lists the terminals and attaches; the snapshot must show what the view showed.
   */
  async reload(k: number): Promise<void> {
    const t = this.now();
    let ok = false;
    let behind = 0;
    try {
      const needle = `RELOAD-${k}-MARK`;
      const marked = waitForText(this.client, this.attachmentId!, needle, 60_000);
      this.client.type(this.attachmentId!, `printf 'RELOAD%sMARK\\n' -${k}-\r`);
      await marked;
      await this.settled(needle);
      await written(this.mirror!, '');
      const shown = screen(this.mirror!);
      await this.client.close();
      this.wire(await BenchWsClient.reconnect(this.origin, this.client.secret));
      const { terminals } = await this.client.call<{ terminals: Array<{ id: string }> }>('list');
      if (!terminals.some((terminal) => terminal.id === this.terminalId)) throw new Error(`the list after the reload lacks ${this.terminalId}`);
      const received = this.client.received;
      await this.attach();
      // The host's emulator may trail the stream (a flood just ended): the snapshot covers what it
      // has parsed, the rest follows as frames, as the renderer gets it.
      await this.settled(needle);
      behind = this.client.received - received;
      const restored = screen(this.mirror!);
      const row = restored.lines.findIndex((line, i) => line !== shown.lines[i]);
      if (row >= 0) throw new Error(`the snapshot's row ${row} is ${JSON.stringify(restored.lines[row])}, the view showed ${JSON.stringify(shown.lines[row])}`);
      if (restored.cursor !== shown.cursor) throw new Error(`the snapshot's cursor is at ${restored.cursor}, the view's was at ${shown.cursor}`);
      if (!restored.lines.includes(needle)) throw new Error(`the snapshot lacks ${needle}`);
      ok = true;
    } catch (error) {
      this.errors.add(`person: reload ${k}: ${(error as Error).message}`);
    }
    this.reloads.push({ t: Math.round(t), ok, behind });
  }

  async stop(): Promise<void> {
    await this.client?.close();
    this.mirror?.dispose();
  }
}

/** Least-squares slope of `y` over minutes, for the samples in [from, to) seconds. */
function slope(samples: Sample[], pick: (s: Sample) => number | null, from: number, to: number): number | null {
  const points = samples.filter((s) => s.t >= from && s.t < to && pick(s) !== null).map((s) => [s.t / 60, pick(s)!] as const);
  if (points.length < 3) return null;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  return sxx === 0 ? null : sxy / sxx;
}

interface Sample {
  /** Seconds since the agents started. */
  t: number;
  heapMiB: number;
  rssMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  fds: number | null;
  sockets: number | null;
  calls: number;
  errors: number;
  warnings: number;
  floods: number;
  reloads: number;
}

const round1 = (value: number) => Math.round(value * 10) / 10;

export const soakFigure: Figure = {
  id: 'soak',
  title: 'Soak: four agents through bridges, host memory and descriptors',
  rows: [
    {
      name: 'soak.calls',
      unit: 'count',
      target: null,
      description: 'tool calls the four agents made over the whole run (120 s full, 2 s quick, N s with --soak N)',
    },
    {
      name: 'soak.heap-growth.last60s',
      unit: 'MiB',
      target: { metric: 'median', op: '<', value: 5 },
      description: 'host heap after forced full GCs: end of the run minus start of the last phase (60 s full; the last third with --soak N)',
    },
    {
      name: 'soak.rss-growth.last60s',
      unit: 'MiB',
      target: { metric: 'median', op: '<', value: 25 },
      description: 'host RSS at the end of the run minus at the start of the last phase (60 s full; the last third with --soak N)',
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
      description: 'lines with "Warning" on the four bridges\' stderr (MaxListenersExceededWarning and the like), and on the host\'s',
    },
    {
      name: 'soak.errors',
      unit: 'count',
      target: { metric: 'median', op: '<=', value: 0 },
      description:
        'failed or wrong results: an echo not its text, a read without the last echo, a list without the terminal; with --soak N a flood not all there, a reload whose snapshot differs from the view',
    },
  ],
  async run(opts: BenchOptions) {
    const long = opts.soak;
    const totalMs = long ? long.seconds * 1000 : opts.pick(120_000, 2_000);
    // The long run's last phase is its last third, so its slope can be set against the first third's.
    const lastPhaseMs = long ? Math.round(totalMs / 3) : totalMs / 2;
    const firstPhaseMs = totalMs - lastPhaseMs;
    const sampleMs = opts.pick(5_000, 500);
    let host: HostProcess | null = null;
    let person: Person | null = null;
    const agents: Agent[] = [];
    const errors = new Errors();
    const hostStderr: string[] = [];
    try {
      host = await HostProcess.start(opts.home, opts.root, { agents: [...keepers, ...churners], exposeGc: true, onStderr: (text) => hostStderr.push(text) });
      const started = await Promise.allSettled(
        [...keepers, ...churners].map(async (name) => {
          const stderr: string[] = [];
          const client = await bridgeClient(host!, opts.root, opts.home, name, host!.info.agentTokens[name]!, { onStderr: (text) => stderr.push(text) });
          const agent: Agent = { name, client, stderr, terminal: null, rows: 0, calls: 0, opened: 0 };
          agents.push(agent);
          if (keepers.includes(name)) {
            const info = await callTool(client, 'terminal_open', { title: 'soak keep', shell: 'bash' });
            agent.terminal = String(info.id);
            agent.rows = Number(info.rows);
          }
          return agent;
        }),
      );
      const failed = started.find((result) => result.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      // Keepers first, in a fixed order: the loops below pick their role by position.
      agents.sort((a, b) => [...keepers, ...churners].indexOf(a.name) - [...keepers, ...churners].indexOf(b.name));
      const t0 = performance.now();
      if (long) {
        person = new Person(host.info.origin, errors, t0);
        await person.start(host.info.login, opts.home);
      }
      const warnings = () => [
        ...agents.flatMap((agent) =>
          agent.stderr
            .join('')
            .split('\n')
            .filter((line) => /warning/i.test(line))
            .map((line) => `${agent.name}: ${line.trim()}`),
        ),
        ...hostStderr
          .join('')
          .split('\n')
          .filter((line) => /warning/i.test(line))
          .map((line) => `host: ${line.trim()}`),
      ];
      const callsSoFar = () => agents.reduce((sum, agent) => sum + agent.calls, 0);
      const samples: Sample[] = [];
      const sample = async () => {
        // The long run samples heap after forced GCs (a curve of live memory, not of GC timing).
        const m = await host!.memory(Boolean(long));
        samples.push({
          t: round1((performance.now() - t0) / 1000),
          heapMiB: round1(mib(m.heapUsed)),
          rssMiB: round1(mib(m.rss)),
          heapTotalMiB: round1(mib(m.heapTotal)),
          externalMiB: round1(mib(m.external)),
          fds: m.fds,
          sockets: m.sockets,
          calls: callsSoFar(),
          errors: errors.count,
          warnings: warnings().length,
          floods: person?.floods.length ?? 0,
          reloads: person?.reloads.length ?? 0,
        });
      };
      // The person's schedule: a flood at every multiple of floodEveryS, a reload after it at every
      // multiple of reloadEveryS; a mark passed while a checkpoint ran is made up at once.
      let mark = 1;
      const personDue = () => long !== undefined && mark * long.floodEveryS * 1000 <= performance.now() - t0;
      const personAct = async () => {
        const at = mark * long!.floodEveryS;
        mark += 1;
        await person!.flood(mark - 1);
        if (at % long!.reloadEveryS === 0) await person!.reload(mark - 1);
      };
      const phase = async (ms: number) => {
        let running = true;
        const loops = agents.map((agent, i) => (i < keepers.length ? keep(agent, () => running, errors) : churn(agent, () => running, errors)));
        const sampler = (async () => {
          while (running) {
            await sleep(sampleMs);
            if (running) await sample();
          }
        })();
        const personLoop = (async () => {
          while (running && long) {
            if (personDue()) await personAct();
            else await sleep(250);
          }
        })();
        await sleep(ms);
        running = false;
        await Promise.all([...loops, sampler, personLoop]);
      };
      // Marks due when a phase ended are made up before its checkpoint, none that fall due meanwhile.
      const catchUp = async () => {
        const until = performance.now() - t0;
        while (long && mark * long.floodEveryS * 1000 <= until) await personAct();
      };
      // BENCH_HEAP_SNAPSHOTS=DIR: a heap snapshot at each checkpoint (compare with bench/heap-diff.mjs).
      const snapshotDir = process.env.BENCH_HEAP_SNAPSHOTS;
      const snapshot = async (name: string) => {
        if (snapshotDir) await host!.command('heap-snapshot', { path: join(snapshotDir, `${name}.heapsnapshot`) });
      };
      const start = await host.memory(true);
      await snapshot('start');
      await phase(firstPhaseMs);
      await catchUp();
      const middle = await host.memory(true);
      await snapshot('middle');
      await phase(lastPhaseMs);
      await catchUp();
      const end = await host.memory(true);
      await snapshot('end');
      const calls = callsSoFar();
      const opened = agents.reduce((sum, agent) => sum + agent.opened, 0);
      const warned = warnings();
      const seconds = totalMs / 1000;
      const heapText = (m: HostMemory) => mib(m.heapUsed).toFixed(1);
      // Where RSS that is not live heap sits: V8's committed heap, and memory outside it.
      const splitText = (m: HostMemory) => `${mib(m.heapTotal).toFixed(0)}/${mib(m.external).toFixed(0)}/${mib(m.arrayBuffers).toFixed(0)}`;
      const fdText = (m: HostMemory) => `${m.fds ?? '?'} (${m.sockets ?? '?'} sockets)`;
      const series = long ? '' : samples.map((p) => `${p.t.toFixed(0)}s ${p.rssMiB.toFixed(0)}/${p.fds ?? '?'}/${p.sockets ?? '?'}`).join(', ');
      const third = seconds / 3;
      const files = (s: Sample) => (s.fds === null || s.sockets === null ? null : s.fds - s.sockets);
      const slopes = {
        heapMiBPerMin: { first: slope(samples, (s) => s.heapMiB, 0, third), last: slope(samples, (s) => s.heapMiB, 2 * third, Infinity) },
        rssMiBPerMin: { first: slope(samples, (s) => s.rssMiB, 0, third), last: slope(samples, (s) => s.rssMiB, 2 * third, Infinity) },
        fdsPerMin: { first: slope(samples, files, 0, third), last: slope(samples, files, 2 * third, Infinity) },
      };
      const slopeText = (s: { first: number | null; last: number | null }) => `${s.first?.toFixed(3) ?? '?'} → ${s.last?.toFixed(3) ?? '?'}`;
      const note = [
        `${calls} calls in ${seconds} s (${(calls / seconds).toFixed(0)}/s), ${opened} terminals opened and closed`,
        ...(person
          ? [
              `person: ${person.floods.length} floods of seq 1 ${floodLines}, ${person.reloads.filter((r) => r.ok).length}/${person.reloads.length} reloads right`,
            ]
          : []),
        `heap after GC: start ${heapText(start)}, after ${Math.round(firstPhaseMs / 1000)} s ${heapText(middle)}, end ${heapText(end)} MiB`,
        `V8 heap committed/external/array buffers ${splitText(start)} → ${splitText(middle)} → ${splitText(end)} MiB`,
        `RSS ${mib(start.rss).toFixed(0)} → ${mib(middle.rss).toFixed(0)} → ${mib(end.rss).toFixed(0)} MiB; descriptors ${fdText(start)} → ${fdText(middle)} → ${fdText(end)}`,
        long
          ? `slopes per minute, first third → last third: heap ${slopeText(slopes.heapMiBPerMin)} MiB, RSS ${slopeText(slopes.rssMiBPerMin)} MiB, descriptors other than sockets ${slopeText(slopes.fdsPerMin)}; ${samples.length} samples in ${long.out}`
          : `RSS MiB/descriptors/sockets while running: ${series}`,
      ].join('; ');
      if (long) {
        const checkpoint = (m: HostMemory) => ({
          heapMiB: round1(mib(m.heapUsed)),
          rssMiB: round1(mib(m.rss)),
          heapTotalMiB: round1(mib(m.heapTotal)),
          externalMiB: round1(mib(m.external)),
          fds: m.fds,
          sockets: m.sockets,
        });
        mkdirSync(dirname(long.out), { recursive: true });
        const record = {
          seconds,
          floodEveryS: long.floodEveryS,
          reloadEveryS: long.reloadEveryS,
          floodLines,
          sampleEveryS: sampleMs / 1000,
          agents: { keepers: keepers.length, churners: churners.length },
          calls,
          terminalsOpened: opened,
          checkpoints: { start: checkpoint(start), [`after${Math.round(firstPhaseMs / 1000)}s`]: checkpoint(middle), end: checkpoint(end) },
          slopes,
          errors: { count: errors.count, first: errors.first },
          warnings: warned,
          floods: person?.floods ?? [],
          reloads: person?.reloads ?? [],
          samples,
        };
        writeFileSync(long.out, `${JSON.stringify(record)}\n`);
        opts.log(`soak: samples in ${long.out}`);
      }
      const out: Measurement[] = [
        { row: 'soak.calls', samples: [calls], note },
        { row: 'soak.heap-growth.last60s', samples: [mib(end.heapUsed - middle.heapUsed)] },
        { row: 'soak.rss-growth.last60s', samples: [mib(end.rss - middle.rss)] },
        end.fds === null || middle.fds === null
          ? { row: 'soak.fd-growth.last60s', status: 'skipped', note: 'descriptors are counted from /proc (Linux only)' }
          : { row: 'soak.fd-growth.last60s', samples: [end.fds - end.sockets! - (middle.fds - middle.sockets!)] },
        { row: 'soak.bridge-warnings', samples: [warned.length], note: warned.slice(0, 2).join(' | ') || undefined },
        { row: 'soak.errors', samples: [errors.count], note: errors.first.slice(0, 2).join(' | ') || undefined },
      ];
      return out;
    } finally {
      for (const agent of agents) await agent.client.close().catch(() => undefined);
      await person?.stop().catch(() => undefined);
      await host?.stop();
    }
  },
};
