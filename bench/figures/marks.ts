/**
 * Command marks (issue 29): the view's frame time with about 10,000 commands' marks in its
 * scrollback. A real `tandem serve` (in process) and Debian's Chromium running the built UI
 * (`npm run build` first): bash runs 10,000 commands (each a mark with a gutter decoration and an
 * overview-ruler entry), then frames of 100 lines each are written to the view and timed: the
 * parse, and the next animation frame's work up to the view's drawing (not the wait for it).
 * Every frame scrolls lines (and their marks) out of the full scrollback. Baseline: the same
 * frames in a view of the same size whose full scrollback has no marks (timed in turns, each view
 * while it is the one shown).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium } from '../../tests/e2e/helpers/browser.js';
import { startInProcessServe } from '../../tests/e2e/helpers/in-process.js';
import { testUrl } from '../../tests/e2e/helpers/serve.js';
import { sleep } from '../lib/procs.js';
import type { Figure } from '../lib/types.js';
import { maxViewMarks } from '../../src/renderer/src/terminal/command-marks.js';

interface Hook {
  timeWrite(id: string, data: string): Promise<{ parse: number; total: number }>;
  marks(id: string): unknown[] | null;
  screen(id: string): string | null;
}

const hookOf = (page: Page) => ({
  count: (id: string) => page.evaluate((t) => (window as unknown as { __tandemTest: Hook }).__tandemTest.marks(t)?.length ?? 0, id),
  screen: (id: string) => page.evaluate((t) => (window as unknown as { __tandemTest: Hook }).__tandemTest.screen(t) ?? '', id),
  time: (id: string, data: string) =>
    page.evaluate(([t, d]) => (window as unknown as { __tandemTest: Hook }).__tandemTest.timeWrite(t!, d!), [id, data] as const),
});

async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

export const marksFigure: Figure = {
  id: 'marks',
  title: 'Command marks: frame time with 10,000 commands in scrollback, all marked in the view',
  rows: [
    {
      name: 'marks.view.frame',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 4 },
      description:
        'a 100-line frame written to a view holding ~10,000 command marks: its parse and the drawing frame after it (Chromium, built UI); baseline: the same view size with a full scrollback and no marks',
    },
  ],
  async run(opts) {
    const commands = opts.pick(10_000, 2_000);
    const frames = opts.pick(100, 20);
    // TANDEM_BENCH_RENDERER: another built renderer (a saved build, to compare two versions in turn).
    const serve = await startInProcessServe(process.env.TANDEM_BENCH_RENDERER || undefined);
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await page.goto(testUrl(serve.loginUrl));
      await page.locator('[data-connection="connected"]').waitFor();
      const hook = hookOf(page);
      const open = async (): Promise<string> => {
        const before = new Set(serve.host.list().map((t) => t.id));
        await page
          .getByRole('button', { name: /^New terminal/ })
          .first()
          .click();
        let id = '';
        await until(async () => Boolean((id = serve.host.list().find((t) => !before.has(t.id))?.id ?? '')), 'a terminal', 30_000);
        await until(async () => serve.host.get(id).session.status === 'idle', 'the prompt', 30_000);
        return id;
      };
      const marked = await open();
      const session = serve.host.get(marked).session;
      // Typed ahead in chunks: bash runs each line as its own command, with its own markers.
      let ended = 0;
      session.marks.onUpdate((update) => void (update.kind === 'end' && (ended += 1)));
      const perWrite = 1_000;
      for (let done = 0; done < commands; done += perWrite) {
        const n = Math.min(perWrite, commands - done);
        await session.write(':\r'.repeat(n));
        await until(async () => ended >= done + n, `commands ${done}-${done + n}`, 300_000);
        opts.log(`marks: ${done + n} commands run`);
      }
      // A command takes a line or more (typed-ahead echoes share the scrollback's 10,000 lines): the
      // view keeps about nine of ten; it is ready once its count stops growing.
      let last = -1;
      await until(
        async () => {
          const now = await hook.count(marked);
          const settled = now === last && now >= Math.min(commands, maxViewMarks) * 0.85;
          last = now;
          return settled;
        },
        "the view's marks",
        120_000,
      ).catch(async (error: Error) => {
        throw new Error(`${error.message} (${await hook.count(marked)} of ${commands})`);
      });
      const marks = await hook.count(marked);
      const plain = await open();
      await serve.host.get(plain).session.write(`seq -f 'plain%g' 1 ${commands + 100}\r`);
      await until(async () => (await hook.screen(plain)).includes(`plain${commands + 100}`), 'the plain scrollback', 120_000);
      const frame = Array.from({ length: 100 }, (_, i) => `frame line ${i} ${'x'.repeat(60)}`).join('\r\n') + '\r\n';
      // Only the shown tab draws: each view is timed while it is the one shown, in turns (rounds of
      // a block each), so neither gets the page's warm-up or the other's leftover garbage alone.
      const parses: number[] = [];
      const timeIn = async (id: string, count: number, into: number[], parsesInto: number[] | null): Promise<void> => {
        await page.locator(`[role="tab"][data-terminal-id="${id}"]`).click();
        await sleep(300);
        for (let i = 0; i < 5 + count; i++) {
          const { parse, total } = await hook.time(id, frame);
          if (i < 5) continue;
          into.push(total);
          parsesInto?.push(parse);
        }
      };
      // BENCH_CPU_PROF_DIR: the page's CPU profile of all the frames too (frames.cpuprofile).
      const profDir = process.env.BENCH_CPU_PROF_DIR;
      const cdp = profDir ? await page.context().newCDPSession(page) : null;
      if (cdp) {
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.start');
      }
      const withMarks: number[] = [];
      const without: number[] = [];
      const rounds = 4;
      for (let round = 0; round < rounds; round++) {
        const block = Math.ceil(frames / rounds);
        await timeIn(marked, block, withMarks, parses);
        await timeIn(plain, block, without, null);
      }
      if (cdp && profDir) writeFileSync(join(profDir, 'frames.cpuprofile'), JSON.stringify((await cdp.send('Profiler.stop')).profile));
      const parseMedian = [...parses].sort((a, b) => a - b)[parses.length >> 1]!;
      return [
        {
          row: 'marks.view.frame',
          samples: withMarks,
          baselines: [{ name: 'no marks, full scrollback', samples: without }],
          note: `${marks} marks in the view at the start; of the frame time, parsing takes ${parseMedian.toFixed(1)} ms (median)`,
        },
      ];
    } finally {
      await browser.close();
      await serve.stop();
    }
  },
};
