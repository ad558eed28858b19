/**
 * One file appended to off the output path (the timeline's; a .cast goes through its writer
 * thread, cast-writer.ts): lines queue in memory (bounded) and go out in one write at a time
 * through a file handle opened 0600. Nothing here blocks the event loop on disk.
 */
import { open, type FileHandle } from 'node:fs/promises';

export interface SinkOptions {
  /** The file's size bound in bytes: lines past it are refused (`write` returns false). */
  maxBytes: number;
  /** Bytes queued and not yet written that this sink holds at most; past it lines are refused. */
  maxPendingBytes: number;
}

export class AppendSink {
  private handle: Promise<FileHandle> | null = null;
  private pending: string[] = [];
  private pendingBytes = 0;
  private writing: Promise<void> | null = null;
  private failed: Error | null = null;
  private closed = false;
  /** Bytes accepted so far (written or queued). */
  size = 0;

  constructor(
    readonly path: string,
    private readonly opts: SinkOptions,
  ) {}

  /** Room left under the size bound. */
  get room(): number {
    return this.opts.maxBytes - this.size;
  }

  /** Whether the memory bound would refuse `bytes` more now (the disk is behind). */
  backedUp(bytes: number): boolean {
    return this.pendingBytes + bytes > this.opts.maxPendingBytes;
  }

  get error(): Error | null {
    return this.failed;
  }

  /** Queues `text` (whole lines); false when it would pass a bound, the sink failed or closed. */
  write(text: string, bytes = Buffer.byteLength(text)): boolean {
    if (this.closed || this.failed || bytes > this.room || this.backedUp(bytes)) return false;
    this.pending.push(text);
    this.pendingBytes += bytes;
    this.size += bytes;
    this.writing ??= this.drain();
    return true;
  }

  private async drain(): Promise<void> {
    try {
      this.handle ??= open(this.path, 'a', 0o600);
      const handle = await this.handle;
      while (this.pending.length > 0) {
        const text = this.pending.join('');
        this.pending = [];
        this.pendingBytes = 0;
        // One gathering write (libuv writes all of it, past short writes).
        await handle.writev([Buffer.from(text)]);
      }
    } catch (error) {
      this.failed = error as Error;
      this.pending = [];
      this.pendingBytes = 0;
    } finally {
      this.writing = null;
    }
    // A line queued while the last write's promise settled.
    if (this.pending.length > 0 && !this.failed) this.writing = this.drain();
  }

  /** Resolves once everything queued so far is on disk (or failed). */
  async flushed(): Promise<void> {
    while (this.writing) await this.writing;
  }

  async close(): Promise<void> {
    await this.flushed();
    this.closed = true;
    const handle = this.handle;
    this.handle = null;
    if (handle) await (await handle.catch(() => null))?.close().catch(() => undefined);
  }
}
