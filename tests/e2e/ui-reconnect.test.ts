import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, launchChromium, screenshotPath, skipReason } from './helpers/browser';
import { dropUiConnections, type InProcessServe, startInProcessServe } from './helpers/in-process';
import { activeTerminalId, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

/** The connection drops (the terminals stay on the host): the page says so, reconnects and re-attaches. */
describe.skipIf(!runUi)('Tandem UI: a dropped connection', () => {
  let serve: InProcessServe | undefined;
  let browser: Browser | undefined;
  let page: Page;

  beforeAll(async () => {
    serve = await startInProcessServe();
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1000, height: 640 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (error) => console.error('page error:', error));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
  }, 30_000);

  it('shows reconnecting, then restores the screen and takes input again', async () => {
    await page.goto(testUrl(serve!.loginUrl));
    await page.getByRole('button', { name: /^New terminal \(/ }).click();
    const id = await activeTerminalId(page);
    await waitForPrompt(page, id);
    await typeLine(page, 'echo before-drop');
    await waitForScreen(page, id, /^before-drop$/m);

    // Output produced while the page is away must show up after it re-attaches.
    await serve!.host.get(id).session.write('sleep 0.5; echo while-away\r');
    dropUiConnections(serve!.server);
    await page.locator('[data-connection="reconnecting"]').waitFor();
    await page.screenshot({ path: screenshotPath('ui-reconnecting') });
    await page.locator('[data-connection="connected"]').waitFor();
    await waitForScreen(page, id, /^while-away$/m);

    await typeLine(page, 'echo after-drop');
    await waitForScreen(page, id, /^after-drop$/m);
  }, 60_000);
});
