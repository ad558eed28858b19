/**
 * The remote end of a link, inside the per-user daemon (`tandem host --daemon`): each
 * connection on the daemon's Unix socket (the `tandem host --stdio` relay pipes an ssh
 * session to it) speaks the framed link; sessions outlive connections, so a dropped ssh
 * resumes with nothing lost. Only the terminal operations of the contract and the answers to
 * this machine's agents' questions are served: pairing, tokens, login links and settings stay on
 * this machine (its agents' authority with them).
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { type EventName, type EventPayload, type OpName } from '../../shared/contract.js';
import { TandemError } from '../../shared/errors.js';
import { type AgentPanel, Dispatcher, newClientId, toWireError, type UiClient } from '../host/dispatch.js';
import type { TerminalHost } from '../host/host.js';
import type { Clock } from '../clock.js';
import { EventGate } from '../web/event-gate.js';
import { FrameDecoder, FRAMING, junkPreview, startLine } from './frame.js';
import { decodeMessage, encodeMessage, LINK_PROTOCOL, type LinkBody, LinkSession, type LinkMessage, maxLinkMessageChars } from './link.js';

/** The operations a link may call: a terminal's life, views and control; nothing that mints or reveals a credential. */
export const linkOps: ReadonlySet<OpName> = new Set<OpName>([
  'environment',
  'list',
  'create',
  'rename',
  'close',
  'attach',
  'detach',
  'input',
  'resize',
  'ack',
  'share',
  'takeControl',
  'handBack',
  'reset',
  'clearScrollback',
  // The person answers this machine's agents' questions from the other end (a pairing request
  // too: the agent gets its token here, from this host, never over the link), sets their
  // policies, revokes them and lifts denials: the link is the person's ssh session, and this machine has no
  // panel of its own. Tokens are minted only here and never cross (no pairAgent, no login link).
  'agents',
  'answerPairing',
  'answerApproval',
  'answerHandoff',
  'setAgentPolicy',
  'revokeAgent',
  'revokeAllowedOnce',
  'liftPairingDenial',
  'denyAllPairings',
  // What this machine's terminals recorded (the person reads their output over the link anyway).
  'timeline',
  'listRecordings',
  'exportRecording',
  'readRecordingCast',
]);

/** Events a link carries (settings are this machine's). */
const linkEventNames = ['roster', 'output', 'attachmentClosed', 'writable', 'agents'] as const;
const linkEvents: ReadonlySet<EventName> = new Set<EventName>(linkEventNames);

/** Whether the other end may send this event over a link (the local side takes no other). */
export function isLinkEvent(name: unknown): name is (typeof linkEventNames)[number] {
  return linkEvents.has(name as EventName);
}

export interface LinkServerOptions {
  host: TerminalHost;
  /** This machine's agent layer: its questions (approvals, handoffs) are answered over the link. */
  agents?: AgentPanel;
  clock: Clock;
  version: string;
  /** The daemon ends after this long with no link connected (the person's idle lifetime). */
  idleMs: number;
  onIdle: () => void;
  /** A disconnected session is kept this long for a resume (default 10 minutes). */
  sessionGraceMs?: number;
  /** At most this many sessions are kept (default 16); the oldest disconnected one goes first. */
  maxSessions?: number;
  maxReplayBytes?: number;
  log?: (line: string) => void;
}

class RemoteSession {
  readonly id = randomBytes(16).toString('base64url');
  readonly link: LinkSession;
  readonly dispatcher: Dispatcher;
  private readonly gate: EventGate;
  socket: Socket | null = null;
  graceTimer: ReturnType<typeof setTimeout> | null = null;
  lastUsed: number;

  constructor(
    host: TerminalHost,
    private readonly opts: LinkServerOptions,
  ) {
    this.lastUsed = opts.clock.now();
    this.link = new LinkSession((body) => this.onBody(body), { clock: opts.clock, maxReplayBytes: opts.maxReplayBytes });
    this.gate = new EventGate((event, payload) => {
      if (!this.link.send({ t: 'event', event, payload })) opts.log?.(`remote link: a ${event} event over ${maxLinkMessageChars} characters was not sent.`);
    });
    const client: UiClient = {
      id: newClientId(),
      send: <K extends EventName>(event: K, payload: EventPayload<K>) => {
        if (linkEvents.has(event)) this.gate.send(event, payload);
      },
    };
    this.dispatcher = new Dispatcher(host, client, opts.agents ? { agents: opts.agents } : {});
  }

  private onBody(body: LinkBody): void {
    if (body.t !== 'call') return;
    const { id, op, args } = body;
    if (!linkOps.has(op as OpName)) {
      const error = new TandemError(
        'forbidden',
        `"${String(op).slice(0, 40)}" is not offered over a remote link: this machine's tokens, credentials and settings stay on it.`,
      );
      this.link.send({ t: 'result', id, ok: false, error: error.toJSON() });
      return;
    }
    const release = op === 'attach' ? this.gate.hold() : null;
    this.dispatcher
      .call(op, args)
      .then(
        (value) => {
          if (this.link.send({ t: 'result', id, ok: true, value })) return;
          const error = new TandemError(
            'internal',
            `The answer to "${op}" is over the link's ${maxLinkMessageChars / (1024 * 1024)} MiB bound (a scrollback that large: lower Settings, "Scrollback lines", on that machine).`,
          );
          this.link.send({ t: 'result', id, ok: false, error: error.toJSON() });
        },
        (error: unknown) => this.link.send({ t: 'result', id, ok: false, error: toWireError(error) }),
      )
      .finally(() => release?.());
  }

  dispose(): void {
    if (this.graceTimer !== null) this.opts.clock.clearTimeout(this.graceTimer);
    this.link.disconnect();
    this.socket?.destroy();
    this.dispatcher.dispose();
  }
}

export class LinkServer {
  private readonly sessions = new Map<string, RemoteSession>();
  private readonly sockets = new Set<Socket>();
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(private readonly opts: LinkServerOptions) {
    this.armIdle();
  }

  get connections(): number {
    return this.sockets.size;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** One connection on the daemon's socket (a relay's). */
  accept(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    this.disarmIdle();
    let session: RemoteSession | null = null;
    let junkReports = 0;
    const write = (frame: Buffer) => {
      if (!socket.destroyed) socket.write(frame);
    };
    const drop = () => socket.destroy();
    const decoder = new FrameDecoder({
      start: () => undefined,
      // Reported, a few times per connection (the daemon's log stays bounded).
      junk: (bytes) => {
        if (junkReports++ < 5) this.opts.log?.(`link: skipped ${bytes.length} stray bytes from the local side: ${junkPreview(bytes)}`);
      },
      fail: drop,
      frame: (payload) => {
        const message = decodeMessage(payload);
        if (!message) return;
        if (!session) {
          session = this.hello(message, write, socket);
          if (!session) socket.end();
          return;
        }
        if (message.k === 'ping') write(encodeMessage({ k: 'pong', n: message.n }));
        else if (!session.link.receive(message)) drop();
      },
    });
    // The local side reads this end's start line first: the relay pipes it out through ssh.
    socket.write(startLine);
    write(encodeMessage({ k: 'server', protocol: LINK_PROTOCOL, version: this.opts.version }));
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.sockets.delete(socket);
      if (session && session.socket === socket) this.park(session);
      this.armIdle();
    });
  }

  private hello(message: LinkMessage, write: (frame: Buffer) => void, socket: Socket): RemoteSession | null {
    if (message.k !== 'hello') return null;
    if (message.protocol !== LINK_PROTOCOL) {
      write(encodeMessage({ k: 'refuse', message: protocolMismatch(this.opts.version, LINK_PROTOCOL, message.version, message.protocol) }));
      return null;
    }
    let session = message.session ? this.sessions.get(message.session) : undefined;
    let resumed = false;
    if (session && session.link.resumable) {
      resumed = true;
      // The old connection (a dead ssh the daemon has not noticed yet) loses the session.
      if (session.socket && session.socket !== socket) {
        const old = session.socket;
        session.socket = null;
        session.link.disconnect();
        old.destroy();
      }
    } else {
      if (session) this.drop(session);
      session = new RemoteSession(this.opts.host, this.opts);
      this.sessions.set(session.id, session);
      this.bound();
    }
    if (session.graceTimer !== null) this.opts.clock.clearTimeout(session.graceTimer);
    session.graceTimer = null;
    session.socket = socket;
    session.lastUsed = this.opts.clock.now();
    write(encodeMessage({ k: 'welcome', session: session.id, resumed, received: session.link.receivedSeq }));
    session.link.connect({ write }, resumed ? message.received : 0);
    return session;
  }

  /** A session whose connection went: kept for a resume within its grace. */
  private park(session: RemoteSession): void {
    session.socket = null;
    session.link.disconnect();
    session.lastUsed = this.opts.clock.now();
    if (!session.link.resumable) {
      this.drop(session);
      return;
    }
    session.graceTimer = this.opts.clock.setTimeout(() => this.drop(session), this.opts.sessionGraceMs ?? 10 * 60_000);
  }

  private drop(session: RemoteSession): void {
    this.sessions.delete(session.id);
    session.dispose();
  }

  private bound(): void {
    const max = this.opts.maxSessions ?? 16;
    while (this.sessions.size > max) {
      const parked = [...this.sessions.values()].filter((s) => s.socket === null).sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (!parked) break;
      this.drop(parked);
    }
  }

  private armIdle(): void {
    if (this.closed || this.sockets.size > 0 || this.idleTimer !== null) return;
    this.idleTimer = this.opts.clock.setTimeout(() => {
      this.idleTimer = null;
      if (this.sockets.size === 0 && !this.closed) this.opts.onIdle();
    }, this.opts.idleMs);
  }

  private disarmIdle(): void {
    if (this.idleTimer !== null) this.opts.clock.clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  close(): void {
    this.closed = true;
    this.disarmIdle();
    for (const session of this.sessions.values()) session.dispose();
    this.sessions.clear();
    for (const socket of this.sockets) socket.destroy();
  }
}

/** The one sentence both ends say when their link protocols differ. */
export function protocolMismatch(remoteVersion: string, remoteProtocol: number, localVersion: string, localProtocol: number): string {
  const newer = remoteProtocol > localProtocol ? 'this computer' : 'the remote machine';
  return `The remote machine runs Tandem ${remoteVersion} (link protocol ${remoteProtocol}) and this computer Tandem ${localVersion} (link protocol ${localProtocol}); update Tandem on ${newer} (npm install -g tandem-terminal) so both speak the same protocol.`;
}

export { FRAMING };
