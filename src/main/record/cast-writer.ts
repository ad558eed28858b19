/**
 * The .cast files' writer, on a thread of its own. A flood's recording cost the main thread 7
 * ms of CPU per MiB or more, nearly all of it making text: joining a batch's reads into one
 * string (about 4 ms per MiB here: a new MiB-sized string each time), JSON.stringify of the
 * escape-heavy result, then UTF-8 encoding. On the 2-core bench machine that main thread is what a
 * flood waits on, so recording slowed a flood to 0.82x to 0.91x while a fifth of the CPU sat
 * idle. The recorder (recorder.ts) still batches on the main thread, where the terminal's order
 * of events is known, but posts a batch as the reads it got (an array, no join); this thread
 * redacts output and typed input each as a stream (redact.ts's own program; what may still become
 * a credential waits for the rest), times the event against the one before, encodes it, keeps the
 * file's size bound and appends.
 *
 * Bounded: the recorder counts the characters it posted and the thread has not written yet,
 * and refuses events past {@link maxInFlightChars} (its "disk was behind" marker says how many).
 * `TANDEM_RECORD_THREAD=0`, or a thread that cannot start, runs the same program inline.
 */
import { Worker } from 'node:worker_threads';
import { type RedactLists, redactLists, redactor } from './redact.js';

/** Characters posted to the writer and not yet written, per recording, past which events are refused. */
export const maxInFlightChars = 16 * 1024 * 1024;
/**
 * What may still become a credential (a last word, a name and separator, a URL), up to this long,
 * waits in the writer for the next output of the same stream, however late it comes.
 */
export const heldTailChars = 4096;

export type CastCode = 'o' | 'i' | 'r' | 'm' | 'x';

/** Messages to the writer. `at` is the recorder's clock in ms; `token` names a reply. */
export type ToWriter =
  | { t: 'open'; id: number; path: string; maxBytes: number; reserve: number; startAt: number; stoppedMarker: string }
  | { t: 'ev'; id: number; code: CastCode; data: string; at: number; reserved: boolean }
  /** Output as read: redacted and written as one `o` event; `all` (the exit, the close) lets go of what the stream holds; `gap`: output was skipped before it. */
  | { t: 'out'; id: number; pieces: string[]; at: number; all: boolean; gap: boolean }
  | { t: 'raw'; id: number; line: string }
  | { t: 'drain'; id: number; token: number }
  | { t: 'close'; id: number; token: number };

export type FromWriter =
  | { t: 'written'; id: number; chars: number }
  | { t: 'stopped'; id: number; reason: 'size' | 'disk'; message: string | null }
  | { t: 'drained'; token: number; size: number };

/**
 * The writer's program: `post` answers, the returned function takes messages in order. It runs
 * from source text in the thread (`eval`, as the PTY pump does), so the same code serves the
 * tests, `tandem serve` and the Electron bundle: it must not refer to anything outside itself.
 *
 * What it does to a flood is shaped by one cost measured on the bench machine: making a new
 * string or Buffer of a MiB (a join, JSON.stringify of the join, a Buffer for the line) costs 3
 * to 4 ms, most of it the fresh pages such a large object gets, while the same bytes written into
 * memory already in use take 0.1 ms. So a batch is handled in parts of at most `partChars`
 * (strings that small live in the heap's reused pages), each part's JSON is encoded into one
 * reused staging buffer, and the buffer is written synchronously (this thread has nothing else
 * to do; inline, a write of at most its size blocks the main thread that long).
 */
export function castFiles(
  post: (message: FromWriter) => void,
  redact: (text: string, end?: { open: boolean }) => string,
  holdChars: number,
): (message: ToWriter) => void {
  const fs = process.getBuiltinModule('node:fs');
  const partChars = 32 * 1024;
  const staging = Buffer.allocUnsafe(1024 * 1024);
  let staged = 0;
  interface File {
    path: string;
    fd: number | null;
    maxBytes: number;
    reserve: number;
    stoppedMarker: string;
    /** Bytes written. */
    size: number;
    lastEventAt: number;
    /** The output's and the typed input's redaction, each a stream of its own. */
    output: Stream;
    input: Stream;
    stopped: boolean;
    failed: boolean;
  }
  /**
   * One stream's redaction state: what it holds back (it may still become a credential: the
   * last word, a name and its separator, a URL's token), and whether the last text ended inside
   * a credential's value (marked already: the rest of the value, up to its end, is dropped).
   */
  interface Stream {
    held: string;
    inValue: boolean;
  }
  const files = new Map<number, File>();

  const failed = (id: number, file: File, error: Error): void => {
    if (file.failed) return;
    file.failed = true;
    post({ t: 'stopped', id, reason: 'disk', message: error.message });
  };

  const writeAll = (id: number, file: File, bytes: Buffer): void => {
    if (file.failed) return;
    try {
      file.fd ??= fs.openSync(file.path, 'a', 0o600);
      for (let at = 0; at < bytes.length;) at += fs.writeSync(file.fd, bytes, at, bytes.length - at);
    } catch (error) {
      failed(id, file, error as Error);
    }
  };

  const flush = (id: number, file: File): void => {
    if (staged === 0) return;
    const bytes = staging.subarray(0, staged);
    staged = 0;
    writeAll(id, file, bytes);
  };

  /** Stages `text` as UTF-8 (at most 3 bytes per UTF-16 unit), writing the buffer when it is full; returns its bytes. */
  const stage = (id: number, file: File, text: string): number => {
    if (text.length * 3 > staging.length - staged) flush(id, file);
    if (text.length * 3 <= staging.length - staged) {
      const bytes = staging.write(text, staged, 'utf8');
      staged += bytes;
      return bytes;
    }
    const own = Buffer.from(text, 'utf8');
    writeAll(id, file, own);
    return own.length;
  };

  /**
   * Writes one event whose data is the given JSON strings joined (each with its quotes, which go);
   * false when it was refused (the size bound, or a failed file).
   */
  const emit = (id: number, file: File, code: CastCode, jsons: string[], at: number, reserved: boolean): boolean => {
    if (file.failed || (file.stopped && !reserved)) return false;
    const when = Math.max(at, file.lastEventAt);
    const head = `[${Math.round(((when - file.lastEventAt) / 1000) * 1e6) / 1e6},"${code}","`;
    const room = file.maxBytes - file.size - (reserved ? 0 : file.reserve);
    let chars = head.length + 3;
    for (const json of jsons) chars += json.length - 2;
    // Measured only near the bound: far from it, even three bytes a character fits.
    let bytes = chars;
    if (chars * 3 > room) {
      bytes = head.length + 3;
      for (const json of jsons) bytes += Buffer.byteLength(json) - 2;
    }
    if (bytes > room) {
      if (!reserved) {
        // The bound: the rest of the room (kept back for this) says so, and the exit still fits.
        file.stopped = true;
        file.output = { held: '', inValue: false };
        file.input = { held: '', inValue: false };
        emit(id, file, 'm', [JSON.stringify(file.stoppedMarker)], at, true);
        post({ t: 'stopped', id, reason: 'size', message: null });
      }
      return false;
    }
    let written = stage(id, file, head);
    for (const json of jsons) written += stage(id, file, json.slice(1, -1));
    written += stage(id, file, '"]\n');
    file.size += written;
    file.lastEventAt = when;
    return true;
  };

  const isWord = (code: number): boolean => (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;
  const isGap = (code: number): boolean => code === 0x20 || code === 0x09 || code === 0x22 || code === 0x27;
  // Where a value ends, exactly as the redactor's value pattern says (`[^\s"'`\x1b]`): JavaScript's white space, a quote or backtick, ESC.
  const endsValue = (code: number): boolean =>
    (code >= 0x09 && code <= 0x0d) ||
    code === 0x20 ||
    code === 0x22 ||
    code === 0x27 ||
    code === 0x60 ||
    code === 0x1b ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff;

  /**
   * Where the part of `text` that may still become a credential starts: its last token (up to
   * where a value would end: a partial name, value or URL, `postgres:/`), the last `holdChars` of a
   * longer one; a text that ends in spaces or quotes, its last word before them (a name whose
   * separator is to come: `GITHUB_TOKEN ` | `= value`); and with either, a separator and the name
   * before it (`password: ` | `value`).
   */
  const holdFrom = (text: string): number => {
    const floor = Math.max(0, text.length - holdChars);
    const isSeparator = (at: number): boolean => at >= floor && at < text.length && (text.charCodeAt(at) === 0x3d || text.charCodeAt(at) === 0x3a);
    const gapsBefore = (at: number): number => {
      while (at > floor && isGap(text.charCodeAt(at - 1))) at -= 1;
      return at;
    };
    let from = text.length;
    while (from > floor && !endsValue(text.charCodeAt(from - 1))) from -= 1;
    // A text that ends in spaces or quotes: the word before them may be a name whose separator is to come.
    if (from === text.length) {
      from = gapsBefore(from);
      while (from > floor && isWord(text.charCodeAt(from - 1))) from -= 1;
    }
    // Never apart from its name: a separator beginning what is held (`GITHUB_TOKEN =`) or just
    // before it (`password: ` | `value`, `password=value ` | `more`).
    const separator = isSeparator(from) ? from : isSeparator(gapsBefore(from) - 1) ? gapsBefore(from) - 1 : -1;
    if (separator < 0) return from;
    let at = gapsBefore(separator);
    while (at > floor && !endsValue(text.charCodeAt(at - 1))) at -= 1;
    return at;
  };

  /** The stream's next text, redacted; unless `final`, what may still become a credential is held for its next text. */
  const redactStream = (stream: Stream, fresh: string, final: boolean): string => {
    let text = stream.held + fresh;
    stream.held = '';
    if (stream.inValue) {
      // The rest of a value cut before: already `[redacted]`, up to its end.
      let end = 0;
      while (end < text.length && !endsValue(text.charCodeAt(end))) end += 1;
      // (A gap in the recording also starts here: the text after it may begin with a value.)
      text = text.slice(end);
      stream.inValue = end === 0 ? false : text === '' && !final;
      if (stream.inValue) return '';
    }
    if (!final) {
      const from = holdFrom(text);
      stream.held = text.slice(from);
      text = text.slice(0, from);
    }
    if (text === '') return '';
    const end = { open: false };
    const out = redact(text, end);
    // A value that ran to the end goes on in the next text (a long one, or one cut in its middle).
    stream.inValue = end.open && !final;
    return out;
  };

  const output = (id: number, file: File, pieces: string[], at: number, final: boolean, gap = false): void => {
    if (file.stopped || file.failed) return;
    if (gap) {
      // Output was skipped before this (the writer was behind): what was held goes as it is, and
      // the first token after the gap is taken for the rest of a value (a `NAME=` may have been skipped).
      if (file.output.held !== '') output(id, file, [], at, true);
      file.output.inValue = true;
    }
    const jsons: string[] = [];
    const take = (part: string, last: boolean): void => {
      const text = redactStream(file.output, part, final && last);
      if (text !== '') jsons.push(JSON.stringify(text));
    };
    if (pieces.length === 0) take('', true);
    for (let k = 0; k < pieces.length; k++) {
      const piece = pieces[k]!;
      const last = k === pieces.length - 1;
      if (piece.length <= partChars) take(piece, last);
      else for (let i = 0; i < piece.length; i += partChars) take(piece.slice(i, i + partChars), last && i + partChars >= piece.length);
    }
    if (jsons.length > 0) emit(id, file, 'o', jsons, at, false);
  };

  /** The exit or the close: what each stream holds is written as it is now (redacted). */
  const release = (id: number, file: File, at: number): void => {
    if (file.output.held !== '') output(id, file, [], at, true);
    file.output.inValue = false;
    const input = redactStream(file.input, '', true);
    if (input !== '') emit(id, file, 'i', [JSON.stringify(input)], at, false);
  };

  return (message: ToWriter): void => {
    if (message.t === 'open') {
      const { id, path, maxBytes, reserve, startAt, stoppedMarker } = message;
      files.set(id, {
        path,
        fd: null,
        maxBytes,
        reserve,
        stoppedMarker,
        size: 0,
        lastEventAt: startAt,
        output: { held: '', inValue: false },
        input: { held: '', inValue: false },
        stopped: false,
        failed: false,
      });
      return;
    }
    const { id } = message;
    const file = files.get(id);
    const chars = message.t === 'ev' ? message.data.length : message.t === 'out' ? message.pieces.reduce((sum, piece) => sum + piece.length, 0) : 0;
    if (file) {
      switch (message.t) {
        case 'out':
          output(id, file, message.pieces, message.at, message.all, message.gap);
          break;
        case 'ev': {
          // Held output stays held across other events (a key, a resize, a marker): only the exit lets go of it.
          if (message.code === 'x') release(id, file, message.at);
          // Typed input is one more stream (a credential typed a key at a time is redacted whole).
          const data = message.code === 'i' ? redactStream(file.input, message.data, false) : message.data;
          if (message.code !== 'i' || data !== '') emit(id, file, message.code, [JSON.stringify(data)], message.at, message.reserved);
          break;
        }
        case 'raw':
          if (!file.failed && message.line.length * 3 <= file.maxBytes - file.size) file.size += stage(id, file, message.line);
          break;
        case 'drain':
        case 'close':
          break;
      }
      if (message.t === 'close') release(id, file, file.lastEventAt);
      flush(id, file);
      if (message.t === 'close') {
        files.delete(id);
        if (file.fd !== null) fs.close(file.fd, () => undefined);
      }
    }
    // Written or refused, the characters are no longer in flight.
    if (chars > 0) post({ t: 'written', id, chars });
    if (message.t === 'drain' || message.t === 'close') post({ t: 'drained', token: message.token, size: file?.size ?? 0 });
  };
}

/** One recording's .cast, open in the writer. */
export interface CastFile {
  /** Posts one event; false when it was refused here (past the in-flight bound, or the file stopped). */
  event(code: CastCode, data: string, at: number, reserved: boolean): boolean;
  /**
   * Posts a batch of output as read (`chars` their length); false when it was refused here. The
   * writer holds back what may still become a credential until more output comes, unless `all`
   * (the exit, the close); `gap` says output was skipped since the last batch it took.
   */
  output(pieces: string[], chars: number, at: number, all: boolean, gap?: boolean): boolean;
  /** A line as it is (a comment), written after the events before it. */
  raw(line: string): void;
  /** Everything posted so far is written (or refused); resolves with the file's size. */
  drained(): Promise<number>;
  /** Drains, then closes the file; resolves with its size. Nothing posted after it is written. */
  close(): Promise<number>;
  /** Characters posted and not yet written. */
  readonly inFlight: number;
}

export interface CastFileOptions {
  path: string;
  maxBytes: number;
  /** Kept back under `maxBytes` for reserved events (the marker that the bound was reached, the exit). */
  reserve: number;
  /** The recorder's clock at its start: the first event's time is counted from it. */
  startAt: number;
  /** The marker written once when the bound is reached. */
  stoppedMarker: string;
  /** The file stopped taking output: its bound was reached, or the disk failed. */
  onStopped(reason: 'size' | 'disk', message: string | null): void;
}

interface OpenFile {
  inFlight: number;
  stopped: boolean;
  onStopped: CastFileOptions['onStopped'];
}

/** The writer: a thread when it can start, the same program inline otherwise. */
class CastWriter {
  private worker: Worker | null = null;
  private inline: ((message: ToWriter) => void) | null = null;
  private nextId = 1;
  private nextToken = 1;
  private readonly files = new Map<number, OpenFile>();
  private readonly replies = new Map<number, (size: number) => void>();

  constructor(thread: boolean) {
    if (thread) {
      try {
        this.worker = this.start();
        return;
      } catch {
        this.worker = null;
      }
    }
    this.useInline();
  }

  get mode(): 'thread' | 'inline' {
    return this.worker ? 'thread' : 'inline';
  }

  private start(): Worker {
    // `__name` stands in for the helper some transpilers (tsx) add to named functions.
    // Both programs are passed in, not named: a bundler or test transform may rename imported names.
    const source = `var __name = (f) => f;\n(${threadMain.toString()})(${castFiles.toString()}, ${redactor.toString()});`;
    const worker = new Worker(source, { eval: true, workerData: { lists: redactLists, holdChars: heldTailChars } });
    worker.unref();
    worker.on('message', (message: FromWriter) => this.onMessage(message));
    // A thread that stopped leaves its files: their recordings say the writer stopped, and new ones run inline.
    const fail = (why: string): void => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.useInline();
      for (const [id, file] of [...this.files]) {
        this.files.delete(id);
        file.inFlight = 0;
        file.stopped = true;
        file.onStopped('disk', `the recording's writer thread stopped (${why})`);
      }
      for (const reply of this.replies.values()) reply(0);
      this.replies.clear();
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    return worker;
  }

  private useInline(): void {
    // Answers come on a later turn, as a thread's would: the recorder never sees one mid-call.
    this.inline ??= castFiles((message) => setImmediate(() => this.onMessage(message)), redactor(redactLists), heldTailChars);
  }

  private send(message: ToWriter): void {
    if (this.worker) this.worker.postMessage(message);
    else this.inline!(message);
  }

  private onMessage(message: FromWriter): void {
    if (message.t === 'drained') {
      const reply = this.replies.get(message.token);
      this.replies.delete(message.token);
      reply?.(message.size);
      return;
    }
    const file = this.files.get(message.id);
    if (!file) return;
    if (message.t === 'written') file.inFlight = Math.max(0, file.inFlight - message.chars);
    else if (!file.stopped) {
      file.stopped = true;
      file.onStopped(message.reason, message.message);
    }
  }

  private ask(kind: 'drain' | 'close', id: number): Promise<number> {
    const token = this.nextToken++;
    return new Promise<number>((resolve) => {
      this.replies.set(token, resolve);
      this.send({ t: kind, id, token });
    });
  }

  open(opts: CastFileOptions): CastFile {
    const id = this.nextId++;
    const state: OpenFile = { inFlight: 0, stopped: false, onStopped: opts.onStopped };
    this.files.set(id, state);
    this.worker?.ref();
    this.send({ t: 'open', id, path: opts.path, maxBytes: opts.maxBytes, reserve: opts.reserve, startAt: opts.startAt, stoppedMarker: opts.stoppedMarker });
    let closed: Promise<number> | null = null;
    return {
      event: (code, data, at, reserved) => {
        if (closed || (state.stopped && !reserved)) return false;
        if (!reserved && state.inFlight + data.length > maxInFlightChars) return false;
        state.inFlight += data.length;
        this.send({ t: 'ev', id, code, data, at, reserved });
        return true;
      },
      output: (pieces, chars, at, all, gap = false) => {
        if (closed || state.stopped || state.inFlight + chars > maxInFlightChars) return false;
        state.inFlight += chars;
        this.send({ t: 'out', id, pieces, at, all, gap });
        return true;
      },
      raw: (line) => {
        if (!closed) this.send({ t: 'raw', id, line });
      },
      drained: () => (closed ? closed : this.ask('drain', id)),
      close: () =>
        (closed ??= this.ask('close', id).finally(() => {
          this.files.delete(id);
          if (this.files.size === 0) this.worker?.unref();
        })),
      get inFlight() {
        return state.inFlight;
      },
    };
  }
}

/** The thread's side: messages in, answers out. Evaluated from source with the two programs it runs. */
function threadMain(files: typeof castFiles, makeRedact: typeof redactor): void {
  const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const port = parentPort!;
  const { lists, holdChars } = workerData as { lists: RedactLists; holdChars: number };
  const take = files((message) => port.postMessage(message), makeRedact(lists), holdChars);
  port.on('message', take);
}

let writer: CastWriter | null = null;

/** The process's writer (started on first use). */
export function castWriter(): CastWriter {
  return (writer ??= new CastWriter(process.env.TANDEM_RECORD_THREAD !== '0'));
}

/** A writer of its own (tests compare the two modes). */
export function newCastWriter(thread: boolean): CastWriter {
  return new CastWriter(thread);
}

export type { CastWriter };
