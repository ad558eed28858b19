/**
 * Newline-delimited messages (stdio MCP's framing) out of a byte stream, each line bounded: a
 * line longer than `maxLineBytes` is dropped as it streams (never buffered whole) and reported
 * at its end with its last bytes, where a JSON-RPC request serialized by the SDK carries its
 * `id` (see `trailingId`), and the lines after it are read as usual.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  /** Inside an oversize line: skip to its newline, keeping only its tail. */
  private skipping = false;
  private tail = '';

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversize: (tail: string) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) {
        this.keep(chunk.subarray(start));
        return;
      }
      this.keep(chunk.subarray(start, newline));
      if (this.skipping) {
        const tail = this.tail;
        this.skipping = false;
        this.tail = '';
        this.onOversize(tail);
      } else {
        const line = this.take();
        const text = line.endsWith('\r') ? line.slice(0, -1) : line;
        if (text.trim().length > 0) this.onLine(text);
      }
      this.parts = [];
      this.size = 0;
      start = newline + 1;
    }
  }

  private keep(piece: Buffer): void {
    if (piece.length === 0) return;
    if (!this.skipping && this.size + piece.length > this.maxLineBytes) {
      this.skipping = true;
      this.tail = this.take().slice(-tailChars);
      this.parts = [];
      this.size = 0;
    }
    if (this.skipping) this.tail = (this.tail + piece.toString('latin1')).slice(-tailChars);
    else {
      this.parts.push(piece);
      this.size += piece.length;
    }
  }

  private take(): string {
    if (this.parts.length === 0) return '';
    return this.parts.length === 1 ? this.parts[0]!.toString('utf8') : Buffer.concat(this.parts, this.size).toString('utf8');
  }
}

const tailChars = 128;

/** The request id at the end of a line (`…,"id":7}`), or null: an oversize request is answered by its id. */
export function trailingId(tail: string): string | number | null {
  const match = /"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,64}")\s*\}\s*$/.exec(tail);
  if (!match) return null;
  const raw = match[1]!;
  if (raw.startsWith('"')) {
    try {
      return JSON.parse(raw) as string;
    } catch {
      return null;
    }
  }
  return Number(raw);
}
