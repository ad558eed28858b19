import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../src/shared/settings';
import { maxExportCastBytes, RecordingStore } from '../../src/main/record/store';
import { systemClock } from '../../src/main/clock.js';

const root = mkdtempSync(join(tmpdir(), 'tandem-recording-pages-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * readRecordingCast's pages (the replay and export of a .cast past exportRecording's 8 MiB,
 * src/main/record/store.ts readCast): whole lines from a line's start, the pages joined are the
 * file, a line longer than a page is left out and counted, and an offset that is not a line's
 * start is refused.
 */
describe('RecordingStore.readCast: a .cast in pages', () => {
  const dir = join(root, 'recordings');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const store = new RecordingStore(dir, { clock: systemClock, bounds: () => defaultSettings });
  const id = '20261203T100000000Z-paged';
  const header = `${JSON.stringify({ version: 3, term: { cols: 80, rows: 24 } })}\n`;
  const line = (i: number, size: number) => `${JSON.stringify([0.016, 'o', `${i}:`.padEnd(size, 'x')])}\n`;

  async function readAll(name: string): Promise<{ text: string; pages: number; skipped: number; offsets: number[] }> {
    let offset: number | null = 0;
    let text = '';
    let pages = 0;
    let skipped = 0;
    const offsets: number[] = [];
    while (offset !== null) {
      const page = await store.readCast(name, offset);
      offsets.push(page.offset);
      text += page.text;
      pages += 1;
      skipped += page.skippedBytes;
      offset = page.nextOffset;
    }
    return { text, pages, skipped, offsets };
  }

  it('joins its pages into the whole file, each page cut at a line', async () => {
    const lines = [header];
    for (let i = 0, bytes = 0; bytes < 2.5 * maxExportCastBytes; i++) {
      lines.push(line(i, 60_000 + (i % 7) * 1000));
      bytes += Buffer.byteLength(lines.at(-1)!);
    }
    const cast = lines.join('');
    writeFileSync(join(dir, `${id}.cast`), cast);
    const all = await readAll(id);
    expect(all.pages).toBe(3);
    expect(all.skipped).toBe(0);
    expect(all.text === cast).toBe(true);
    for (const offset of all.offsets.slice(1))
      expect(
        Buffer.from(cast)
          .subarray(offset - 1, offset)
          .toString(),
      ).toBe('\n');
    // A terminal id finds its newest recording, as exportRecording does.
    expect((await store.readCast('paged', 0)).id).toBe(id);
  });

  it('leaves out a line longer than a page and counts it, and goes on after it', async () => {
    const big = line(1, maxExportCastBytes + 4096);
    const cast = header + line(0, 100) + big + line(2, 100) + line(3, 100);
    const name = '20261203T100001000Z-oversize';
    writeFileSync(join(dir, `${name}.cast`), cast);
    const all = await readAll(name);
    expect(all.skipped).toBe(Buffer.byteLength(big));
    expect(all.text).toBe(header + line(0, 100) + line(2, 100) + line(3, 100));
  });

  it('refuses an offset inside a line or past the end, and an unknown recording', async () => {
    await expect(store.readCast(id, 5)).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(store.readCast(id, 10 * maxExportCastBytes)).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(store.readCast('20261203T100002000Z-missing', 0)).rejects.toMatchObject({ code: 'not_found' });
    await expect(store.readCast('../settings.json', 0)).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});
