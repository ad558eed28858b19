import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Download, Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { synthesizeRecording } from '../../bench/figures/seek';
import { maxExportCastBytes } from '../../src/main/record/store';
import { replayMaxBytes } from '../../src/renderer/src/components/recordings/cast';
import { chromiumAvailable, chromiumRequired, skipReason } from './helpers/browser';
import { openTerminal, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';
import { hostLook, shots } from './helpers/shots';
import { type UiFixture, useUiFixture } from './helpers/ui-fixture';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

const replay = (page: Page): Locator => page.getByTestId('replay');
/** The player's screen, a line per row. */
async function playerText(page: Page): Promise<string> {
  const rows = await page.locator('[data-testid="replay-player"] .ap-term-text .ap-line').allTextContents();
  return rows.map((row) => row.trimEnd()).join('\n');
}

async function openRecordings(page: Page): Promise<void> {
  const toggle = page.getByRole('button', { name: 'Recordings', exact: true });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await page.getByRole('region', { name: 'Recordings' }).waitFor();
}

/** The replay's entry (a button) whose text contains `text`. */
function entry(page: Page, text: string): Locator {
  return page.locator('.entries button[data-entry]', { hasText: text }).first();
}

async function screenshots(fixture: UiFixture, name: string): Promise<void> {
  await shots(fixture.page, `recordings-${name}`, { looks: hostLook(fixture.page, fixture.serve.host.settings) });
}

/**
 * Issue 29, replay and export in the app (Debian's Chromium against an in-process `tandem
 * serve`): the person runs commands, opens Recordings, replays the terminal's recording in
 * asciinema-player, seeks to a command (the player's clock is at its marker and its screen is
 * the terminal at that moment), and exports the .cast and timeline as downloads. A synthesized
 * one-hour recording (12 MiB, past exportRecording's 8 MiB) replays whole through the pages of
 * readRecordingCast.
 */
describe.skipIf(!runUi)('Tandem UI: recordings, replay and export', () => {
  const fixture = useUiFixture({ width: 1280, height: 800 }, async ({ page, serve }) => {
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });

  it('replays a terminal, seeks to a command, and exports its .cast and timeline', async () => {
    const { page } = fixture;
    const id = await openTerminal(page);
    await waitForPrompt(page, id);
    await typeLine(page, 'echo alpha-$((40+2))');
    await waitForScreen(page, id, /^alpha-42$/m);
    await typeLine(page, "printf 'beta-%s\\n' out");
    await waitForScreen(page, id, /^beta-out$/m);
    await typeLine(page, 'ls /no-such-dir-e2e');
    await waitForScreen(page, id, /No such file or directory/);
    await typeLine(page, 'echo gamma-$((3*3))');
    await waitForScreen(page, id, /^gamma-9$/m);
    await waitForPrompt(page, id);
    // bash names a command after its end marker: the timeline's record of the last one waits for its line.
    await expect
      .poll(
        async () =>
          readFileSync(
            join(fixture.serve.host.recordings().dir, (await fixture.serve.host.recordings().list()).find((r) => r.terminalId === id)!.id + '.timeline.jsonl'),
            'utf8',
          ),
        { timeout: 15_000 },
      )
      .toContain('echo gamma-$((3*3))');

    await openRecordings(page);
    const item = page.locator(`.item[data-terminal-id="${id}"]`);
    await expect.poll(() => item.count()).toBe(1);
    await expect.poll(async () => (await item.textContent()) ?? '').toMatch(/live/);
    await item.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => replay(page).getAttribute('data-state'), { timeout: 20_000 }).toBe('ready');
    await expect.poll(() => page.locator('.entries button[data-entry]').count()).toBe(4);
    // The failed command shows its exit code; the commands' lines come from the timeline.
    await expect.poll(async () => (await entry(page, 'ls /no-such-dir-e2e').textContent()) ?? '').toMatch(/exit 2/);
    await expect.poll(async () => (await entry(page, 'echo alpha').textContent()) ?? '').toMatch(/ok/);
    await expect.poll(async () => (await page.locator('.chip.ok').textContent()) ?? '').toMatch(/Timeline intact/);
    await expect(page.locator('[data-notice="live"]').count()).resolves.toBe(1);
    await expect(page.locator('[data-notice="cut"]').count()).resolves.toBe(0);

    // Seek to the last command: the clock is at its marker; the screen has the line typed and the
    // output before it, and not yet its own output.
    const gamma = entry(page, 'echo gamma');
    await gamma.click();
    await expect.poll(async () => (await gamma.getAttribute('aria-current')) ?? '').toBe('true');
    await expect.poll(() => playerText(page)).toMatch(/echo gamma-\$\(\(3\*3\)\)/);
    const atGamma = await playerText(page);
    expect(atGamma).toContain('beta-out');
    expect(atGamma).toContain('No such file or directory');
    expect(atGamma).not.toMatch(/^gamma-9/m);
    const timeAtGamma = Number(await replay(page).getAttribute('data-time'));
    expect(timeAtGamma).toBeGreaterThan(0);
    // Back to the first command: a seek backwards; later output is gone from the screen.
    const alpha = entry(page, 'echo alpha');
    await alpha.click();
    await expect.poll(() => playerText(page)).toMatch(/echo alpha-\$\(\(40\+2\)\)/);
    expect(await playerText(page)).not.toContain('beta-out');
    expect(Number(await replay(page).getAttribute('data-time'))).toBeLessThan(timeAtGamma);
    // Forward again to the command after it (beta): alpha's output is now on the screen.
    await entry(page, 'printf').click();
    await expect.poll(() => playerText(page)).toMatch(/^alpha-42/m);

    await screenshots(fixture, 'replay');

    // Export: two downloads, the .cast (asciicast v3, with the commands) and the timeline.
    const downloads: Download[] = [];
    const collect = (download: Download): void => void downloads.push(download);
    page.on('download', collect);
    await replay(page).getByRole('button', { name: 'Export' }).click();
    await expect.poll(() => downloads.length).toBe(2);
    page.off('download', collect);
    const byName = (suffix: string): Download => downloads.find((d) => d.suggestedFilename().endsWith(suffix))!;
    expect(byName('.cast').suggestedFilename()).toMatch(/^tandem-[a-z0-9-]+-\d{8}T\d{9}Z-[A-Za-z0-9_-]+\.cast$/);
    expect(byName('.timeline.jsonl').suggestedFilename()).toMatch(/\.timeline\.jsonl$/);
    const cast = readFileSync((await byName('.cast').path())!, 'utf8');
    const [headerLine, ...eventLines] = cast.trimEnd().split('\n');
    const header = JSON.parse(headerLine!) as { version: number; term: { cols: number; rows: number } };
    expect(header.version).toBe(3);
    expect(header.term.cols).toBeGreaterThan(0);
    const events = eventLines.filter((line) => line.startsWith('[')).map((line) => JSON.parse(line) as [number, string, string]);
    const output = events
      .filter((e) => e[1] === 'o')
      .map((e) => e[2])
      .join('');
    for (const text of ['alpha-42', 'beta-out', 'gamma-9']) expect(output).toContain(text);
    expect(events.filter((e) => e[1] === 'm' && e[2].startsWith('command start')).length).toBe(4);
    expect(events.some((e) => e[1] === 'm' && e[2].startsWith('command end: exit 2'))).toBe(true);
    const timeline = readFileSync((await byName('.timeline.jsonl').path())!, 'utf8');
    const commands = timeline
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; command?: string })
      .filter((r) => r.type === 'command')
      .map((r) => r.command);
    expect(commands).toEqual(['echo alpha-$((40+2))', "printf 'beta-%s\\n' out", 'ls /no-such-dir-e2e', 'echo gamma-$((3*3))']);

    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('region', { name: 'Recordings' }).count()).toBe(0);
  });

  it('replays a one-hour recording past the 8 MiB export window whole, and seeks to a late command', async () => {
    const { page, serve } = fixture;
    const hour = synthesizeRecording({ seconds: 3600 });
    expect(Buffer.byteLength(hour.cast)).toBeGreaterThan(maxExportCastBytes);
    const dir = serve.host.recordings().dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const id = '20261203T090000000Z-synthetic-hour';
    writeFileSync(join(dir, `${id}.cast`), hour.cast, { mode: 0o600 });
    writeFileSync(join(dir, `${id}.timeline.jsonl`), hour.timeline, { mode: 0o600 });

    await openRecordings(page);
    await page.getByRole('button', { name: 'Refresh the list' }).click();
    const item = page.locator(`.item[data-recording-id="${id}"]`);
    await expect.poll(() => item.count()).toBe(1);
    await expect.poll(async () => (await item.textContent()) ?? '').toMatch(/ended.*MiB/s);
    await item.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => replay(page).getAttribute('data-state'), { timeout: 30_000 }).toBe('ready');
    // Whole: every command is listed, nothing is said to be cut, and the chain holds.
    await expect.poll(() => page.locator('.entries button[data-entry]').count()).toBeGreaterThan(hour.commands.length);
    expect(await page.locator('.entries .entry.command').count()).toBe(hour.commands.length);
    expect(await page.locator('[data-notice]').count()).toBe(0);
    await expect.poll(async () => (await page.locator('.chip.ok').textContent()) ?? '').toMatch(/Timeline intact/);
    const last = page.locator('.entries .entry.command').last();
    await last.scrollIntoViewIfNeeded();
    await last.click();
    await expect.poll(async () => (await last.getAttribute('aria-current')) ?? '').toBe('true');
    await expect.poll(() => playerText(page)).toContain(hour.commands.at(-1)!);
    await screenshots(fixture, 'hour');
  });

  it('says when a recording was cut at its size bound, and offers Replay on a transcript tab', async () => {
    const { page, serve } = fixture;
    const short = synthesizeRecording({ seconds: 120, floods: 0, seed: 3 });
    const lines = short.cast.trimEnd().split('\n');
    // As the recorder writes it when a terminal's .cast reaches its bound: a marker, then only the exit.
    const cut =
      [
        ...lines.slice(0, Math.floor(lines.length / 2)),
        JSON.stringify([0.1, 'm', "recording stopped: the 20 MiB bound of this terminal's recording was reached (the timeline goes on)"]),
        JSON.stringify([5, 'x', '0']),
      ].join('\n') + '\n';
    const dir = serve.host.recordings().dir;
    const id = '20261203T080000000Z-synthetic-cut';
    writeFileSync(join(dir, `${id}.cast`), cut, { mode: 0o600 });
    writeFileSync(join(dir, `${id}.timeline.jsonl`), short.timeline, { mode: 0o600 });
    await openRecordings(page);
    await page.getByRole('button', { name: 'Refresh the list' }).click();
    await page.locator(`.item[data-recording-id="${id}"]`).getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => replay(page).getAttribute('data-state')).toBe('ready');
    await expect.poll(async () => (await page.locator('[data-notice="cut"]').textContent()) ?? '').toMatch(/Truncated: recording stopped: the 20 MiB bound/);
    await screenshots(fixture, 'cut');
    await page.getByRole('button', { name: 'Close Recordings' }).click();

    // A terminal closed as an agent's terminal_close does: its transcript tab's bar replays its recording.
    const id2 = await openTerminal(page);
    await waitForPrompt(page, id2);
    await typeLine(page, 'echo delta-$((2*2))');
    await waitForScreen(page, id2, /^delta-4$/m);
    await waitForPrompt(page, id2);
    await serve.host.close(id2, 'agent', { cause: 'agent' });
    await page.locator('[role="tabpanel"]:visible [data-testid="transcript-bar"]').waitFor({ timeout: 20_000 });
    await page.locator('[role="tabpanel"]:visible').getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => page.locator(`.item.selected[data-terminal-id="${id2}"]`).count()).toBe(1);
    await expect.poll(() => replay(page).getAttribute('data-state')).toBe('ready');
    await expect.poll(async () => (await page.locator('.entries').textContent()) ?? '').toContain('echo delta-$((2*2))');
    expect(await page.locator('.item.selected .badge').textContent()).toBe('ended');
    // Choosing another tab goes back to the terminals.
    const other = page.locator(`[role="tab"][data-terminal-id]:not([data-terminal-id="${id2}"])`).first();
    await other.click();
    await expect.poll(() => page.getByRole('region', { name: 'Recordings' }).count()).toBe(0);
  });

  it('replays the first 64 MiB of a larger recording and says so, while Export saves all of it', async () => {
    const { page, serve } = fixture;
    const big = synthesizeRecording({ seconds: 3600, floods: 18, seed: 11 });
    const bytes = Buffer.byteLength(big.cast);
    expect(bytes).toBeGreaterThan(replayMaxBytes);
    const id = '20261203T070000000Z-synthetic-big';
    const path = join(serve.host.recordings().dir, `${id}.cast`);
    writeFileSync(path, big.cast, { mode: 0o600 });
    writeFileSync(join(serve.host.recordings().dir, `${id}.timeline.jsonl`), big.timeline, { mode: 0o600 });
    await openRecordings(page);
    await page.getByRole('button', { name: 'Refresh the list' }).click();
    const item = page.locator(`.item[data-recording-id="${id}"]`);
    await item.getByRole('button', { name: 'Replay' }).click();
    // 64 MiB through the WebSocket in pages and into the player: a bound for a hang, not a speed target (a loaded 2-core run took over 60 s).
    await expect.poll(() => replay(page).getAttribute('data-state'), { timeout: 180_000 }).toBe('ready');
    await expect
      .poll(async () => (await page.locator('[data-notice="replay-cut"]').textContent()) ?? '')
      .toMatch(/Truncated for replay: the first 6\d\.\d MiB of \d+\.\d MiB are shown/);
    const shown = await page.locator('.entries .entry.command').count();
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThan(big.commands.length);

    // All of it (over 64 MiB) through the WebSocket: a bound for a hang, as above (one core shared with a second suite took over three minutes).
    const download = page.waitForEvent('download', { predicate: (d: Download) => d.suggestedFilename().endsWith('.cast'), timeout: 300_000 });
    await replay(page).getByRole('button', { name: 'Export' }).click();
    const saved = (await (await download).path())!;
    expect(statSync(saved).size).toBe(bytes);
    expect(readFileSync(saved, 'utf8') === big.cast).toBe(true);
  }, 600_000);

  it('says why a recording cannot be replayed: not asciicast v3, or gone since the list was read', async () => {
    const { page, serve } = fixture;
    const dir = serve.host.recordings().dir;
    const junk = '20261203T060000000Z-synthetic-junk';
    writeFileSync(join(dir, `${junk}.cast`), '{"version":2,"width":80,"height":24}\n[0.1,"o","hi"]\n', { mode: 0o600 });
    writeFileSync(join(dir, `${junk}.timeline.jsonl`), '', { mode: 0o600 });
    const gone = '20261203T060001000Z-synthetic-gone';
    writeFileSync(join(dir, `${gone}.cast`), synthesizeRecording({ seconds: 30, floods: 0 }).cast, { mode: 0o600 });
    await openRecordings(page);
    await page.getByRole('button', { name: 'Refresh the list' }).click();
    await page.locator(`.item[data-recording-id="${junk}"]`).getByRole('button', { name: 'Replay' }).click();
    await expect
      .poll(async () => (await replay(page).getByRole('alert').first().textContent()) ?? '')
      .toMatch(/cannot be replayed: The recording is not asciicast v3 \(version 2\)/);

    await expect.poll(() => page.locator(`.item[data-recording-id="${gone}"]`).count()).toBe(1);
    rmSync(join(dir, `${gone}.cast`));
    await page.locator(`.item[data-recording-id="${gone}"]`).getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => replay(page).getAttribute('data-state')).toBe('error');
    await expect.poll(async () => (await replay(page).getByRole('alert').first().textContent()) ?? '').toMatch(/could not be loaded: No recording/);
    await expect(replay(page).getByRole('button', { name: 'Try again' }).count()).resolves.toBe(1);
  });
});
