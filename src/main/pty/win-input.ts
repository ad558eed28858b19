/**
 * Input for ConPTY. Large writes into the pseudoconsole have been corrupted, so input goes in
 * small chunks; a chunk boundary inside an escape sequence would reach the console as two broken
 * keys, and one inside a surrogate pair as two invalid characters, so neither is ever split.
 */
export const conptyChunkChars = 50;

const ESC = 0x1b;
const BEL = 0x07;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Length of one character: a surrogate pair counts as one. */
function charLength(data: string, i: number): number {
  return isHighSurrogate(data.charCodeAt(i)) && isLowSurrogate(data.charCodeAt(i + 1)) ? 2 : 1;
}

/** CSI: parameters 0x30–0x3F, intermediates 0x20–0x2F, one final 0x40–0x7E (e.g. `ESC[200~`). */
function csiEnd(data: string, i: number): number {
  let j = i;
  while (j < data.length && data.charCodeAt(j) >= 0x30 && data.charCodeAt(j) <= 0x3f) j++;
  while (j < data.length && data.charCodeAt(j) >= 0x20 && data.charCodeAt(j) <= 0x2f) j++;
  const final = data.charCodeAt(j);
  return final >= 0x40 && final <= 0x7e ? j + 1 : j;
}

/** OSC, DCS, SOS, PM, APC: up to BEL or ST (`ESC \`), or the end of the input. */
function stringEnd(data: string, i: number): number {
  for (let j = i; j < data.length; j++) {
    const code = data.charCodeAt(j);
    if (code === BEL) return j + 1;
    if (code === ESC && data[j + 1] === '\\') return j + 2;
  }
  return data.length;
}

/** Length of the unit at `i` that must stay whole: an escape sequence, a surrogate pair or one code unit. */
export function unitLength(data: string, i: number): number {
  if (data.charCodeAt(i) !== ESC || i + 1 >= data.length) return charLength(data, i);
  const kind = data[i + 1]!;
  if (kind === '[') return csiEnd(data, i + 2) - i;
  if (']P_^X'.includes(kind)) return stringEnd(data, i + 2) - i;
  // SS2/SS3 (`ESC O A`, the application-mode arrows) carry one more character.
  if (kind === 'O' || kind === 'N') return i + 2 < data.length ? 2 + charLength(data, i + 2) : 2;
  // nF escapes (`ESC ( B`): intermediates, then a final byte.
  let j = i + 1;
  while (j < data.length && data.charCodeAt(j) >= 0x20 && data.charCodeAt(j) <= 0x2f) j++;
  if (j > i + 1) return Math.min(data.length, j + 1) - i;
  // Alt+key: ESC and one character.
  return 1 + charLength(data, i + 1);
}

/**
 * A unit, with an Enter (CR) glued to what follows it: a chunk never ends in CR unless the input
 * does. PowerShell's Enter hook joins the lines of a multi-line send only while the rest of the
 * send is already queued; a chunk ending in CR would let the line run before the next chunk came.
 */
function chunkUnitLength(data: string, i: number): number {
  let end = i + unitLength(data, i);
  while (data.charCodeAt(end - 1) === 0x0d && end < data.length) end += unitLength(data, end);
  return end - i;
}

/**
 * Splits input into chunks of at most `maxChars` UTF-16 code units, breaking only between units.
 * A single unit longer than `maxChars` (a long OSC) becomes a chunk of its own.
 */
export function chunkInput(data: string, maxChars = conptyChunkChars): string[] {
  if (data.length <= maxChars) return data.length > 0 ? [data] : [];
  const chunks: string[] = [];
  let start = 0;
  let i = 0;
  while (i < data.length) {
    const length = chunkUnitLength(data, i);
    if (i + length - start > maxChars && i > start) {
      chunks.push(data.slice(start, i));
      start = i;
    }
    i += length;
  }
  if (start < data.length) chunks.push(data.slice(start));
  return chunks;
}

/** How long ConPTY input chunks are spaced (VS Code's WriteInterval): writes that reach the pipe together are what corrupts input. */
export const conptyChunkSpacingMs = 5;

export interface SpacingClock {
  setTimeout(fn: () => void, ms: number): unknown;
}

/**
 * Writes input in chunks `conptyChunkSpacingMs` apart; resolves once the last chunk is written.
 * Callers serialize writes, so one input never interleaves with another; protocol replies do
 * not come through here and reach the PTY at once, between chunks (never inside a unit).
 */
export async function writeSpaced(data: string, write: (chunk: string) => void, clock: SpacingClock, spacingMs = conptyChunkSpacingMs): Promise<void> {
  const chunks = chunkInput(data);
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0) await new Promise<void>((resolve) => clock.setTimeout(resolve, spacingMs));
    write(chunks[i]!);
  }
}
