/**
 * Replay (issue 29): seeking in a one-hour recording with asciinema-player, in Debian's headless
 * Chromium, the player given what the app's replay gives it (src/renderer/src/components/
 * recordings/cast.ts: markers filtered, pauses shortened). The recording is synthesized as the
 * recorder writes one: prompts, typed commands, their output, an agent's commands with an
 * approval and a handoff, a full-screen pager, and three floods of a few MiB; about 13 MiB.
 *
 * Timed: a seek to a late command's marker from the recording's end (the player resets its
 * terminal and replays every event up to the marker: the worst case) until the next frame has
 * drawn, checked by the command line on the player's screen. Baseline: the same seek in a
 * one-minute recording of the same make. A second row times the load (parse and first frame).
 */
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { launchChromium } from '../../tests/e2e/helpers/browser.js';
import { lineHash } from '../../src/main/record/timeline.js';
import { parseCast } from '../../src/renderer/src/components/recordings/cast.js';
import type { Figure } from '../lib/types.js';

export interface SyntheticRecording {
  cast: string;
  timeline: string;
  /** The command lines, in order (person's and agent's). */
  commands: string[];
  seconds: number;
}

/** A deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A recording as Tandem's recorder writes it (asciicast v3 with intervals, `m` markers, `i`
 * input, a hash-chained timeline whose head closes the .cast), `seconds` long.
 */
export function synthesizeRecording(opts: { seconds: number; seed?: number; floods?: number; startWall?: number }): SyntheticRecording {
  const rnd = random(opts.seed ?? 29);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!;
  const wall0 = opts.startWall ?? Date.UTC(2026, 11, 3, 9, 0, 0);
  const cwd = '/home/dev/project';
  const prompt = '\x1b]0;dev@box: ~/project\x07\x1b[01;32mdev@box\x1b[00m:\x1b[01;34m~/project\x1b[00m$ ';
  const lines: string[] = [
    JSON.stringify({
      version: 3,
      term: { cols: 120, rows: 32, type: 'xterm-256color' },
      timestamp: Math.floor(wall0 / 1000),
      title: 'dev: project',
      command: '/bin/bash',
      tags: ['tandem', 'person'],
    }),
  ];
  const timeline: string[] = [];
  let prev: string | null = null;
  let t = 0;
  let last = 0;
  const record = (type: string, fields: Record<string, unknown>): void => {
    const line = JSON.stringify({
      seq: timeline.length + 1,
      type,
      t: Math.round(t * 1e6) / 1e6,
      at: new Date(wall0 + t * 1000).toISOString(),
      ...fields,
      prev,
    });
    timeline.push(line);
    prev = lineHash(line);
  };
  const event = (code: string, data: string): void => {
    lines.push(JSON.stringify([Math.round((t - last) * 1e6) / 1e6, code, data]));
    last = t;
  };
  record('open', { terminal: 'synthetic', title: 'dev: project', origin: 'user', agent: null, shell: '/bin/bash', cwd, sandbox: null });
  event('o', prompt);

  const files = ['src/main.ts', 'src/app.ts', 'src/lib/parse.ts', 'src/lib/format.ts', 'tests/parse.test.ts', 'README.md', 'package.json', 'docs/guide.md'];
  const word = () => pick(['alpha', 'render', 'buffer', 'socket', 'parse', 'queue', 'token', 'layout', 'stream', 'cache', 'frame', 'index']);
  const outputs: Record<string, () => string[]> = {
    ls: () =>
      files.map(
        (f) => `-rw-r--r-- 1 dev dev ${String(Math.floor(rnd() * 90000)).padStart(6)} Dec  3 09:${String(Math.floor(rnd() * 60)).padStart(2, '0')} ${f}`,
      ),
    git: () => [
      'On branch main',
      "Your branch is up to date with 'origin/main'.",
      '',
      'Changes not staged for commit:',
      ...files.slice(0, 3 + Math.floor(rnd() * 4)).map((f) => `\t\x1b[31mmodified:   ${f}\x1b[m`),
      '',
    ],
    diff: () =>
      Array.from({ length: 30 + Math.floor(rnd() * 40) }, (_, i) =>
        i % 7 === 0
          ? `\x1b[36m@@ -${i},7 +${i},8 @@\x1b[m`
          : i % 3 === 0
            ? `\x1b[32m+  const ${word()} = ${word()}(${i});\x1b[m`
            : i % 5 === 0
              ? `\x1b[31m-  let ${word()} = null;\x1b[m`
              : `   return ${word()}.${word()}();`,
      ),
    test: () => [
      ...Array.from(
        { length: 60 + Math.floor(rnd() * 80) },
        (_, i) => ` \x1b[32m✓\x1b[39m tests/${word()}.test.ts \x1b[2m(${1 + (i % 9)} tests)\x1b[22m \x1b[33m${Math.floor(rnd() * 300)}ms\x1b[39m`,
      ),
      '',
      ' \x1b[1mTest Files\x1b[22m  \x1b[1m\x1b[32m42 passed\x1b[39m\x1b[22m',
      '      \x1b[1mTests\x1b[22m  \x1b[1m\x1b[32m318 passed\x1b[39m\x1b[22m',
    ],
    grep: () =>
      Array.from(
        { length: 20 + Math.floor(rnd() * 40) },
        () => `\x1b[35m${pick(files)}\x1b[m:\x1b[32m${Math.floor(rnd() * 400)}\x1b[m:  ${word()}(${word()}, ${word()});`,
      ),
    build: () => Array.from({ length: 15 }, () => `vite v8.3.4 building ${word()}... \x1b[32m✓\x1b[39m ${Math.floor(rnd() * 900)} modules transformed.`),
  };
  const personCommands: [string, keyof typeof outputs, number][] = [
    ['ls -la src', 'ls', 0],
    ['git status', 'git', 0],
    ['git diff src/lib/parse.ts', 'diff', 0],
    ['npm test', 'test', 0],
    ['grep -rn parse src', 'grep', 0],
    ['npm run build', 'build', 0],
    ['git diff', 'diff', 0],
    ['ls missing-dir', 'ls', 2],
  ];
  const commands: string[] = [];
  let typist = '';
  let floodsLeft = opts.floods ?? 3;
  const floodEvery = opts.seconds / ((opts.floods ?? 3) + 1);
  let nextFlood = floodEvery;
  let n = 0;

  const output = (text: string, spread: number): void => {
    // The recorder batches output per 16 ms: a command's lines come in a few events.
    const chunks = Math.max(1, Math.min(12, Math.ceil(text.length / 2048)));
    const size = Math.ceil(text.length / chunks);
    for (let i = 0; i < chunks; i++) {
      t += spread / chunks;
      event('o', text.slice(i * size, (i + 1) * size));
    }
  };
  const run = (line: string, by: string, body: () => void, exitCode: number, allowed: string | null): void => {
    const agent = by !== 'person';
    const who = `input by ${by}`;
    if (who !== typist) {
      typist = who;
      event('m', who);
    }
    if (agent) {
      t += 0.05;
      event('i', `${line}\r`);
      event('o', `${line}\r\n`);
    } else {
      for (const ch of line) {
        t += 0.06 + rnd() * 0.15;
        event('i', ch);
        event('o', ch);
      }
      t += 0.2;
      event('i', '\r');
      event('o', '\r\n');
    }
    const start = t;
    commands.push(line);
    event('m', `command start by ${by}${agent ? `: ${line}` : ''}`);
    body();
    t += 0.01;
    event('m', `command end: exit ${exitCode} · ${cwd}`);
    record('command', {
      by,
      handoff: false,
      command: line,
      allowed,
      start: Math.round(start * 1e6) / 1e6,
      startedAt: new Date(wall0 + start * 1000).toISOString(),
      end: Math.round(t * 1e6) / 1e6,
      endedAt: new Date(wall0 + t * 1000).toISOString(),
      exitCode,
      cwd,
      sandbox: null,
    });
    event('o', prompt);
  };

  while (t < opts.seconds - 30) {
    n += 1;
    if (floodsLeft > 0 && t >= nextFlood) {
      floodsLeft -= 1;
      nextFlood += floodEvery;
      // A flood: a few MiB of log lines in 64 KiB batches, 16 ms apart.
      run(
        `cat logs/build-${n}.log`,
        'person',
        () => {
          const row = (i: number) =>
            `2026-12-03T09:${String(i % 60).padStart(2, '0')}:00.000Z \x1b[2mINFO\x1b[22m worker-${i % 8} ${word()} ${word()} handled request ${i} in ${i % 97} ms\r\n`;
          let batch = '';
          for (let i = 0; i < 40_000; i++) {
            batch += row(i);
            if (batch.length >= 65_536) {
              t += 0.016;
              event('o', batch);
              batch = '';
            }
          }
          if (batch) event('o', batch);
        },
        0,
        null,
      );
    } else if (n % 9 === 0) {
      // An agent's turn: an approval, its command, sometimes a handoff.
      const line = pick(['npm test -- --run parse', 'git diff --stat', 'rm -rf dist && npm run build', 'grep -rn TODO src']);
      t += 1;
      event('m', `approval asked: ${line}`);
      t += 3 + rnd() * 10;
      run(
        line,
        'codex',
        () =>
          output(
            outputs[line.startsWith('npm test') ? 'test' : line.startsWith('grep') ? 'grep' : line.includes('build') ? 'build' : 'git']!().join('\r\n') +
              '\r\n',
            1 + rnd() * 4,
          ),
        0,
        'approval',
      );
      if (n % 27 === 0) {
        t += 2;
        event('m', 'handoff requested to person: please check the failing test');
        t += 5;
        event('m', 'handoff returned by person');
      }
    } else if (n % 23 === 0) {
      // A pager on the alternate screen.
      run(
        'less README.md',
        'person',
        () => {
          t += 0.1;
          event(
            'o',
            '\x1b[?1049h\x1b[H\x1b[2J' + Array.from({ length: 31 }, (_, i) => `Line ${i} of the guide: ${word()} ${word()} ${word()}`).join('\r\n') + '\r\n:',
          );
          for (let page = 0; page < 5; page++) {
            t += 1 + rnd() * 3;
            event('i', ' ');
            event('o', '\x1b[H\x1b[2J' + Array.from({ length: 31 }, (_, i) => `Line ${page * 31 + i} ${word()} ${word()}`).join('\r\n') + '\r\n:');
          }
          t += 1;
          event('i', 'q');
          event('o', '\x1b[?1049l');
        },
        0,
        null,
      );
    } else {
      const [line, kind, exitCode] = pick(personCommands);
      run(
        line,
        'person',
        () =>
          output(
            (exitCode ? `ls: cannot access '${line.split(' ')[1]}': No such file or directory` : outputs[kind]!().join('\r\n')) + '\r\n',
            0.05 + rnd() * (kind === 'test' ? 8 : 0.6),
          ),
        exitCode,
        null,
      );
    }
    // Reading, thinking, typing the next one.
    t += 4 + rnd() * rnd() * 60;
  }
  t = Math.max(t, opts.seconds);
  event('x', '0');
  record('close', { cause: 'exit', exitCode: 0 });
  lines.push(`# timeline-head ${timeline.length} ${prev}`);
  return { cast: `${lines.join('\n')}\n`, timeline: `${timeline.join('\n')}\n`, commands, seconds: t };
}

const size = (bytes: number): string => (bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(0)} KiB`);

interface PageApi {
  load(json: string): Promise<number>;
  seek(marker: number, from: string): Promise<{ ms: number; screen: string; time: number }>;
  dispose(): void;
}

/** A page with the player's own bundle and CSS, and the same options the app's replay passes. */
async function playerPage(page: Page): Promise<void> {
  const require = createRequire(import.meta.url);
  await page.setContent(
    '<!doctype html><html><body style="margin:0;width:1200px;height:760px"><div id="player" style="width:1200px;height:700px"></div></body></html>',
  );
  await page.addStyleTag({ path: require.resolve('asciinema-player/dist/bundle/asciinema-player.css') });
  await page.addScriptTag({ path: require.resolve('asciinema-player/dist/bundle/asciinema-player.min.js') });
  // Plain JS (the bench runs through tsx, whose helpers do not exist in the page).
  await page.addScriptTag({ content: pageScript });
}

const pageScript = `
const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())));
let player = null;
window.bench = {
  async load(json) {
    const data = JSON.parse(json);
    const header = data[0];
    const start = performance.now();
    player = AsciinemaPlayer.create({ data }, document.getElementById('player'), { cols: header.term.cols, rows: header.term.rows, preload: true, fit: 'both', theme: 'asciinema' });
    // Ready when the player knows the duration: the whole recording is parsed.
    while (player.getDuration() === undefined) await new Promise((resolve) => setTimeout(resolve, 1));
    await frame();
    return performance.now() - start;
  },
  async seek(marker, from) {
    await player.seek(from);
    await frame();
    const start = performance.now();
    await player.seek({ marker });
    await frame();
    const ms = performance.now() - start;
    return { ms, screen: player.el.querySelector('.ap-term-text')?.textContent ?? '', time: player.getCurrentTime() };
  },
  dispose() {
    if (player) player.dispose();
    player = null;
    document.getElementById('player').replaceChildren();
  },
};
`;

export const seekFigure: Figure = {
  id: 'seek',
  title: 'Replay: seeking in a one-hour recording (asciinema-player, headless Chromium)',
  rows: [
    {
      name: 'seek.hour.late',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 200 },
      description:
        'seek to a late command (95% in) of a synthesized one-hour recording (~13 MiB, 3 floods) from its end, until the next frame; baseline: the same seek in a one-minute recording',
    },
    {
      name: 'seek.hour.load',
      unit: 'ms',
      target: null,
      description: 'the player loading the one-hour recording (parse, first frame) as the replay gives it; baseline: the one-minute recording',
    },
  ],
  async run(opts) {
    const samples = opts.pick(15, 4);
    const hour = synthesizeRecording({ seconds: 3600 });
    const minute = synthesizeRecording({ seconds: 60, floods: 0, seed: 7 });
    const hourCast = parseCast(hour.cast, hour.timeline);
    const minuteCast = parseCast(minute.cast, minute.timeline);
    const late = (cast: typeof hourCast): number => {
      const commands = cast.entries.map((e, i) => [e, i] as const).filter(([e]) => e.kind === 'command');
      return commands[Math.floor(commands.length * 0.95)]![1];
    };
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await playerPage(page);
      const api = {
        load: (json: string) => page.evaluate((j) => (window as unknown as { bench: PageApi }).bench.load(j), json),
        seek: (marker: number, from: string) =>
          page.evaluate(([m, f]) => (window as unknown as { bench: PageApi }).bench.seek(m as number, f as string), [marker, from] as const),
        dispose: () => page.evaluate(() => (window as unknown as { bench: PageApi }).bench.dispose()),
      };
      const measure = async (cast: typeof hourCast): Promise<{ load: number[]; seek: number[]; note: string }> => {
        const json = JSON.stringify(cast.playerData);
        const marker = late(cast);
        const entry = cast.entries[marker]!;
        const load: number[] = [];
        const seek: number[] = [];
        for (let i = 0; i < Math.max(3, Math.ceil(samples / 3)); i++) {
          await api.dispose();
          load.push(await api.load(json));
        }
        for (let i = 0; i < samples + 1; i++) {
          const result = await api.seek(marker, '100%');
          // The seek landed: the command line is on the screen and the clock is at the marker.
          if (!result.screen.includes(entry.text.slice(0, 20)))
            throw new Error(`after the seek the player's screen lacks "${entry.text}": ${result.screen.slice(-400)}`);
          if (Math.abs(result.time - entry.playT) > 0.01) throw new Error(`after the seek the player is at ${result.time} s, not ${entry.playT} s`);
          if (i > 0) seek.push(result.ms);
        }
        return {
          load,
          seek,
          note: `${size(Buffer.byteLength(json))}, ${cast.entries.length} markers, marker ${marker} at ${entry.playT.toFixed(0)} s of ${cast.playDuration.toFixed(0)} s replayed (${cast.duration.toFixed(0)} s recorded)`,
        };
      };
      const h = await measure(hourCast);
      opts.log(`seek: hour measured (${h.note})`);
      const m = await measure(minuteCast);
      return [
        {
          row: 'seek.hour.late',
          samples: h.seek,
          baselines: [{ name: 'one-minute recording', samples: m.seek }],
          note: `hour: ${h.note}; minute: ${m.note}; the hour's .cast ${size(Buffer.byteLength(hour.cast))}, ${hour.commands.length} commands`,
        },
        { row: 'seek.hour.load', samples: h.load, baselines: [{ name: 'one-minute recording', samples: m.load }] },
      ];
    } finally {
      await browser.close();
    }
  },
};
