/**
 * The remote link's byte framing over an ssh session's stdout/stdin (docs/architecture.md,
 * "Remote machines"). An rc file or a motd may print anything before the remote program
 * starts, and nothing stops a stray write later, so a reader never trusts the stream:
 *
 *   start line  `\n##tandem-link/<framing>##\n`, everything before it is junk (skipped, reported)
 *   frame       MAGIC(4) | length u32 BE | crc32(payload) u32 | crc32(first 12 bytes) u32 | payload
 *
 * The header has its own checksum, so junk that happens to hold the magic bytes is not taken
 * for a frame (and a junk length never makes the reader wait for megabytes); a payload whose
 * checksum fails is skipped as junk too. Bytes between frames are skipped and reported.
 */
import { crc32 } from 'node:zlib';

/** The framing's version, in the start line. A change here is a new number. */
export const FRAMING = 1;
export const startLine = `\n##tandem-link/${FRAMING}##\n`;
const startPrefix = Buffer.from('##tandem-link/');
const MAGIC = Buffer.from([0xfe, 0x54, 0x4c, 0x01]);
const headerBytes = 16;
/** A frame's payload is at most this (output frames are ~64K characters: room for JSON and UTF-8). */
export const maxFramePayload = 4 * 1024 * 1024;
/** Junk before the start line beyond this means the other end is not a Tandem link. */
export const maxJunkBeforeStart = 64 * 1024;

export function encodeFrame(payload: Buffer): Buffer {
  if (payload.length > maxFramePayload) throw new Error(`A link frame of ${payload.length} bytes is over the ${maxFramePayload} byte bound.`);
  const frame = Buffer.allocUnsafe(headerBytes + payload.length);
  MAGIC.copy(frame, 0);
  frame.writeUInt32BE(payload.length, 4);
  frame.writeUInt32BE(crc32(payload), 8);
  frame.writeUInt32BE(crc32(frame.subarray(0, 12)), 12);
  payload.copy(frame, headerBytes);
  return frame;
}

export interface DecoderEvents {
  /** The start line, with the framing version the other end speaks. */
  start(framing: string): void;
  frame(payload: Buffer): void;
  /** Bytes that were skipped: before the start line, between frames, or a corrupt frame. */
  junk(bytes: Buffer, where: 'before-start' | 'between-frames' | 'corrupt-frame'): void;
  /** The stream cannot be a link (too much junk before a start line). */
  fail(message: string): void;
}

/** Incremental decoder: feed it chunks in order. */
export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);
  /** Chunks of a frame still incomplete, joined once it can be: a frame trickled a byte at a time is not copied again per byte. */
  private waiting: Buffer[] = [];
  private waitingBytes = 0;
  /** The buffer length the frame being read needs (0: none known). */
  private need = 0;
  private started = false;
  private failed = false;
  private junkBeforeStart = 0;

  constructor(private readonly on: DecoderEvents) {}

  get isStarted(): boolean {
    return this.started;
  }

  push(chunk: Buffer): void {
    if (this.failed) return;
    if (this.need > 0) {
      this.waiting.push(chunk);
      this.waitingBytes += chunk.length;
      if (this.buf.length + this.waitingBytes < this.need) return;
      this.buf = Buffer.concat([this.buf, ...this.waiting]);
      this.waiting = [];
      this.waitingBytes = 0;
      this.need = 0;
    } else this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    if (!this.started) this.findStart();
    if (this.started) this.readFrames();
  }

  private findStart(): void {
    for (;;) {
      const at = this.buf.indexOf(startPrefix);
      if (at < 0) {
        // Keep a possible partial prefix at the end; the rest is junk.
        const keep = Math.min(this.buf.length, startPrefix.length - 1);
        this.skipBefore(this.buf.length - keep);
        return;
      }
      const end = this.buf.indexOf('##\n', at + startPrefix.length);
      if (end < 0) {
        this.skipBefore(at);
        if (this.buf.length > 64)
          this.skipBefore(1); // not a start line after all
        else return;
        continue;
      }
      const framing = this.buf.subarray(at + startPrefix.length, end).toString('latin1');
      if (!/^[0-9]{1,6}$/.test(framing)) {
        this.skipBefore(at + 1);
        continue;
      }
      // The newline the start line begins with belongs to it, not to the junk.
      const junkEnd = at > 0 && this.buf[at - 1] === 0x0a ? at - 1 : at;
      this.skipBefore(junkEnd);
      this.buf = this.buf.subarray(end + 3 - junkEnd);
      this.started = true;
      this.on.start(framing);
      return;
    }
  }

  private skipBefore(n: number): void {
    if (n <= 0) return;
    this.on.junk(this.buf.subarray(0, n), 'before-start');
    this.junkBeforeStart += n;
    this.buf = this.buf.subarray(n);
    if (this.junkBeforeStart > maxJunkBeforeStart) {
      this.failed = true;
      this.on.fail(`The other end printed over ${maxJunkBeforeStart / 1024} KiB without starting a Tandem link.`);
    }
  }

  private readFrames(): void {
    while (!this.failed) {
      const at = this.buf.indexOf(MAGIC);
      if (at < 0) {
        const keep = Math.min(this.buf.length, MAGIC.length - 1);
        if (this.buf.length - keep > 0) this.junk(this.buf.length - keep, 'between-frames');
        return;
      }
      if (at > 0) this.junk(at, 'between-frames');
      if (this.buf.length < headerBytes) return;
      if (crc32(this.buf.subarray(0, 12)) !== this.buf.readUInt32BE(12) || this.buf.readUInt32BE(4) > maxFramePayload) {
        this.junk(1, 'between-frames');
        continue;
      }
      const length = this.buf.readUInt32BE(4);
      if (this.buf.length < headerBytes + length) {
        this.need = headerBytes + length;
        return;
      }
      const payload = this.buf.subarray(headerBytes, headerBytes + length);
      if (crc32(payload) !== this.buf.readUInt32BE(8)) {
        this.junk(headerBytes + length, 'corrupt-frame');
        continue;
      }
      this.buf = this.buf.subarray(headerBytes + length);
      this.on.frame(payload);
    }
  }

  private junk(n: number, where: 'between-frames' | 'corrupt-frame'): void {
    this.on.junk(this.buf.subarray(0, n), where);
    this.buf = this.buf.subarray(n);
  }
}

/** A bounded, printable preview of junk for a report. */
export function junkPreview(bytes: Buffer, max = 120): string {
  const text = bytes
    .subarray(0, max)
    .toString('utf8')
    .replace(/[\x00-\x1f\x7f]/g, (c) => (c === '\n' ? '⏎' : '·'));
  return bytes.length > max ? `${text}…` : text;
}
