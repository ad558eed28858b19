/**
 * The remote link's messages and its one reliability mechanism: every message either end
 * sends is numbered and kept until the other end acknowledges it, so a link that drops and
 * comes back (a new ssh process, the same session on the remote) resends exactly what the
 * other end had not received: nothing lost, nothing doubled. The same class runs on both ends.
 */
import type { Clock } from '../clock.js';
import { encodeFrame } from './frame.js';

/** The link protocol's version, in both hellos. A change in messages is a new number (2: messages in parts). */
export const LINK_PROTOCOL = 2;

/**
 * A message whose JSON is longer than this many characters goes as numbered parts of at most
 * this many (each part's frame stays under the frame bound however its characters encode: at
 * most 3 UTF-8 bytes a character, or 2 where JSON escapes one again).
 */
export const linkPartChars = 512 * 1024;
/** The longest message either end sends or puts back together (its JSON in characters): an attach of a wide, coloured scrollback is tens of MiB. */
export const maxLinkMessageChars = 64 * 1024 * 1024;

/** What runs inside numbered messages: the host's contract, as over the WebSocket. */
export type LinkBody =
  | { t: 'call'; id: number; op: string; args: unknown }
  | { t: 'result'; id: number; ok: true; value: unknown }
  | { t: 'result'; id: number; ok: false; error: { code: string; message: string } }
  | { t: 'event'; event: string; payload: unknown }
  /** A piece of a longer message's JSON; the message is the pieces joined, delivered at `last`. */
  | { t: 'part'; text: string; last: boolean };

/** Frames of the link (JSON in each frame's payload). */
export type LinkMessage =
  /** The remote's first frame after the start line: who it is. */
  | { k: 'server'; protocol: number; version: string }
  /** The local side's answer: a new session (null) or the one to resume, and how much of it it received. */
  | { k: 'hello'; protocol: number; version: string; session: string | null; received: number }
  | { k: 'welcome'; session: string; resumed: boolean; received: number }
  /** The remote cannot serve this link (one sentence); it closes after this. */
  | { k: 'refuse'; message: string }
  | { k: 'msg'; s: number; body: LinkBody }
  | { k: 'ack'; received: number }
  | { k: 'ping'; n: number }
  | { k: 'pong'; n: number };

export function encodeMessage(message: LinkMessage): Buffer {
  return encodeFrame(Buffer.from(JSON.stringify(message), 'utf8'));
}

export function decodeMessage(payload: Buffer): LinkMessage | null {
  try {
    const value = JSON.parse(payload.toString('utf8')) as LinkMessage;
    return value && typeof value === 'object' && typeof value.k === 'string' ? value : null;
  } catch {
    return null;
  }
}

/** Where a session's frames go while a link is up. */
export interface LinkTransport {
  write(frame: Buffer): void;
}

export interface LinkSessionOptions {
  clock: Clock;
  /** Unacknowledged bytes kept for a resume; past this the session cannot resume (default 8 MiB). */
  maxReplayBytes?: number;
  /** An acknowledgement goes out this long after the first unacknowledged message (default 50 ms)… */
  ackDelayMs?: number;
  /** …or at once after this many messages (default 32). */
  ackMessages?: number;
}

export const defaultMaxReplayBytes = 8 * 1024 * 1024;

/**
 * One end of a resumable session. `send` numbers and keeps; `receive` delivers each number
 * once, in order; `connect` puts a (new) transport under it and resends what the other end
 * says it lacks.
 */
export class LinkSession {
  private nextSeq = 1;
  private received = 0;
  private peerReceived = 0;
  private readonly kept: Array<{ s: number; frame: Buffer }> = [];
  private keptBytes = 0;
  private overflowed = false;
  private transport: LinkTransport | null = null;
  private ackTimer: ReturnType<typeof setTimeout> | null = null;
  private unackedIn = 0;
  private readonly maxReplay: number;
  /** The pieces of a message arriving in parts, and their length. */
  private parts: string[] = [];
  private partChars = 0;

  constructor(
    private readonly deliver: (body: LinkBody) => void,
    private readonly opts: LinkSessionOptions,
  ) {
    this.maxReplay = opts.maxReplayBytes ?? defaultMaxReplayBytes;
  }

  /** How many messages of the other end this end has received (for hello/welcome). */
  get receivedSeq(): number {
    return this.received;
  }

  /** Whether a resume can still deliver everything (false once the replay bound was passed). */
  get resumable(): boolean {
    return !this.overflowed;
  }

  get keptBytesNow(): number {
    return this.keptBytes;
  }

  get connected(): boolean {
    return this.transport !== null;
  }

  /**
   * Numbers, keeps and writes a message; one longer than `linkPartChars` goes in parts. False,
   * with nothing sent, for a message over `maxLinkMessageChars`: the caller says so instead.
   */
  send(body: LinkBody): boolean {
    const json = JSON.stringify(body);
    if (json.length > maxLinkMessageChars) return false;
    if (json.length <= linkPartChars) {
      this.sendFrame(encodeFrame(Buffer.from(`{"k":"msg","s":${this.nextSeq},"body":${json}}`, 'utf8')));
      return true;
    }
    for (let at = 0; at < json.length; at += linkPartChars) {
      const part: LinkBody = { t: 'part', text: json.slice(at, at + linkPartChars), last: at + linkPartChars >= json.length };
      this.sendFrame(encodeMessage({ k: 'msg', s: this.nextSeq, body: part }));
    }
    return true;
  }

  private sendFrame(frame: Buffer): void {
    const s = this.nextSeq++;
    if (!this.overflowed) {
      this.kept.push({ s, frame });
      this.keptBytes += frame.length;
      // Past the bound nothing is kept (memory stays bounded): a resume is no longer possible,
      // and the other end starts a new session with fresh snapshots instead.
      if (this.keptBytes > this.maxReplay) {
        this.overflowed = true;
        this.kept.length = 0;
        this.keptBytes = 0;
      }
    }
    this.transport?.write(frame);
  }

  /** A frame from the transport. Returns false when it breaks the session's order (the link must be dropped). */
  receive(message: LinkMessage): boolean {
    if (message.k === 'ack') {
      this.trim(message.received);
      return true;
    }
    if (message.k !== 'msg') return true;
    if (message.s <= this.received) return true; // resent across a resume: already delivered
    if (message.s !== this.received + 1) return false;
    this.received = message.s;
    this.unackedIn += 1;
    const body = this.joined(message.body);
    if (body === false) return false;
    if (body) this.deliver(body);
    this.scheduleAck();
    return true;
  }

  /** The message a body completes: itself, null while parts are still coming, false for parts past the bound or not JSON. */
  private joined(body: LinkBody): LinkBody | null | false {
    if (body.t !== 'part') return this.parts.length > 0 ? false : body;
    // A part that is not text drops the link (a number's length would leave the bound unchecked).
    if (typeof body.text !== 'string') return false;
    this.partChars += body.text.length;
    if (this.partChars > maxLinkMessageChars) return false;
    this.parts.push(body.text);
    if (!body.last) return null;
    const json = this.parts.join('');
    this.parts = [];
    this.partChars = 0;
    try {
      const whole = JSON.parse(json) as LinkBody;
      return whole && typeof whole === 'object' && typeof whole.t === 'string' && whole.t !== 'part' ? whole : false;
    } catch {
      return false;
    }
  }

  /** A transport is up and the other end has received up to `peerReceived`: resend the rest. */
  connect(transport: LinkTransport, peerReceived: number): void {
    this.transport = transport;
    this.trim(peerReceived);
    for (const { frame } of this.kept) transport.write(frame);
    if (this.unackedIn > 0) this.sendAck();
  }

  disconnect(): void {
    this.transport = null;
    if (this.ackTimer !== null) this.opts.clock.clearTimeout(this.ackTimer);
    this.ackTimer = null;
  }

  private trim(peerReceived: number): void {
    this.peerReceived = Math.max(this.peerReceived, peerReceived);
    while (this.kept.length > 0 && this.kept[0]!.s <= this.peerReceived) this.keptBytes -= this.kept.shift()!.frame.length;
  }

  private scheduleAck(): void {
    if (this.unackedIn >= (this.opts.ackMessages ?? 32)) {
      this.sendAck();
      return;
    }
    if (this.ackTimer !== null) return;
    this.ackTimer = this.opts.clock.setTimeout(() => {
      this.ackTimer = null;
      this.sendAck();
    }, this.opts.ackDelayMs ?? 50);
  }

  private sendAck(): void {
    if (!this.transport) return;
    if (this.ackTimer !== null) this.opts.clock.clearTimeout(this.ackTimer);
    this.ackTimer = null;
    this.unackedIn = 0;
    this.transport.write(encodeMessage({ k: 'ack', received: this.received }));
  }
}
