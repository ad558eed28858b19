import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, screenshotPath, skipReason } from './helpers/browser';
import { openTerminal, screenText, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';
import { hostLook, shots } from './helpers/shots';
import { useUiFixture } from './helpers/ui-fixture';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

async function showTerminal(page: Page, id: string): Promise<void> {
  await page.locator('[data-connection="connected"]').waitFor();
  const tab = page.locator(`[role="tab"][data-terminal-id="${id}"]`);
  if ((await tab.getAttribute('aria-selected')) !== 'true') await tab.click();
}

const numberedLine = /^line\d+$/m;

/**
 * The menu's Clear (issue 28, point 10) against a real `tandem serve` (in process), bash and
 * Chromium: it clears the host's copy, so a reload and a second page show it cleared too, and
 * the shell keeps working.
 */
describe.skipIf(!runUi)('Tandem UI: the menu Clear holds across views and reloads', () => {
  const ui = useUiFixture({ width: 1280, height: 800 }, async ({ serve, page }) => {
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });
  let second: Page | undefined;

  afterAll(async () => {
    await second?.context().close();
  });

  it('clears this page, a second page and a reload, and the shell still works', async () => {
    const { page, serve } = ui;
    const id = await openTerminal(page);
    await waitForPrompt(page, id);
    await typeLine(page, "seq -f 'line%g' 1 3000");
    await waitForScreen(page, id, /^line3000$/m);

    // A second page (another browser tab) watches the same terminal.
    const context = await page
      .context()
      .browser()!
      .newContext({ viewport: { width: 1280, height: 800 } });
    second = await context.newPage();
    await second.goto(testUrl(serve.loginUrl));
    await showTerminal(second, id);
    await waitForScreen(second, id, /^line3000$/m);
    await shots(page, 'menu-clear-before', { looks: hostLook(page, serve.host.settings) });

    const menu = page.getByRole('menu', { name: 'Terminal' });
    await page.locator(`#pane-${id} .xterm`).click({ button: 'right' });
    await menu.getByRole('menuitem', { name: 'Clear' }).click();
    await expect.poll(() => screenText(page, id), { timeout: 15_000 }).not.toMatch(numberedLine);
    await expect.poll(() => screenText(second!, id), { timeout: 15_000 }).not.toMatch(numberedLine);
    // The prompt line stays, at the top.
    expect((await screenText(page, id)).trim()).toMatch(/^\S.*[$#]$/);
    await shots(page, 'menu-clear-after', { looks: hostLook(page, serve.host.settings) });

    // A reload takes the host's snapshot: the numbers stay gone.
    await page.reload();
    await showTerminal(page, id);
    await waitForPrompt(page, id);
    expect(await screenText(page, id)).not.toMatch(numberedLine);

    // The shell still works, for both pages.
    await typeLine(page, 'echo after-$((6*7))');
    await waitForScreen(page, id, /^after-42$/m);
    await waitForScreen(second, id, /^after-42$/m);
    expect(await screenText(second, id)).not.toMatch(numberedLine);

    await hostLook(page, serve.host.settings)('light');
    await shots(page, 'menu-clear-after-reload-light');
    await page.locator(`#pane-${id} .xterm`).click({ button: 'right' });
    await menu.waitFor();
    await page.screenshot({ path: screenshotPath('screenshots/menu-clear-menu-light-1280x800') });
    await page.keyboard.press('Escape');
    serve.host.settings.update({ theme: 'dark' });
  }, 120_000);
});
