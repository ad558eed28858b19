import { inflateRawSync } from 'node:zlib';
import { pack } from './packed-text.js';

/**
 * Scrollback beyond the emulator's hot window, kept as serialized terminal text in UTF-8,
 * deflated per batch (a few tenths of a byte per cell for typical output, instead of the ~12 of
 * a live buffer line; a serializer's string is a rope of small pieces that would cost far
 * more). Batches of lines leave the emulator together; the oldest batches go first once
 * `maxLines` is exceeded. Only a viewer's snapshot (attach, reload) inflates them.
 */
export class ColdHistory {
  private readonly batches: Array<{ packed: Buffer; lines: number; skipped?: number }> = [];
  private lineCount = 0;
  /** Lines pushed since start: a line's number in this count stays its own while it is kept (command marks). */
  private pushedLines = 0;

  constructor(private readonly maxLines: number) {}

  get lines(): number {
    return this.lineCount;
  }

  /** Lines pushed so far; the first kept line is number `pushed - lines`. */
  get pushed(): number {
    return this.pushedLines;
  }

  /** Lines the emulator recycled before they were saved (a resize reflowed them): one dim note line stands for each run. */
  skip(lines: number): void {
    const last = this.batches.at(-1);
    const skipped = (last?.skipped ?? 0) + lines;
    const text = `\x1b[2m[… ${skipped} lines not kept in scrollback …]\x1b[0m`;
    if (last?.skipped) {
      last.skipped = skipped;
      last.packed = pack(text);
      return;
    }
    this.push(text, 1);
    this.batches.at(-1)!.skipped = skipped;
  }

  push(text: string, lines: number): void {
    if (this.maxLines <= 0 || lines <= 0) return;
    this.batches.push({ packed: pack(text), lines });
    this.lineCount += lines;
    this.pushedLines += lines;
    while (this.batches.length > 1 && this.lineCount - this.batches[0]!.lines >= this.maxLines) {
      this.lineCount -= this.batches.shift()!.lines;
    }
  }

  /** The retained history as terminal output: batches joined by line breaks. */
  serialize(): string {
    return this.batches.map((batch) => inflateRawSync(batch.packed).toString()).join('\r\n');
  }

  /** Bytes held, deflated. */
  get bytes(): number {
    return this.batches.reduce((sum, batch) => sum + batch.packed.byteLength, 0);
  }

  clear(): void {
    this.batches.length = 0;
    this.lineCount = 0;
  }
}
