import { DEFAULT_LIMITS } from '../../../shared/limits';

/** UTF-16 units per input call: at most 3 UTF-8 bytes each keeps a chunk under the byte limit. */
export const inputChunkUnits = Math.floor(DEFAULT_LIMITS.maxInputBytes / 3) - 1;

/** Splits a large paste into calls the host accepts, never inside a surrogate pair. */
export function chunkInput(data: string, size = inputChunkUnits): string[] {
  if (data.length <= size) return [data];
  const chunks: string[] = [];
  let start = 0;
  while (start < data.length) {
    let end = Math.min(start + size, data.length);
    const last = data.charCodeAt(end - 1);
    if (end < data.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    chunks.push(data.slice(start, end));
    start = end;
  }
  return chunks;
}
