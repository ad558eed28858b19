import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, screenshotPath, skipReason } from './helpers/browser';
import { openTerminal, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';
import { hostLook, type SetLook, shots } from './helpers/shots';
import { useUiFixture } from './helpers/ui-fixture';
import { defaultSettings } from '../../src/shared/settings';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);
/** A font with ligatures for the ligature test (Debian's fonts-firacode; .ci/run installs it). */
const firaCode = (spawnSync('fc-list', [':family=Fira Code'], { encoding: 'utf8' }).stdout ?? '').trim() !== '';
if (runUi && !firaCode) console.warn('Skipping the ligature test: the Fira Code font is not installed (apt-get install fonts-firacode).');

interface Recorded {
  notes: Array<{ title: string; body: string; tag: string }>;
  permissionAsked: number;
}

/**
 * Stands in for the browser's Notification API: headless Chromium has no notification UI and
 * no permission prompt to click. It records what the page creates and what it asks, and
 * grants permission when asked (as the person would). A fake by necessity, kept this small.
 */
function fakeNotifications(): void {
  const record = { notes: [] as Recorded['notes'], permissionAsked: 0, permission: 'default' as NotificationPermission };
  (window as unknown as { __notifications: typeof record }).__notifications = record;
  class Recording {
    onclick: (() => void) | null = null;
    constructor(title: string, options?: NotificationOptions) {
      record.notes.push({ title, body: options?.body ?? '', tag: options?.tag ?? '' });
    }
    close(): void {}
    static get permission(): NotificationPermission {
      return record.permission;
    }
    static requestPermission(): Promise<NotificationPermission> {
      record.permissionAsked++;
      record.permission = 'granted';
      return Promise.resolve(record.permission);
    }
  }
  (window as unknown as { Notification: unknown }).Notification = Recording;
}

async function recorded(page: Page): Promise<Recorded> {
  return await page.evaluate(() => {
    const { notes, permissionAsked } = (window as unknown as { __notifications: Recorded }).__notifications;
    return { notes: [...notes], permissionAsked };
  });
}

interface Hook {
  option(id: string, name: string): unknown;
  locate(id: string, text: string): { col: number; row: number; cols: number; rows: number } | null;
}

async function option(page: Page, id: string, name: string): Promise<unknown> {
  return await page.evaluate(([terminalId, key]) => (window as unknown as { __tandemTest: Hook }).__tandemTest.option(terminalId!, key!), [id, name]);
}

/** The pixel centre of the cell where `text` starts, found through xterm's buffer and its screen element. */
async function cellPoint(page: Page, id: string, text: string, offset = 0): Promise<{ x: number; y: number }> {
  let place: Awaited<ReturnType<Hook['locate']>> = null;
  await expect
    .poll(async () => {
      place = await page.evaluate(
        ([terminalId, wanted]) => (window as unknown as { __tandemTest: Hook }).__tandemTest.locate(terminalId!, wanted!),
        [id, text],
      );
      return place !== null;
    })
    .toBe(true);
  const box = (await page.locator(`#pane-${id} .xterm-screen`).boundingBox())!;
  const cell = { width: box.width / place!.cols, height: box.height / place!.rows };
  return { x: box.x + (place!.col + offset + 0.5) * cell.width, y: box.y + (place!.row + 0.5) * cell.height };
}

function luminance(rgb: number[]): number {
  const [r, g, b] = rgb.map((value) => {
    const c = value / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function contrast(a: number[], b: number[]): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light! + 0.05) / (dark! + 0.05);
}

function rgbOf(css: string): number[] {
  const match = /rgba?\((\d+), (\d+), (\d+)/.exec(css);
  if (!match) throw new Error(`not an rgb colour: ${css}`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** The screen's pixels over the cells where `text` shows (a PNG; the same pixels give the same bytes). */
async function cellsShot(page: Page, id: string, text: string): Promise<Buffer> {
  const first = await cellPoint(page, id, text, 0);
  const last = await cellPoint(page, id, text, text.length - 1);
  const box = (await page.locator(`#pane-${id} .xterm-screen`).boundingBox())!;
  const place = (await page.evaluate(
    ([terminalId, wanted]) => (window as unknown as { __tandemTest: Hook }).__tandemTest.locate(terminalId!, wanted!),
    [id, text],
  ))!;
  const cell = { width: box.width / place.cols, height: box.height / place.rows };
  return await page.screenshot({
    clip: { x: first.x - cell.width / 2, y: first.y - cell.height / 2, width: last.x - first.x + cell.width, height: cell.height },
  });
}

/**
 * The colour `text` is drawn in, read from the screen's pixels (the WebGL renderer draws on a
 * canvas, the DOM renderer in spans: pixels work for both): of the pixels in its cells, the one
 * farthest from the background, which is the ink itself where a stroke covers a whole pixel.
 */
async function inkOf(page: Page, id: string, text: string, background: number[]): Promise<number[]> {
  const png = await cellsShot(page, id, text);
  const pixels = await page.evaluate(async (base64) => {
    const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const context = canvas.getContext('2d')!;
    context.drawImage(bitmap, 0, 0);
    return Array.from(context.getImageData(0, 0, bitmap.width, bitmap.height).data);
  }, png.toString('base64'));
  let best = background;
  let bestContrast = 1;
  for (let i = 0; i < pixels.length; i += 4) {
    const rgb = [pixels[i]!, pixels[i + 1]!, pixels[i + 2]!];
    const ratio = contrast(rgb, background);
    if (ratio > bestContrast) [best, bestContrast] = [rgb, ratio];
  }
  return best;
}

describe.skipIf(!runUi)('terminal comforts (issue 28): notifications, contrast, links, progress, OSC 52, images', () => {
  const ui = useUiFixture({ width: 1280, height: 800 }, async ({ serve, page }) => {
    await page.addInitScript(fakeNotifications);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: serve.origin });
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });
  let first = '';
  let project = '';
  /** Dark or light through the host's settings, as the Settings dialog does. */
  const look: SetLook = (which) => hostLook(ui.page, ui.serve.host.settings)(which);

  beforeAll(async () => {
    first = await openTerminal(ui.page);
    await waitForPrompt(ui.page, first);
    project = ui.serve.project;
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'src', 'cli.ts'), 'export {};\n'.repeat(20));
  });

  it('settings turn notifications on in this browser; a pairing request notifies and counts in the title', async () => {
    expect((await recorded(ui.page)).permissionAsked).toBe(0);
    await ui.page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = ui.page.getByRole('dialog', { name: 'Settings' });
    await dialog.getByRole('button', { name: 'Allow notifications in this browser' }).click();
    await dialog.getByText('Notifications are allowed in this browser.').waitFor();
    expect((await recorded(ui.page)).permissionAsked).toBe(1);
    await shots(ui.page, 'issue28-settings-notifications', { looks: look });
    await ui.page.keyboard.press('Escape');

    const requestId = ui.serve.agents.pairing.request({ name: 'gemini', pid: 4242, exe: '/usr/bin/gemini', cwd: '/tmp/project' });
    await expect.poll(async () => (await recorded(ui.page)).notes.map((note) => note.title)).toContain('gemini asks to pair with Tandem');
    expect((await recorded(ui.page)).notes.find((note) => note.title === 'gemini asks to pair with Tandem')).toMatchObject({
      body: '/usr/bin/gemini (pid 4242)\nin /tmp/project',
    });
    await expect.poll(() => ui.page.title()).toBe('(1) Tandem');
    ui.serve.agents.answerPairing({ requestId, decision: 'deny' });
    await expect.poll(() => ui.page.title()).toBe('Tandem');
  });

  it('a long command that fails in a background tab notifies with the command and its exit code', async () => {
    // Its own terminal, closed after, so the trap below stays there and a failure leaves the page on the first tab.
    const long = await openTerminal(ui.page);
    try {
      await waitForPrompt(ui.page, long);
      // bash names a command after its end marker (the history line comes from a fork in
      // tandem.bash): on a loaded machine the roster carried the end (exit 3, no command) first,
      // and the notification went out as "The command failed". The trap makes that fork slow,
      // so the line comes after the end every time.
      await typeLine(ui.page, 'set -T; trap \'[[ $BASH_COMMAND == *"builtin history 1" ]] && sleep 0.5\' DEBUG');
      await waitForScreen(ui.page, long, /DEBUG\n[^\n]*[$#] ?$/m);
      // 12 s, not just over the 10 s threshold: the page times the run from the roster it receives.
      await typeLine(ui.page, 'sleep 12; (exit 3)');
      await waitForScreen(ui.page, long, /sleep 12; \(exit 3\)/);
      await ui.page.locator(`.tab[data-tab-id="${first}"] [role="tab"]`).click();
      await expect.poll(() => ui.page.locator('[role="tab"][aria-selected="true"]').getAttribute('data-terminal-id')).toBe(first);
      expect(['running', 'waiting_input'], 'the command still runs once its tab is in the background').toContain(ui.serve.host.get(long).view().status);
      await expect
        .poll(async () => (await recorded(ui.page)).notes.filter((note) => note.tag === `finished:${long}`).map((note) => note.title), { timeout: 30_000 })
        .toEqual(['✗ sleep 12; (exit 3) failed (exit 3)']);
      const note = (await recorded(ui.page)).notes.find((entry) => entry.tag === `finished:${long}`)!;
      const seconds = Number(/^in .+, after (\d+) s$/.exec(note.body)?.[1]);
      expect(seconds, note.body).toBeGreaterThanOrEqual(10);
    } finally {
      await ui.page.locator(`.tab[data-tab-id="${first}"] [role="tab"]`).click();
      await ui.serve.host.close(long);
    }
  });

  it('the light theme draws white text at 4.5:1 or more (minimumContrastRatio)', async () => {
    ui.serve.host.settings.update({ theme: 'light' });
    expect(await option(ui.page, first, 'minimumContrastRatio')).toBe(4.5);
    await typeLine(ui.page, "clear; printf '\\033[37mWHITE-TEXT\\033[0m \\033[97mBRIGHT-TEXT\\033[0m\\n'");
    await waitForScreen(ui.page, first, /^WHITE-TEXT BRIGHT-TEXT$/m);
    const pane = ui.page.locator(`#pane-${first}`);
    const background = rgbOf(await pane.locator('.xterm-scrollable-element').evaluate((element) => getComputedStyle(element).backgroundColor));
    expect(luminance(background)).toBeGreaterThan(0.8);
    for (const text of ['WHITE-TEXT', 'BRIGHT-TEXT'])
      expect(contrast(await inkOf(ui.page, first, text, background), background), text).toBeGreaterThanOrEqual(4.5);
    await shots(ui.page, 'issue28-contrast-light');
    ui.serve.host.settings.update({ theme: 'dark' });
    await typeLine(ui.page, "clear; printf '\\033[30mBLACK-TEXT\\033[0m\\n'");
    await waitForScreen(ui.page, first, /^BLACK-TEXT$/m);
    await expect
      .poll(async () => luminance(rgbOf(await pane.locator('.xterm-scrollable-element').evaluate((element) => getComputedStyle(element).backgroundColor))))
      .toBeLessThan(0.1);
    const dark = rgbOf(await pane.locator('.xterm-scrollable-element').evaluate((element) => getComputedStyle(element).backgroundColor));
    expect(contrast(await inkOf(ui.page, first, 'BLACK-TEXT', dark), dark)).toBeGreaterThanOrEqual(4.5);
    await shots(ui.page, 'issue28-contrast-dark');
  });

  it('a printed path is a link: the hover says Ctrl+click, and Ctrl+click runs the editor of the settings with the path and line', async () => {
    const argvFile = join(project, '..', 'editor-argv.txt');
    const editor = join(project, '..', 'editor.sh');
    writeFileSync(editor, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > '${argvFile}'\n`);
    chmodSync(editor, 0o755);
    ui.serve.host.settings.update({ editorCommand: `${editor} --goto {path}:{line}:{column}` });
    await typeLine(ui.page, `cd ${project} && clear && printf 'error at src/cli.ts:12:3 and see https://example.com/docs\\n'`);
    await waitForScreen(ui.page, first, /^error at src\/cli\.ts:12:3 and see/m);
    // The host learns the new cwd at the prompt.
    await expect.poll(() => ui.serve.host.get(first).view().cwd).toBe(project);
    const at = await cellPoint(ui.page, first, 'src/cli.ts', 2);
    await ui.page.mouse.move(at.x, at.y);
    const hint = ui.page.locator('.link-hint');
    await expect.poll(async () => (await hint.isVisible()) && (await hint.textContent())).toBe('Ctrl+click to open in your editor');
    // A plain click opens nothing.
    await ui.page.mouse.click(at.x, at.y);
    await ui.page.waitForTimeout(500);
    expect(existsSync(argvFile)).toBe(false);
    await ui.page.keyboard.down('Control');
    await ui.page.mouse.click(at.x, at.y);
    await ui.page.keyboard.up('Control');
    await expect
      .poll(() => existsSync(argvFile) && readFileSync(argvFile, 'utf8'), { timeout: 10_000 })
      .toBe(`--goto\n${join(project, 'src', 'cli.ts')}:12:3\n`);
    const url = await cellPoint(ui.page, first, 'https://example.com', 4);
    await ui.page.mouse.move(at.x, at.y + 40);
    await ui.page.mouse.move(url.x, url.y);
    await expect.poll(async () => (await hint.isVisible()) && (await hint.textContent())).toBe('Ctrl+click to open the link');
    for (const which of ['dark', 'light'] as const) {
      await look(which);
      await ui.page.screenshot({ path: screenshotPath(`screenshots/issue28-link-hint-${which}-1280x800`) });
    }
    await look('dark');
    rmSync(argvFile, { force: true });
  });

  it("a program's hyperlink (OSC 8) opens only with Ctrl+click, only for web links, and its hint names the real target", async () => {
    // Recorded, not followed: a plain click once went to xterm.js's own handler (a confirm, then the page).
    await ui.page.evaluate(() => {
      const w = window as unknown as { __opened: string[]; __confirms: string[] };
      w.__opened = [];
      w.__confirms = [];
      window.open = (url?: string | URL) => (w.__opened.push(String(url)), null);
      window.confirm = (text?: string) => (w.__confirms.push(String(text)), true);
    });
    const seen = () =>
      ui.page.evaluate(() => {
        const w = window as unknown as { __opened: string[]; __confirms: string[] };
        return { opened: w.__opened, confirms: w.__confirms };
      });
    await typeLine(
      ui.page,
      "clear; printf '\\033]8;;https://evil.example/steal\\033\\\\Read the docs\\033]8;;\\033\\\\ and \\033]8;;file:///etc/passwd\\033\\\\a local file\\033]8;;\\033\\\\\\n'",
    );
    await waitForScreen(ui.page, first, /^Read the docs and a local file$/m);
    const docs = await cellPoint(ui.page, first, 'Read the docs', 2);
    const hint = ui.page.locator('.link-hint');
    await ui.page.mouse.move(docs.x, docs.y);
    await expect.poll(async () => (await hint.isVisible()) && (await hint.textContent())).toBe('Ctrl+click to open https://evil.example/steal');
    await ui.page.screenshot({ path: screenshotPath('screenshots/osc8-link-hint-1280x800') });
    await ui.page.mouse.click(docs.x, docs.y);
    await ui.page.waitForTimeout(300);
    expect(await seen()).toEqual({ opened: [], confirms: [] });
    await ui.page.keyboard.down('Control');
    await ui.page.mouse.click(docs.x, docs.y);
    await ui.page.keyboard.up('Control');
    await expect.poll(async () => (await seen()).opened).toEqual(['https://evil.example/steal']);
    const file = await cellPoint(ui.page, first, 'a local file', 2);
    await ui.page.mouse.move(file.x, file.y);
    await expect.poll(async () => (await hint.isVisible()) && (await hint.textContent())).toBe('Not a web link, not opened: file:///etc/passwd');
    await ui.page.keyboard.down('Control');
    await ui.page.mouse.click(file.x, file.y);
    await ui.page.keyboard.up('Control');
    await ui.page.waitForTimeout(300);
    expect(await seen()).toEqual({ opened: ['https://evil.example/steal'], confirms: [] });
  });

  it('a path that is not a file shows why on the view, and runs nothing', async () => {
    const argvFile = join(project, '..', 'editor-argv.txt');
    await typeLine(ui.page, "clear && printf 'see src/missing.ts:4\\n'");
    await waitForScreen(ui.page, first, /^see src\/missing\.ts:4$/m);
    const at = await cellPoint(ui.page, first, 'src/missing.ts', 2);
    await ui.page.keyboard.down('Control');
    await ui.page.mouse.click(at.x, at.y);
    await ui.page.keyboard.up('Control');
    await ui.page
      .locator(`#pane-${first}`)
      .getByText(/missing\.ts does not exist/)
      .waitFor();
    expect(existsSync(argvFile)).toBe(false);
    await ui.page.locator(`#pane-${first}`).getByRole('button', { name: 'Dismiss' }).click();
  });

  it('OSC 9;4 shows progress on the tab, and clears it', async () => {
    const bar = ui.page.locator(`.tab[data-tab-id="${first}"] [role="progressbar"]`);
    await typeLine(ui.page, "clear; printf '\\033]9;4;1;42\\007'");
    await expect.poll(() => bar.getAttribute('aria-valuenow')).toBe('42');
    await shots(ui.page, 'issue28-tab-progress', { looks: look });
    await typeLine(ui.page, "printf '\\033]9;4;2;60\\007'");
    await expect.poll(() => bar.getAttribute('aria-valuetext')).toBe('Failed at 60%');
    await typeLine(ui.page, "printf '\\033]9;4;0;0\\007'");
    await bar.waitFor({ state: 'detached' });
  });

  it('OSC 52 sets the clipboard only with the setting on, and a query is never answered', async () => {
    const clipboard = (): Promise<string> => ui.page.evaluate(() => navigator.clipboard.readText());
    await ui.page.evaluate(() => navigator.clipboard.writeText('before'));
    const b64 = (text: string): string => Buffer.from(text).toString('base64');
    await typeLine(ui.page, `clear; printf '\\033]52;c;${b64('while-off')}\\007'; echo sent-off`);
    await waitForScreen(ui.page, first, /^sent-off$/m);
    await ui.page.waitForTimeout(300);
    expect(await clipboard()).toBe('before');
    await ui.page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = ui.page.getByRole('dialog', { name: 'Settings' });
    await dialog.getByRole('checkbox', { name: /Programs may set the clipboard/ }).check();
    await expect.poll(() => ui.serve.host.settings.get().osc52Clipboard).toBe(true);
    await ui.page.keyboard.press('Escape');
    await typeLine(ui.page, `clear; printf '\\033]52;c;${b64('from-osc52 ✓')}\\007'; echo sent-on`);
    await waitForScreen(ui.page, first, /^sent-on$/m);
    await expect.poll(clipboard).toBe('from-osc52 ✓');
    // A program asking for the clipboard gets no answer: nothing arrives on its input.
    await typeLine(ui.page, 'stty -echo; printf \'\\033]52;c;?\\007\'; IFS= read -rs -t 2 r; stty echo; echo "got=[$r]"');
    await waitForScreen(ui.page, first, /^got=\[\]$/m);
    ui.serve.host.settings.update({ osc52Clipboard: false });
  });

  it('inline images (sixel) draw only with the setting on', async () => {
    const pane = ui.page.locator(`#pane-${first}`);
    const sixel = "printf '\\033Pq#0;2;100;0;0#0!40~-#0!40~-#0!40~\\033\\\\'; echo; echo sixel-done";
    await typeLine(ui.page, `clear; ${sixel}`);
    await waitForScreen(ui.page, first, /^sixel-done$/m);
    expect(await pane.locator('canvas.xterm-image-layer').count()).toBe(0);
    ui.serve.host.settings.update({ inlineImages: true });
    // The setting reaches the page, then the image add-on compiles its decoder; a sixel before
    // that is dropped unseen. So the image is printed again until a layer shows it.
    const layer = pane.locator('canvas.xterm-image-layer');
    await expect
      .poll(
        async () => {
          await typeLine(ui.page, `clear; ${sixel}`);
          await waitForScreen(ui.page, first, /^sixel-done$/m);
          return layer.count();
        },
        { interval: 500 },
      )
      .toBeGreaterThan(0);
    // Red pixels where the image was drawn.
    await expect
      .poll(() =>
        layer.evaluate((canvas: HTMLCanvasElement) => {
          const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
          for (let i = 0; i < data.length; i += 4) if (data[i]! > 200 && data[i + 1]! < 50 && data[i + 3]! > 200) return true;
          return false;
        }),
      )
      .toBe(true);
    await shots(ui.page, 'issue28-sixel', { looks: look });
    ui.serve.host.settings.update({ inlineImages: false });
  });

  it.skipIf(!firaCode)('ligatures: with the setting on, Fira Code draws => != -> as its ligatures; text without them is unchanged', async () => {
    ui.serve.host.settings.update({ fontLigatures: false });
    // The font family as a person sets it: typed into Settings' field.
    const settingsDialog = ui.page.getByRole('dialog', { name: 'Settings' });
    await ui.page.getByRole('button', { name: 'Settings' }).click();
    await settingsDialog.getByLabel('Font family').fill("'Fira Code', monospace");
    await settingsDialog.getByLabel('Font family').press('Tab');
    await expect.poll(() => option(ui.page, first, 'fontFamily')).toBe("'Fira Code', monospace");
    expect(ui.serve.host.settings.get().fontFamily).toBe("'Fira Code', monospace");
    await ui.page.keyboard.press('Escape');
    await settingsDialog.waitFor({ state: 'detached' });
    await expect.poll(() => ui.page.evaluate(() => document.fonts.check('14px "Fira Code"'))).toBe(true);
    await typeLine(ui.page, "clear; printf 'LIG a => b != c -> d\\nPLAIN abc xyz 123\\n'");
    await waitForScreen(ui.page, first, /^PLAIN abc xyz 123$/m);
    const ligatures = 'a => b != c -> d';
    const plain = 'abc xyz 123';
    // Drawn once the font is loaded and measured: the same pixels twice in a row.
    let before = await cellsShot(ui.page, first, ligatures);
    await expect
      .poll(async () => {
        const now = await cellsShot(ui.page, first, ligatures);
        const same = now.equals(before);
        before = now;
        return same;
      })
      .toBe(true);
    const plainBefore = await cellsShot(ui.page, first, plain);
    await shots(ui.page, 'issue28-ligatures-off', { looks: look });

    await ui.page.getByRole('button', { name: 'Settings' }).click();
    await settingsDialog.getByRole('checkbox', { name: /^Ligatures/ }).check();
    await ui.page.keyboard.press('Escape');
    await settingsDialog.waitFor({ state: 'detached' });
    expect(ui.serve.host.settings.get().fontLigatures).toBe(true);
    await expect.poll(async () => (await cellsShot(ui.page, first, ligatures)).equals(before), { timeout: 10_000 }).toBe(false);
    expect((await cellsShot(ui.page, first, plain)).equals(plainBefore)).toBe(true);
    await shots(ui.page, 'issue28-ligatures-on', { looks: look });

    ui.serve.host.settings.update({ fontLigatures: false });
    await expect.poll(async () => (await cellsShot(ui.page, first, ligatures)).equals(before), { timeout: 10_000 }).toBe(true);
    ui.serve.host.settings.update({ fontFamily: defaultSettings.fontFamily });
  });
});
