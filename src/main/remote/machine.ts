/**
 * The local side of remote machines: one `RemoteMachine` per `--machine NAME=DESTINATION`
 * runs `ssh -T DESTINATION tandem host --stdio` (nothing else: no forwarding, no upload) and
 * speaks the framed link over its stdin/stdout; `RemoteMachines` routes the UI's operations on
 * those terminals to them and puts their terminals in the roster with `machine: NAME`.
 * A drop (ssh killed, network gone, no answer for 14 s) reconnects with backoff and resumes the
 * remote session, so every view continues from the last frame it applied; when the remote
 * could not keep the session, each view starts again from the remote's snapshot.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { type FrameMark, frameMarkSchema } from '../../shared/command-marks.js';
import { type AgentsState, events, type OpName, operations, type TerminalView } from '../../shared/contract.js';
import { TandemError, type ErrorCode, ERROR_CODES } from '../../shared/errors.js';
import { type FrameSink, UnackedFrames } from '../host/attachment.js';
import { frameMaxChars, maxBufferedChars } from '../../shared/wire.js';
import type { Clock } from '../clock.js';
import { FRAMING, FrameDecoder, junkPreview, startLine } from './frame.js';
import { decodeMessage, encodeMessage, LINK_PROTOCOL, type LinkBody, type LinkMessage, LinkSession, maxLinkMessageChars } from './link.js';
import { checkedRemote } from './checked.js';
import { isLinkEvent, protocolMismatch } from './server.js';

export const installCommand = 'npm install -g tandem-terminal';
export const defaultRemoteCommand = 'tandem host --stdio';
/** Machine names: what `--machine NAME=…`, the settings' `machines` and the roster's `machine` accept. */
export { machineNamePattern } from '../../shared/settings.js';

export type MachineStatus = 'connecting' | 'connected' | 'reconnecting' | 'failed';

export interface MachineOptions {
  name: string;
  destination: string;
  clock: Clock;
  /** This Tandem's version, told in the hello. */
  version: string;
  /** The ssh program and any options before the destination (default `['ssh']`). */
  ssh?: string[];
  /** What runs on the remote (default `tandem host --stdio`; tests point it at a checkout). */
  remoteCommand?: string;
  log?: (line: string) => void;
  /** A ping goes out this often (default 5 s)… */
  pingMs?: number;
  /** …and a link that said nothing for this long is dead (default 14 s: found within 15 s). */
  deadMs?: number;
  /** Reconnect delays, the last one repeated (default 250 ms doubling to 10 s). */
  backoffMs?: number[];
  maxReplayBytes?: number;
  callTimeoutMs?: number;
}

interface View {
  localId: string;
  remoteId: string;
  terminalId: string;
  clientId: string;
  sink: FrameSink;
  /** Local frame number = remote frame number + offset (changes when a view starts again from a snapshot). */
  offset: number;
  lastLocalSeq: number;
  /**
   * Until the attach result has reached the client: what arrived for the view meanwhile (the
   * remote sends the first frame right after its answer). The transports hold nothing for a
   * remote attach, whose answer can take a while: held there, every other view of the client
   * stopped with it.
   */
  early: Array<() => void> | null;
  /** What this side passed to the view and the view has not acknowledged (the local flow control's count). */
  unacked: UnackedFrames;
}

interface PendingCall {
  op: OpName;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  /** Runs as the result is delivered, before any later message (an attach's first frame follows its result at once). */
  onValue?: (value: unknown) => void;
  timer: ReturnType<typeof setTimeout>;
}

const maxPendingCalls = 1000;
/**
 * A remote host stops sending to a view that far behind (it pauses the shell, or drops the
 * view): more than this unacknowledged here is a remote that ignores the view's flow control, and
 * the view is closed (the desktop window's IPC has no bound of its own; the WebSocket's 16 MiB
 * would cut the whole page). The slack: a frame in flight, and the merged frames' count.
 */
export const maxRemoteUnackedChars = maxBufferedChars + 2 * frameMaxChars;
/** What this side may have written to ssh that the remote has not read yet, before the link is taken as stuck. */
const maxUnreadBytes = 32 * 1024 * 1024;
/** A remote's own words for a sentence shown here: text only, cut, no control characters. */
function remoteText(value: unknown, max: number): string {
  const text = typeof value === 'string' ? value : String(value);
  const clean = text.slice(0, max).replace(/[\x00-\x1f\x7f-\x9f]/g, ' ');
  return text.length > max ? `${clean}…` : clean;
}

/** Log lines about stray bytes per connection. */
const maxStrayLogs = 20;

/** A frame's command marks as the remote host sent them, checked: within the frame's data, or none. */
const remoteFrameMarks = z.array(frameMarkSchema).max(4096);
export function frameMarks(value: unknown, dataChars: number): FrameMark[] | undefined {
  if (value === undefined) return undefined;
  const parsed = remoteFrameMarks.safeParse(value);
  if (!parsed.success || parsed.data.some((mark) => mark.at > dataChars)) return undefined;
  return parsed.data;
}

/** A call waits this long for its result, through reconnects (default 2 minutes), then fails `not_running`. */
export const defaultCallTimeoutMs = 120_000;

/** The sentence for a remote that has no (or too old a) Tandem, from how ssh ended; null when it is something else. */
export function missingTandemSentence(name: string, exitCode: number | null, stderr: string): string | null {
  if (/unknown command "host"/.test(stderr))
    return `Tandem on ${name} is too old for remote machines (it has no \`tandem host\`); update it there with: ${installCommand}`;
  if (exitCode === 127 || /command not found/.test(stderr)) return `Tandem is not installed on ${name}; install it there with: ${installCommand}`;
  return null;
}

export class RemoteMachine {
  status: MachineStatus = 'connecting';
  /** Why the link is not up, in one sentence (null while it is). */
  problem: string | null = null;
  terminals: TerminalView[] = [];
  /** The remote agent layer's state, for its questions (null until told, or when it has none). */
  agents: AgentsState | null = null;
  private readonly agentListeners = new Set<() => void>();
  /** Bytes an rc file or motd printed before the link started, last connection (bounded preview). */
  junkSeen = '';
  private child: ChildProcess | null = null;
  private session: LinkSession;
  private sessionId: string | null = null;
  private welcomed = false;
  private everConnected = false;
  private readonly calls = new Map<number, PendingCall>();
  /** Events refused as not Tandem's (logged the first few times). */
  private badEvents = 0;
  private nextCallId = 1;
  private readonly views = new Map<string, View>();
  private readonly byRemote = new Map<string, View>();
  private readonly listeners = new Set<() => void>();
  private attempt = 0;
  /** Refreshes begun (a fresh session each): an older one still running stops at its next step. */
  private refreshes = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private tickTimer: ReturnType<typeof setTimeout> | null = null;
  private lastHeard = 0;
  private lastPing = 0;
  private stopped = false;
  /** Each connect's ssh, for tests and the bench (kill it to drop the link). */
  readonly spawned: ChildProcess[] = [];

  constructor(private readonly opts: MachineOptions) {
    this.session = this.newSession();
  }

  get name(): string {
    return this.opts.name;
  }

  get destination(): string {
    return this.opts.destination;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * A terminal this machine's `create` answered with: in the roster at once. The remote's own
   * roster event comes after its reply, and a roster this side sends meanwhile (any local change)
   * must not drop the tab a UI just selected.
   */
  created(view: TerminalView): void {
    if (this.terminals.some((terminal) => terminal.id === view.id)) return;
    this.terminals = [...this.terminals, view];
    this.changed();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  onAgents(listener: () => void): () => void {
    this.agentListeners.add(listener);
    return () => this.agentListeners.delete(listener);
  }

  private agentsChanged(state: AgentsState | null): void {
    this.agents = state;
    for (const listener of this.agentListeners) listener();
  }

  private newSession(): LinkSession {
    return new LinkSession((body) => this.onBody(body), { clock: this.opts.clock, maxReplayBytes: this.opts.maxReplayBytes });
  }

  start(): void {
    this.connect();
  }

  /** The current ssh process (null between attempts). */
  get process(): ChildProcess | null {
    return this.child;
  }

  private connect(): void {
    if (this.stopped) return;
    this.welcomed = false;
    const ssh = this.opts.ssh ?? ['ssh'];
    const child = spawn(ssh[0]!, [...ssh.slice(1), '-T', this.opts.destination, this.opts.remoteCommand ?? defaultRemoteCommand], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.spawned.push(child);
    if (this.spawned.length > 16) this.spawned.shift();
    let stderr = '';
    let junk = 0;
    let strays = 0;
    let refused: string | null = null;
    const write = (frame: Buffer) => {
      if (this.child !== child || !child.stdin || child.stdin.destroyed) return;
      // A remote that stops reading while it keeps sending (pings to answer) would have this
      // side buffer for it without end: past the bound the link goes, and comes back.
      if (child.stdin.writableLength > maxUnreadBytes) {
        refused = `${this.opts.name} stopped reading the link; reconnecting.`;
        child.kill('SIGKILL');
        return;
      }
      child.stdin.write(frame);
    };
    const decoder = new FrameDecoder({
      start: (framing) => {
        // What an rc file or motd printed: reported once, never parsed.
        if (junk > 0) this.opts.log?.(`${this.opts.name}: skipped ${junk} bytes printed before the link started: ${this.junkSeen}`);
        if (framing !== String(FRAMING))
          refused = `${this.opts.name} speaks link framing ${framing} and this Tandem ${FRAMING}; update Tandem on both (${installCommand}).`;
      },
      junk: (bytes, where) => {
        junk += bytes.length;
        if (this.junkSeen.length < 200) this.junkSeen += junkPreview(bytes, 200 - this.junkSeen.length);
        // Told a few times per connection, then once more with the count (a remote can send junk without end).
        if (where !== 'before-start' && ++strays <= maxStrayLogs)
          this.opts.log?.(
            `${this.opts.name}: skipped ${bytes.length} stray bytes on the link (${where})${strays === maxStrayLogs ? '; further stray bytes on this connection are skipped without a word' : ''}.`,
          );
      },
      fail: (message) => {
        refused = `${this.opts.name}: ${message}`;
        child.kill('SIGKILL');
      },
      frame: (payload) => {
        const message = decodeMessage(payload);
        if (!message || this.child !== child) return;
        let why: string | null;
        try {
          why = this.onMessage(message, write);
        } catch (error) {
          // Nothing a remote sends may throw out of ssh's output handler (it would end this
          // process and every local shell with it): the link goes, and comes back.
          why = `${this.opts.name}: a message on the link could not be handled (${(error as Error).message}); reconnecting.`;
          this.opts.log?.(why);
        }
        if (why) {
          refused = why;
          child.kill('SIGKILL');
        }
      },
    });
    this.junkSeen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      this.lastHeard = this.opts.clock.now();
      decoder.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4096);
    });
    child.stdin!.on('error', () => undefined);
    // The daemon reads this direction with the same decoder: it starts at a start line too.
    child.stdin!.write(startLine);
    child.on('error', (error) => {
      stderr += `\n${error.message}`;
    });
    child.on('close', (code) => {
      if (this.child !== child) return;
      this.child = null;
      this.session.disconnect();
      this.stopTick();
      if (this.stopped) return;
      const missing = !this.welcomed ? missingTandemSentence(this.opts.name, code, stderr.trim()) : null;
      const fatal = refused ?? missing;
      if (fatal && !this.welcomed) {
        this.fail(fatal);
        return;
      }
      const lastLine = stderr.trim().split('\n').pop() ?? '';
      this.problem = this.welcomed
        ? `The link to ${this.opts.name} dropped; reconnecting.`
        : `ssh to ${this.opts.destination} failed${lastLine ? `: ${lastLine.slice(0, 200)}` : ` (exit ${code})`}; retrying.`;
      this.opts.log?.(`${this.opts.name}: ${this.problem}`);
      this.status = this.everConnected ? 'reconnecting' : 'connecting';
      this.changed();
      this.scheduleRetry();
    });
  }

  /** Handles one frame; returns a sentence when the link cannot go on. */
  private onMessage(message: LinkMessage, write: (frame: Buffer) => void): string | null {
    switch (message.k) {
      case 'server':
        if (message.protocol !== LINK_PROTOCOL)
          return protocolMismatch(remoteText(message.version, 40), Number(message.protocol), this.opts.version, LINK_PROTOCOL).replace(
            'The remote machine',
            this.opts.name,
          );
        write(
          encodeMessage({
            k: 'hello',
            protocol: LINK_PROTOCOL,
            version: this.opts.version,
            session: this.session.resumable ? this.sessionId : null,
            received: this.session.receivedSeq,
          }),
        );
        return null;
      case 'refuse':
        return remoteText(message.message, 500).replace('The remote machine', this.opts.name);
      case 'welcome': {
        const fresh = !message.resumed;
        if (fresh && this.sessionId !== null) {
          // The remote kept no session for us (restarted, or past its replay bound): what was in flight is lost.
          this.session.disconnect();
          this.session = this.newSession();
          this.rejectPending(new TandemError('not_running', `The link to ${this.opts.name} came back without its session; try again.`));
        }
        this.sessionId = message.session;
        this.welcomed = true;
        this.everConnected = true;
        this.attempt = 0;
        this.status = 'connected';
        this.problem = null;
        this.session.connect({ write }, fresh ? 0 : message.received);
        this.startTick();
        if (fresh) void this.refresh();
        this.changed();
        return null;
      }
      case 'ping':
        if (typeof message.n !== 'number') return `${this.opts.name} sent a ping that is not one; reconnecting.`;
        write(encodeMessage({ k: 'pong', n: message.n }));
        return null;
      case 'pong':
        return null;
      default:
        return this.session.receive(message) ? null : `${this.opts.name} sent a frame out of order; reconnecting.`;
    }
  }

  /** After a fresh session: the roster, and every view again from the remote's snapshot. */
  private async refresh(): Promise<void> {
    // The views of the session before this one, taken now: one attached while this refresh
    // waits is on the new session already (attached again, its first attachment there was left
    // to the remote, whose frames for it were dropped here).
    const stale = [...this.views.values()];
    // A newer session's refresh takes over: this one stops at its next step (its views are the
    // newer one's too, and a call of this one failed only because its session went).
    const generation = ++this.refreshes;
    try {
      const { terminals } = (await this.call('list', {})) as { terminals: TerminalView[] };
      this.terminals = terminals;
      this.changed();
    } catch {
      // the next roster event brings it
    }
    // A remote without an agent layer (or an older one) refuses: it has no questions to answer.
    this.call('agents', {}).then(
      (state) => this.agentsChanged(state as AgentsState),
      () => this.agentsChanged(null),
    );
    for (const view of stale) {
      if (generation !== this.refreshes) return;
      if (!this.views.has(view.localId)) continue;
      if (this.byRemote.get(view.remoteId) === view) this.byRemote.delete(view.remoteId);
      try {
        await this.call('attach', { id: view.terminalId }, (value) => {
          const result = value as { attachmentId: string; snapshot: string };
          if (!this.views.has(view.localId) || generation !== this.refreshes) {
            void this.call('detach', { attachmentId: result.attachmentId }).catch(() => undefined);
            return;
          }
          view.remoteId = result.attachmentId;
          this.byRemote.set(view.remoteId, view);
          // One frame that starts the view over (as the menu's Clear does): reset, then the snapshot.
          view.lastLocalSeq += 1;
          view.offset = view.lastLocalSeq;
          // The new attachment counts from nothing on the remote: so does this side.
          view.unacked = new UnackedFrames(frameMaxChars);
          view.sink.frame(view.localId, view.lastLocalSeq, `\x1bc${result.snapshot}`);
        });
      } catch (error) {
        if (generation !== this.refreshes) return;
        this.views.delete(view.localId);
        view.sink.closed(view.localId, 'not_found', `${this.opts.name}'s terminal is gone (${(error as Error).message})`);
      }
    }
  }

  private onBody(body: LinkBody): void {
    if (body.t === 'result') {
      const pending = this.calls.get(body.id);
      if (!pending) return;
      this.calls.delete(body.id);
      this.opts.clock.clearTimeout(pending.timer);
      // The remote's answers are checked as the contract has them before anything here uses
      // them: a machine that sends something else is shown nothing of it.
      if (body.ok) {
        const checked = checkedRemote(operations[pending.op].result, body.value);
        if (checked === null) {
          pending.reject(new TandemError('internal', `${this.opts.name} answered "${pending.op}" with something that is not Tandem's answer to it.`));
          return;
        }
        pending.onValue?.(checked);
        pending.resolve(checked);
      } else {
        const error = body.error as { code?: unknown; message?: unknown } | null;
        const code = typeof error?.code === 'string' && (ERROR_CODES as readonly string[]).includes(error.code) ? (error.code as ErrorCode) : 'internal';
        const message = typeof error?.message === 'string' ? error.message.slice(0, 2000) : `${this.opts.name} refused "${pending.op}".`;
        pending.reject(new TandemError(code, message));
      }
      return;
    }
    if (body.t !== 'event' || !isLinkEvent(body.event)) return;
    const checked = checkedRemote(events[body.event], body.payload);
    if (checked === null) {
      if (++this.badEvents <= maxStrayLogs) this.opts.log?.(`${this.opts.name} sent a "${body.event}" event that is not Tandem's; it is ignored.`);
      return;
    }
    const payload = checked as Record<string, unknown>;
    switch (body.event) {
      case 'roster':
        this.terminals = (payload as { terminals: TerminalView[] }).terminals;
        this.changed();
        return;
      case 'agents':
        this.agentsChanged(payload as unknown as AgentsState);
        return;
      case 'output': {
        const view = this.byRemote.get(payload.attachmentId as string);
        if (!view) return;
        const seq = (payload.seq as number) + view.offset;
        // A remote numbers a view's frames one after another; a number that does not go up is not
        // Tandem's (a lower one would release what the page has not applied from this count).
        if (!Number.isInteger(seq) || seq <= view.lastLocalSeq) {
          this.overran(view);
          return;
        }
        view.lastLocalSeq = seq;
        view.unacked.sent(seq, (payload.data as string).length);
        if (view.unacked.chars > maxRemoteUnackedChars) {
          this.overran(view);
          return;
        }
        const frame = () => view.sink.frame(view.localId, seq, payload.data as string, frameMarks(payload.marks, (payload.data as string).length));
        if (view.early) view.early.push(frame);
        else frame();
        return;
      }
      case 'writable': {
        const view = this.byRemote.get(payload.attachmentId as string);
        if (!view) return;
        const tell = () => view.sink.writable(view.localId, payload.writable as boolean);
        if (view.early) view.early.push(tell);
        else tell();
        return;
      }
      case 'attachmentClosed': {
        const view = this.byRemote.get(payload.attachmentId as string);
        if (!view) return;
        this.byRemote.delete(view.remoteId);
        this.views.delete(view.localId);
        const error = payload.error as { code: 'capacity' | 'exited' | 'not_found'; message: string };
        view.sink.closed(view.localId, error.code, error.message);
        return;
      }
    }
  }

  /** One operation on the remote host. Waits through a reconnect; fails at once when the machine failed. */
  call(op: OpName, args: unknown, onValue?: (value: unknown) => void): Promise<unknown> {
    if (this.status === 'failed') return Promise.reject(new TandemError('not_running', this.problem ?? `${this.opts.name} is not connected.`));
    if (this.calls.size >= maxPendingCalls)
      return Promise.reject(new TandemError('busy', `${maxPendingCalls} operations already wait on ${this.opts.name}; try again once its link answers.`));
    const id = this.nextCallId++;
    return new Promise((resolve, reject) => {
      const timer = this.opts.clock.setTimeout(() => {
        if (!this.calls.delete(id)) return;
        reject(
          new TandemError(
            'not_running',
            `${this.opts.name} did not answer within ${Math.round((this.opts.callTimeoutMs ?? defaultCallTimeoutMs) / 1000)} s${this.problem ? ` (${this.problem})` : ''}.`,
          ),
        );
      }, this.opts.callTimeoutMs ?? defaultCallTimeoutMs);
      this.calls.set(id, { op, resolve, reject, onValue, timer });
      if (this.session.send({ t: 'call', id, op, args })) return;
      this.opts.clock.clearTimeout(timer);
      this.calls.delete(id);
      reject(new TandemError('input_too_large', `That "${op}" is over the link's ${maxLinkMessageChars / (1024 * 1024)} MiB bound; send it in smaller parts.`));
    });
  }

  async attach(
    terminalId: string,
    clientId: string,
    sink: FrameSink,
    size: { cols?: number; rows?: number },
  ): Promise<{ attachmentId: string; snapshot: string; seq: number; writable: boolean; info: TerminalView }> {
    const localId = randomBytes(12).toString('base64url');
    // The view is registered as the result arrives: the remote sends its first frame right after it.
    const result = (await this.call('attach', { id: terminalId, ...size }, (value) => {
      const { attachmentId, seq } = value as { attachmentId: string; seq: number };
      const view: View = {
        localId,
        remoteId: attachmentId,
        terminalId,
        clientId,
        sink,
        offset: 0,
        lastLocalSeq: seq,
        early: [],
        unacked: new UnackedFrames(frameMaxChars),
      };
      this.views.set(localId, view);
      this.byRemote.set(attachmentId, view);
    })) as { attachmentId: string; snapshot: string; seq: number; writable: boolean; info: TerminalView };
    // The result goes to the client in this turn's promise chain; what came for the view meanwhile follows it.
    setImmediate(() => {
      const view = this.views.get(localId);
      const early = view?.early;
      if (!view || !early) return;
      view.early = null;
      for (const deliver of early) deliver();
    });
    return { ...result, attachmentId: localId };
  }

  view(localId: string, clientId: string): View | null {
    const view = this.views.get(localId);
    return view && view.clientId === clientId ? view : null;
  }

  detach(localId: string): void {
    const view = this.views.get(localId);
    if (!view) return;
    this.views.delete(localId);
    if (this.byRemote.get(view.remoteId) === view) this.byRemote.delete(view.remoteId);
    void this.call('detach', { attachmentId: view.remoteId }).catch(() => undefined);
  }

  detachClient(clientId: string): void {
    for (const view of [...this.views.values()]) if (view.clientId === clientId) this.detach(view.localId);
  }

  /**
   * The remote frame number a local acknowledgement stands for (null: it covers only the restart
   * frame), and the view's count of what it has not acknowledged brought down.
   */
  acknowledged(view: View, localSeq: number): number | null {
    view.unacked.ack(localSeq);
    const seq = localSeq - view.offset;
    return seq > 0 ? seq : null;
  }

  /** A remote that sent a view more than it acknowledged, or frames out of order: the view goes here and there; attaching again starts it from the remote's screen. */
  private overran(view: View): void {
    this.views.delete(view.localId);
    this.byRemote.delete(view.remoteId);
    void this.call('detach', { attachmentId: view.remoteId }).catch(() => undefined);
    this.opts.log?.(`${this.opts.name} sent a view more output than it acknowledged, or frames out of order; the view was closed.`);
    const close = () =>
      view.sink.closed(
        view.localId,
        'capacity',
        `${this.opts.name} sent this view more output than it acknowledged (over ${maxBufferedChars / (1024 * 1024)} Mi characters), or frames out of order; open the tab again to see its screen.`,
      );
    // Before the attach result is out (attach's setImmediate), the close follows it.
    if (view.early) setImmediate(close);
    else close();
  }

  private rejectPending(error: Error): void {
    const calls = [...this.calls.values()];
    this.calls.clear();
    for (const call of calls) {
      this.opts.clock.clearTimeout(call.timer);
      call.reject(error);
    }
  }

  private fail(sentence: string): void {
    this.status = 'failed';
    this.problem = sentence;
    this.opts.log?.(sentence);
    this.rejectPending(new TandemError('not_running', sentence));
    this.changed();
  }

  private scheduleRetry(): void {
    const delays = this.opts.backoffMs ?? [250, 500, 1000, 2000, 4000, 8000, 10_000];
    const delay = delays[Math.min(this.attempt, delays.length - 1)]!;
    this.attempt += 1;
    this.retryTimer = this.opts.clock.setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delay);
  }

  private startTick(): void {
    this.stopTick();
    this.lastHeard = this.opts.clock.now();
    this.lastPing = this.lastHeard;
    let n = 0;
    const tick = () => {
      this.tickTimer = this.opts.clock.setTimeout(tick, 1000);
      const now = this.opts.clock.now();
      if (now - this.lastHeard >= (this.opts.deadMs ?? 14_000)) {
        this.opts.log?.(`${this.opts.name}: no answer for ${Math.round((now - this.lastHeard) / 1000)} s; reconnecting.`);
        this.stopTick();
        this.child?.kill('SIGKILL');
        return;
      }
      if (now - this.lastPing >= (this.opts.pingMs ?? 5000)) {
        this.lastPing = now;
        const child = this.child;
        if (child?.stdin && !child.stdin.destroyed) child.stdin.write(encodeMessage({ k: 'ping', n: ++n }));
      }
    };
    this.tickTimer = this.opts.clock.setTimeout(tick, 1000);
  }

  private stopTick(): void {
    if (this.tickTimer !== null) this.opts.clock.clearTimeout(this.tickTimer);
    this.tickTimer = null;
  }

  /** Ends every view of this machine for its client (the machine was removed). */
  closeViews(message: string): void {
    const views = [...this.views.values()];
    this.views.clear();
    this.byRemote.clear();
    for (const view of views) view.sink.closed(view.localId, 'not_found', message);
  }

  stop(): void {
    this.stopped = true;
    this.stopTick();
    if (this.retryTimer !== null) this.opts.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.child?.kill('SIGTERM');
    this.child = null;
    this.rejectPending(new TandemError('not_running', `Tandem stopped its link to ${this.opts.name}.`));
  }
}
