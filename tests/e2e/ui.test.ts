import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, launchChromium, screenshotPath, skipReason } from './helpers/browser';
import { activeTerminalId, screenText, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { startServe, type TandemServe, testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

/** The UI served by the real `tandem serve`, in Debian's Chromium. */
describe.skipIf(!runUi)('Tandem UI in a browser', () => {
  let serve: TandemServe | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  let firstId = '';

  beforeAll(async () => {
    serve = await startServe();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1180, height: 720 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (error) => console.error('page error:', error));
  });

  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
  });

  it('logs in from the printed link, drops the token from the address bar and shows the first-run panel', async () => {
    await page.goto(testUrl(serve!.loginUrl));
    await page.getByRole('heading', { name: 'No terminals open' }).waitFor();
    expect(page.url()).not.toContain('login=');
    expect(new URL(page.url()).hash).toBe('');
    await page.locator('[data-connection="connected"]').waitFor();
    await page.screenshot({ path: screenshotPath('ui-empty') });
  });

  it('opens a terminal and shows what the shell prints', async () => {
    await page.getByRole('button', { name: /^New terminal \(/ }).click();
    firstId = await activeTerminalId(page);
    await waitForPrompt(page, firstId);
    await typeLine(page, 'echo hello-ui');
    await waitForScreen(page, firstId, /^hello-ui$/m);
  });

  it('restores the tab and its screen after a reload', async () => {
    await page.reload();
    await page.locator(`[role="tab"][data-terminal-id="${firstId}"]`).waitFor();
    expect(await activeTerminalId(page)).toBe(firstId);
    await waitForScreen(page, firstId, /^hello-ui$/m);
    // And it still takes input.
    await typeLine(page, 'echo after-reload');
    await waitForScreen(page, firstId, /^after-reload$/m);
  });

  it('answers a cursor-position request exactly once (the host answers, the browser stays silent)', async () => {
    // A second reply would still be waiting for the second read.
    await typeLine(page, `printf '\\033[6n'; read -rsd R x; read -rsd R -t 1 y; echo "reply=\${x#*[} extra=\${#y}"`);
    const text = await waitForScreen(page, firstId, /^reply=\S* extra=\d+$/m);
    expect(text).toMatch(/^reply=\d+;\d+ extra=0$/m);
    await typeLine(page, 'echo after-cpr');
    await waitForScreen(page, firstId, /^after-cpr$/m);
    expect(await screenText(page, firstId)).not.toMatch(/\d+;\d+R/);
  });

  it('shows two tabs, one of them running a command', async () => {
    await page.getByRole('button', { name: 'New terminal', exact: true }).click();
    await page.locator(`[role="tab"][aria-selected="true"]:not([data-terminal-id="${firstId}"])`).waitFor();
    const secondId = await activeTerminalId(page);
    await waitForPrompt(page, secondId);
    await typeLine(page, 'for i in $(seq 1 40); do echo "build step $i/40"; sleep 0.25; done');
    await waitForScreen(page, secondId, /build step 3\/40/);
    await page.locator(`[role="tab"][data-terminal-id="${secondId}"] [title="Running"]`).waitFor();
    expect(await page.getByRole('tab').count()).toBe(2);
    await page.screenshot({ path: screenshotPath('ui-two-tabs') });
  });

  it('switches tabs with Ctrl+PageUp/PageDown and finds text with Ctrl+Shift+F', async () => {
    const secondId = await activeTerminalId(page);
    await page.keyboard.press('Control+PageUp');
    expect(await activeTerminalId(page)).toBe(firstId);
    await page.keyboard.press('Control+Shift+F');
    const find = page.getByRole('textbox', { name: 'Find in terminal' });
    await find.fill('hello-ui');
    await page.getByText(/^\d+ of \d+$/).waitFor();
    await find.press('Escape');
    await find.waitFor({ state: 'detached' });
    await page.keyboard.press('Control+PageDown');
    expect(await activeTerminalId(page)).toBe(secondId);
  });

  it('gives the shell the size of the view', async () => {
    await page.setViewportSize({ width: 900, height: 560 });
    const size = page.locator('footer [title="Columns × rows"]');
    await expect.poll(() => size.textContent(), { timeout: 10_000 }).not.toBe('143×34');
    // Settled: the same size twice, 300 ms apart (the page resizes after a debounce).
    let settled: string | null = null;
    await expect
      .poll(async () => {
        const before = settled;
        await page.waitForTimeout(300);
        settled = await size.textContent();
        return settled === before;
      })
      .toBe(true);
    const [cols, rows] = settled!.split('×');
    const id = await activeTerminalId(page);
    await waitForScreen(page, id, /[$#] ?$/m, 20_000);
    await typeLine(page, 'stty size');
    await waitForScreen(page, id, new RegExp(`^${rows} ${cols}$`, 'm'));
  });

  it('renames a tab by double-click and closes it with Ctrl+Shift+W', async () => {
    const id = await activeTerminalId(page);
    const tab = page.locator(`[role="tab"][data-terminal-id="${id}"]`);
    await tab.dblclick();
    const name = page.getByRole('textbox', { name: 'Terminal name' });
    await name.fill('builds');
    await name.press('Enter');
    await expect.poll(() => tab.textContent()).toContain('builds');
    await page.locator('[role="tabpanel"]:visible .xterm').click();
    await page.keyboard.press('Control+Shift+W');
    await tab.waitFor({ state: 'detached' });
    expect(await activeTerminalId(page)).toBe(firstId);
  });

  it('opens a terminal with Ctrl+Shift+T', async () => {
    await page.keyboard.press('Control+Shift+T');
    await page.locator(`[role="tab"][aria-selected="true"]:not([data-terminal-id="${firstId}"])`).waitFor();
    const id = await activeTerminalId(page);
    await waitForPrompt(page, id);
    // The new terminal has the keyboard focus.
    await page.keyboard.type('echo focused-new-tab');
    await page.keyboard.press('Enter');
    await waitForScreen(page, id, /^focused-new-tab$/m);
    expect(await page.getByRole('tab').count()).toBe(2);
  });

  it('keeps up with a flood of output, acknowledging what it applied', async () => {
    const id = await activeTerminalId(page);
    await typeLine(page, 'seq 1 100000; echo flood-done');
    const text = await waitForScreen(page, id, /^flood-done$/m, 45_000);
    expect(text).toMatch(/^100000$/m);
    await typeLine(page, 'echo after-flood');
    await waitForScreen(page, id, /^after-flood$/m);
  });
});
