import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * Old output held deflated (history.ts): a few tenths of a byte per character of typical
 * terminal output instead of one or two. `length` is in UTF-16 units, as offsets are; the
 * UTF-8 round trip keeps every unit, since PTY text is decoded UTF-8 (no lone surrogates).
 */
export class PackedText {
  readonly length: number;
  private readonly packed: Buffer;

  constructor(text: string) {
    this.length = text.length;
    this.packed = pack(text);
  }

  get bytes(): number {
    return this.packed.byteLength;
  }

  text(): string {
    return inflateRawSync(this.packed).toString('utf8');
  }
}

/**
 * Deflated at level 1 (most of the saving for a fraction of the time), copied to a buffer of its
 * own size: zlib's result is a view of a 16 KiB chunk that would be kept whole.
 */
export function pack(text: string): Buffer {
  const view = deflateRawSync(text, { level: 1 });
  const own = Buffer.allocUnsafeSlow(view.byteLength);
  view.copy(own);
  return own;
}

/** The newest output stays plain: results and waits slice it, often. */
export const plainTailChars = 256 * 1024;
/** Characters per packed block: a slice inflates at most the blocks it overlaps. */
export const packBlockChars = 64 * 1024;
/** Packing waits for output to pause this long: a flood is never packed only to be dropped. */
export const packQuietMs = 40;

/**
 * Packs the oldest run of plain chunks that lies wholly before the plain tail into one block
 * (in place). Returns whether a run was packed (call again for the next).
 */
export function packOldest(chunks: Array<string | PackedText>, starts: number[], end: number): boolean {
  const limit = end - plainTailChars;
  let first = 0;
  while (first < chunks.length && typeof chunks[first] !== 'string') first++;
  let last = first;
  let chars = 0;
  while (last < chunks.length && typeof chunks[last] === 'string' && starts[last]! + chunks[last]!.length <= limit && chars < packBlockChars) {
    chars += chunks[last]!.length;
    last++;
  }
  if (last === first) return false;
  const block = new PackedText((chunks.slice(first, last) as string[]).join(''));
  chunks.splice(first, last - first, block);
  starts.splice(first + 1, last - first - 1);
  return true;
}
