import { describe, expect, it } from 'vitest';
import { stripEcho } from '../../src/main/terminal/projection/echo';
import { OutputProjector, type Projected } from '../../src/main/terminal/projection/projection';

const MARKER = /^… \d+ lines? \(\d+ bytes\) omitted …$/;

function project(chunks: string | string[], maxBytes = 64 * 1024, headFraction?: number): Projected {
  const p = new OutputProjector({ maxBytes, headFraction });
  for (const c of typeof chunks === 'string' ? [chunks] : chunks) p.push(c);
  return p.snapshot();
}

/** Every character as its own push(): splits every sequence, CRLF and surrogate pair. */
function perChar(text: string): string[] {
  return text.split('');
}

function bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** Output lines that are not the omission marker. */
function keptLines(output: string): string[] {
  return output.split('\n').filter((l) => !MARKER.test(l));
}

/** Deterministic pseudo-random numbers, so failures reproduce. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

function randomSplit(text: string, seed: number, maxLen = 16): string[] {
  const r = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < text.length;) {
    const n = 1 + Math.floor(r() * maxLen);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

describe('OutputProjector: line model', () => {
  it('passes plain text through', () => {
    const r = project('hello\r\nworld\r\n');
    expect(r).toEqual({ output: 'hello\nworld', truncated: null, altScreen: false });
    expect(project('one\ntwo\nthree').output).toBe('one\ntwo\nthree');
    expect(project('').output).toBe('');
  });

  it('treats CRLF split across chunks as one newline', () => {
    expect(project(['first\r', '\nsecond\r', '\n', 'third']).output).toBe('first\nsecond\nthird');
    expect(project(['a\r', '\r', '\nb']).output).toBe('a\nb');
  });

  it('collapses progress bars to their final frame', () => {
    const frames = ['  0%', ' 10%', ' 50%', '100%'].map((f) => `\rDownloading ${f}`).join('');
    expect(project(`start\r\n${frames}\r\ndone\r\n`).output).toBe('start\nDownloading 100%\ndone');
    // Frames in separate chunks, and a shorter final frame erased with CSI K.
    expect(project(['\rcounting 12345', '\rcounting 999', '\r\x1b[Kfinished\r\n']).output).toBe('finished');
    // A shorter frame without an erase leaves the tail of the longer one, as a terminal shows it.
    expect(project('\rabcdef\rXY').output).toBe('XYcdef');
  });

  it('removes escape sequences, including colours and sequences split across pushes', () => {
    const text =
      '\x1b[1;32m✓\x1b[0m passed \x1b[38;2;255;0;0mred\x1b[39m\r\n' +
      '\x1b]0;window title\x07\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\r\n' +
      '\x1b(B\x1b)0\x1b=\x1b>\x1b7\x1b8\x1b[?25l\x1b[?2004hprompt\x1b[?25h\r\n' +
      '\x1bP1$r0m\x1b\\dcs\x1b_apc\x1b\\ \x1b^pm\x1b\\ \x1bXsos\x1b\\ok\r\n' +
      '\x9b31mc1\x9b0m \x9d0;t\x07x\x07\x00\x01\x7fend\r\n';
    const expected = '✓ passed red\nlink\nprompt\ndcs  ok\nc1 xend';
    expect(project(text).output).toBe(expected);
    expect(project(perChar(text)).output).toBe(expected);
    for (let seed = 1; seed <= 20; seed++) expect(project(randomSplit(text, seed, 6)).output).toBe(expected);
  });

  it('bounds an unterminated sequence to 4 KiB and resumes', () => {
    const r = project('before\r\n\x1b]0;' + 'x'.repeat(5000) + '\r\nvisible');
    const lines = r.output.split('\n');
    expect(lines[0]).toBe('before');
    expect(lines[lines.length - 1]).toBe('visible');
    expect(r.output.length).toBeLessThan(2000);
    // A runaway CSI is bounded the same way.
    expect(project('\x1b[' + '1;'.repeat(3000) + 'm\r\nafter').output.endsWith('\nafter')).toBe(true);
  });

  it('applies CSI K to the current line', () => {
    expect(project('abcdef\x1b[3D\x1b[K\r\n').output).toBe('abc');
    expect(project('abcdef\x1b[3D\x1b[0K!').output).toBe('abc!');
    // CSI 1K erases up to and including the cursor cell.
    expect(project('abcdef\x1b[3D\x1b[1K').output).toBe('    ef');
    expect(project('abcdef\x1b[2K').output).toBe('');
    expect(project('abcdef\x1b[2K\rnew').output).toBe('new');
    expect(project('abcdef\x1b[2Kx').output).toBe('      x');
  });

  it('handles backspace', () => {
    expect(project('abc\b\bX').output).toBe('aXc');
    expect(project('ab\b \b').output).toBe('a');
    expect(project('\b\bx').output).toBe('x');
    expect(project('spin |\b/\b-\b\\\b|\r\n').output).toBe('spin |');
  });

  it('moves the cursor with CSI G, C and D', () => {
    expect(project('a\x1b[5Gb').output).toBe('a   b');
    expect(project('a\x1b[3Cb').output).toBe('a   b');
    expect(project('abcdef\x1b[1GX').output).toBe('Xbcdef');
    expect(project('abcdef\x1b[GX\x1b[2CY').output).toBe('XbcYef');
  });

  it('keeps tabs and trims trailing spaces', () => {
    expect(project('a\tb   \r\n\tc\t \r\n').output).toBe('a\tb\n\tc\t');
  });

  it('redraws multi-line progress in place with cursor up', () => {
    const frame = (a: string, b: string) => `\x1b[2K => [1/2] ${a}\r\n\x1b[2K => [2/2] ${b}\r\n`;
    const text = 'Building\r\n' + frame('FROM', 'waiting') + '\x1b[2A' + frame('FROM 1.0s', 'RUN') + '\x1b[2A' + frame('FROM done', 'RUN done') + 'ok';
    const expected = 'Building\n => [1/2] FROM done\n => [2/2] RUN done\nok';
    expect(project(text).output).toBe(expected);
    expect(project(perChar(text)).output).toBe(expected);
    // CSI F (previous line, column 0) edits an earlier line; CSI B goes back down, keeping the column.
    expect(project('one\r\ntwo\r\nthree\x1b[2FONE\x1b[2BX').output).toBe('ONE\ntwo\nthrXe');
  });

  it('ignores cursor up past what is still editable', () => {
    expect(project('only\x1b[5Ax').output).toBe('onlyx');
    expect(project('a\r\nb\x1b[9A\rc').output).toBe('a\nc');
  });

  it('excludes alternate-screen text and reports the flag', () => {
    const p = new OutputProjector({ maxBytes: 4096 });
    p.push('$ vim file\r\n');
    p.push('\x1b[?1049h\x1b[H\x1b[2Jfull screen text\r\n~\r\n');
    expect(p.altScreen).toBe(true);
    const during = p.snapshot();
    expect(during.altScreen).toBe(true);
    expect(during.output).toBe('$ vim file');
    p.push('more\x1b[?1049');
    expect(p.altScreen).toBe(true);
    p.push('l');
    expect(p.altScreen).toBe(false);
    p.push('back\r\n');
    expect(p.snapshot()).toEqual({ output: '$ vim file\nback', truncated: null, altScreen: false });
    expect(project('a\x1b[?47hhidden\x1b[?47lb').output).toBe('ab');
    expect(project('a\x1b[?1047;1hhidden\x1b[?1047lb').output).toBe('ab');
  });

  it('passes emoji, CJK and U+FFFD through and counts UTF-8 bytes', () => {
    const text = '日本語テキスト\r\n😀 emoji 👍🏽\r\nbad \ufffd byte\r\n';
    expect(project(text).output).toBe('日本語テキスト\n😀 emoji 👍🏽\nbad \ufffd byte');
    // Surrogate pairs split across pushes.
    expect(project(perChar(text)).output).toBe('日本語テキスト\n😀 emoji 👍🏽\nbad \ufffd byte');
    const p = new OutputProjector({ maxBytes: 1024 });
    p.push('😀'.slice(0, 1));
    p.push('😀'.slice(1) + '日');
    expect(p.bytesSeen).toBe(4 + 3);
    // Wide characters take two cells: two backspaces step over one.
    expect(project('ab日本\b\bX').output).toBe('ab日X');
    expect(project('ab😀\b\bZ').output).toBe('abZ');
  });

  it('drops trailing empty lines and never ends with a newline', () => {
    expect(project('a\r\n\r\n\r\n').output).toBe('a');
    expect(project('a\nb').output).toBe('a\nb');
    expect(project('\r\n\r\n').output).toBe('');
    expect(project('a\r\n\r\nb\r\n   \r\n').output).toBe('a\n\nb');
    const big = project('x\r\n'.repeat(100_000) + '\r\n'.repeat(50), 4096);
    expect(big.output.endsWith('\n')).toBe(false);
    expect(big.output.endsWith('x')).toBe(true);
  });
});

describe('OutputProjector: bounding', () => {
  it('keeps the head and the tail of 200,000 lines with exact counts', () => {
    const maxBytes = 16 * 1024;
    const p = new OutputProjector({ maxBytes });
    let total = 0;
    let chunk = '';
    for (let i = 1; i <= 200_000; i++) {
      const line = `line ${i}`;
      total += bytes(line) + 1;
      chunk += line + '\r\n';
      if (chunk.length > 3000) {
        p.push(chunk);
        chunk = '';
      }
    }
    p.push(chunk);
    const r = p.snapshot();
    const lines = r.output.split('\n');
    expect(lines[0]).toBe('line 1');
    expect(lines[1]).toBe('line 2');
    expect(lines[lines.length - 1]).toBe('line 200000');
    const markerAt = lines.findIndex((l) => MARKER.test(l));
    expect(markerAt).toBeGreaterThan(0);
    const head = lines.slice(0, markerAt);
    const tail = lines.slice(markerAt + 1);
    // Head and tail are each contiguous runs of the input.
    head.forEach((l, k) => expect(l).toBe(`line ${k + 1}`));
    tail.forEach((l, k) => expect(l).toBe(`line ${200_000 - tail.length + 1 + k}`));
    expect(r.truncated).not.toBeNull();
    const { omittedLines, omittedBytes } = r.truncated!;
    expect(omittedLines + head.length + tail.length).toBe(200_000);
    const keptBytes = [...head, ...tail].reduce((n, l) => n + bytes(l) + 1, 0);
    expect(keptBytes + omittedBytes).toBe(total);
    expect(lines[markerAt]).toBe(`… ${omittedLines} lines (${omittedBytes} bytes) omitted …`);
    expect(bytes(r.output)).toBeLessThanOrEqual(maxBytes);
    expect(bytes(head.join('\n'))).toBeLessThanOrEqual(maxBytes * 0.25);
    // The tail uses most of the remaining budget.
    expect(bytes(r.output)).toBeGreaterThan(maxBytes - 200);
  });

  it('honours headFraction', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `row ${i}`).join('\n');
    const r = project(text, 2000, 0.5);
    const lines = r.output.split('\n');
    const markerAt = lines.findIndex((l) => MARKER.test(l));
    expect(bytes(lines.slice(0, markerAt).join('\n'))).toBeGreaterThan(900);
    expect(bytes(lines.slice(0, markerAt).join('\n'))).toBeLessThanOrEqual(1000);
    expect(lines[lines.length - 1]).toBe('row 999');
    expect(bytes(r.output)).toBeLessThanOrEqual(2000);
  });

  it('does not truncate output that fits', () => {
    const text = 'x'.repeat(99) + '\n' + 'y'.repeat(99);
    expect(project(text, 199)).toEqual({ output: text, truncated: null, altScreen: false });
    expect(project(text, 198).truncated).not.toBeNull();
  });

  it('stays bounded when 64 MiB are pushed', () => {
    const maxBytes = 16 * 1024;
    const p = new OutputProjector({ maxBytes });
    const unit = '\x1b[32mok\x1b[0m some/test/file.test.ts (12 tests) 45ms\r\n';
    const chunk = unit.repeat(Math.floor(65536 / unit.length));
    let pushed = 0;
    let lines = 0;
    while (pushed < 64 * 1024 * 1024) {
      p.push(chunk);
      pushed += chunk.length;
      lines += chunk.length / unit.length;
      if ((pushed / chunk.length) % 128 === 0) {
        const s = p.snapshot();
        expect(bytes(s.output)).toBeLessThanOrEqual(maxBytes);
      }
    }
    expect(p.bytesSeen).toBe(pushed);
    const r = p.snapshot();
    expect(bytes(r.output)).toBeLessThanOrEqual(maxBytes);
    expect(r.output.length).toBeGreaterThan(maxBytes / 2);
    expect(r.truncated!.omittedLines + keptLines(r.output).length).toBe(lines);
    expect(r.output.split('\n').pop()).toBe('ok some/test/file.test.ts (12 tests) 45ms');
  });

  it('cuts a single giant line and counts the cut bytes', () => {
    const maxBytes = 8 * 1024;
    const p = new OutputProjector({ maxBytes });
    const part = 'abcdefghij'.repeat(10_000); // 100 KB
    for (let i = 0; i < 100; i++) p.push(part);
    const r = p.snapshot();
    const [marker, line, ...more] = r.output.split('\n');
    expect(marker).toMatch(MARKER);
    expect(more).toEqual([]);
    expect(line!.startsWith('abcdefghij')).toBe(true);
    expect(r.truncated!.omittedLines).toBe(0);
    expect(bytes(line!) + r.truncated!.omittedBytes).toBe(part.length * 100);
    expect(bytes(r.output)).toBeLessThanOrEqual(maxBytes);

    // The same line finished, between short lines; and with multi-byte characters.
    const q = project(['first\r\n', '日本'.repeat(50_000), '\r\nlast\r\n'], maxBytes);
    const ql = q.output.split('\n');
    expect(ql[0]).toBe('first');
    expect(ql[ql.length - 1]).toBe('last');
    const cut = ql[ql.length - 2]!;
    expect(cut.startsWith('日本日本')).toBe(true);
    expect(q.truncated!.omittedLines).toBe(0);
    expect(bytes(cut) + q.truncated!.omittedBytes).toBe(300_000);
    expect(bytes(q.output)).toBeLessThanOrEqual(maxBytes);
  });

  it('counts multi-byte lines exactly when truncating', () => {
    const maxBytes = 4096;
    const all: string[] = [];
    for (let i = 0; i < 5000; i++) all.push(i % 3 === 0 ? `行 ${i} 😀` : i % 3 === 1 ? `línea ${i}` : `line ${i}`);
    const text = all.join('\r\n') + '\r\n';
    const total = all.reduce((n, l) => n + bytes(l) + 1, 0);
    for (const chunks of [[text], randomSplit(text, 7, 4000)]) {
      const r = project(chunks, maxBytes);
      const kept = keptLines(r.output);
      expect(kept[0]).toBe(all[0]);
      expect(kept[kept.length - 1]).toBe(all[all.length - 1]);
      expect(r.truncated!.omittedLines + kept.length).toBe(all.length);
      expect(kept.reduce((n, l) => n + bytes(l) + 1, 0) + r.truncated!.omittedBytes).toBe(total);
      expect(bytes(r.output)).toBeLessThanOrEqual(maxBytes);
    }
  });

  /**
   * A long random mix of everything the projector handles. Lines longer than the budget
   * are not mixed with moves back (cursor up, backspace): such a line is cut as it streams,
   * and an edit reaching back past the cut is approximate in omittedBytes.
   */
  function messyText(seed: number, count: number, longLines: boolean): string {
    const r = rng(seed);
    const pieces = [
      'plain line',
      '\x1b[31mred\x1b[0m',
      '\r 50%\r100%',
      'tab\there',
      '日本語',
      '😀',
      '\x1b[2K\rredrawn',
      '\x1b]0;t\x07',
      '\x1b[?1049halt\r\nscreen\x1b[?1049l',
      '\x1b[10Gcol',
      '   ',
      'x'.repeat(300),
      ...(longLines
        ? ['w'.repeat(1500), '日'.repeat(400)]
        : [
            '\x1b[2A\x1b[2Kup\x1b[1B',
            '\x1bMri',
            '\x1b[2Fprev',
            '\x1b[Enext',
            '\x1b[9A',
            'abc\b\bX',
            'ab日\b\bZ',
            'e\u0301\b\bé',
            '\x1b[3Dxy\x1b[K',
            '\x1b[1Kz',
            '\x1b[5Cq',
            '\x1b[2@ins',
            '\x1b[3Pdel',
            '\x1b[4Xech',
          ]),
    ];
    let text = '';
    for (let i = 0; i < count; i++) {
      text += pieces[Math.floor(r() * pieces.length)]!;
      text += r() < 0.6 ? '\r\n' : r() < 0.5 ? '\n' : '';
    }
    return text + '\r\nthe end';
  }

  it('gives the same projection however the input is split', () => {
    for (const longLines of [false, true]) {
      const text = messyText(42, 4000, longLines);
      for (const maxBytes of [1 << 20, 8192, 1000]) {
        const whole = project(text, maxBytes);
        for (let seed = 1; seed <= 4; seed++) expect(project(randomSplit(text, seed, 64), maxBytes)).toEqual(whole);
        expect(project(randomSplit(text, 99, 5000), maxBytes)).toEqual(whole);
        expect(project(perChar(text.slice(0, 20_000)), maxBytes)).toEqual(project(text.slice(0, 20_000), maxBytes));
        expect(bytes(whole.output)).toBeLessThanOrEqual(maxBytes);
      }
    }
  });

  it('truncates to a head and a tail of the untruncated projection, with exact counts', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const text = messyText(seed, 1500 * seed, seed % 2 === 0);
      const full = project(text, 1 << 30).output.split('\n');
      const fullBytes = full.reduce((n, l) => n + bytes(l) + 1, 0);
      for (const maxBytes of [600, 2000, 16 * 1024]) {
        const r = project(randomSplit(text, seed, 3000), maxBytes);
        expect(bytes(r.output)).toBeLessThanOrEqual(maxBytes);
        if (r.truncated === null) {
          expect(r.output).toBe(full.join('\n'));
          continue;
        }
        const lines = r.output.split('\n');
        const m = lines.findIndex((l) => MARKER.test(l));
        const head = lines.slice(0, m);
        const tail = lines.slice(m + 1);
        expect(head).toEqual(full.slice(0, head.length));
        const fullTail = full.slice(full.length - tail.length);
        // Tail lines are whole, except that an over-long line is cut.
        tail.forEach((l, k) => (l === fullTail[k] ? null : expect(fullTail[k]!.startsWith(l)).toBe(true)));
        expect(r.truncated.omittedLines).toBe(full.length - head.length - tail.length);
        const kept = [...head, ...tail].reduce((n, l) => n + bytes(l) + 1, 0);
        expect(r.truncated.omittedBytes).toBe(fullBytes - kept);
      }
    }
  });

  /** Floods of short lines (a full head, tens of thousands of lines after it): blank runs, tabs and spaces before line ends, CRs, wide characters. */
  function floodText(seed: number, count: number): string {
    const r = rng(seed);
    const pieces = ['y', '', '', 'tab\t', 'sp  ', '\r 9%\r10%', '日本', '😀x', 'z'.repeat(40), '\t', ' '];
    let text = '';
    for (let i = 0; i < count; i++) text += pieces[Math.floor(r() * pieces.length)]! + (r() < 0.7 ? '\r\n' : '\n');
    // Some end with blank lines, which are not output, however many there are.
    return seed % 2 === 0 ? text + '\r\n'.repeat(1 + Math.floor(r() * 3000)) : text;
  }

  it('a flood read back from its end: the same lines and exact counts as the whole projection, at every snapshot', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const text = floodText(seed, 20_000 + 5000 * seed);
      const chunks = randomSplit(text, seed, 9000);
      for (const maxBytes of [300, 4096, 16 * 1024]) {
        const p = new OutputProjector({ maxBytes });
        let fed = '';
        chunks.forEach((chunk, n) => {
          p.push(chunk);
          fed += chunk;
          if (n % 7 !== 0 && n !== chunks.length - 1) return;
          const r = p.snapshot();
          const full = project(fed, 1 << 30).output;
          const fullLines = full === '' ? [] : full.split('\n');
          expect(bytes(r.output)).toBeLessThanOrEqual(maxBytes);
          if (r.truncated === null) return expect(r.output).toBe(full);
          const lines = r.output.split('\n');
          const m = lines.findIndex((l) => MARKER.test(l));
          const head = lines.slice(0, m);
          const tail = lines.slice(m + 1);
          expect(head).toEqual(fullLines.slice(0, head.length));
          expect(tail).toEqual(fullLines.slice(fullLines.length - tail.length));
          expect(r.truncated.omittedLines).toBe(fullLines.length - head.length - tail.length);
          const kept = [...head, ...tail].reduce((sum, l) => sum + bytes(l) + 1, 0);
          expect(r.truncated.omittedBytes).toBe(fullLines.reduce((sum, l) => sum + bytes(l) + 1, 0) - kept);
        });
      }
    }
  });

  it('rejects a non-positive budget', () => {
    expect(() => new OutputProjector({ maxBytes: 0 })).toThrow(RangeError);
    expect(() => new OutputProjector({ maxBytes: Number.NaN })).toThrow(RangeError);
  });
});

describe('stripEcho', () => {
  it('removes an echoed command line', () => {
    const r = project('echo hi\r\nhi\r\n');
    expect(stripEcho(r.output, 'echo hi\r')).toBe('hi');
    expect(stripEcho(r.output, 'echo hi\n')).toBe('hi');
  });

  it('removes an echoed answer', () => {
    const r = project(['Bob', '\r\n', 'Hello, Bob!\r\n']);
    expect(r.output).toBe('Bob\nHello, Bob!');
    expect(stripEcho(r.output, 'Bob\r')).toBe('Hello, Bob!');
    expect(stripEcho(r.output, 'Bob\r\n')).toBe('Hello, Bob!');
  });

  it('handles partial echoes, edits and no echo', () => {
    expect(stripEcho('Bob', 'Bob\r')).toBe('');
    expect(stripEcho('Bo', 'Bob\r')).toBe('');
    expect(stripEcho('y\nDone', 'y')).toBe('Done');
    expect(stripEcho('Bob\nok', 'Bobb\x7f\r')).toBe('ok');
    expect(stripEcho('Welcome', 'secret\r')).toBe('Welcome');
    expect(stripEcho('anything', '')).toBe('anything');
  });
});
