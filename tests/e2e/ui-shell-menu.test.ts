import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { which } from '../../src/main/shells/resolve';
import { fakeShell, type FakeShell } from '../support/fake-shells';
import { chromiumAvailable, chromiumRequired, launchChromium, resultsDir, skipReason } from './helpers/browser';
import { activeTerminalId, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { startServe, type TandemServe, testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);
const realBash = which('bash');

/**
 * Several bash binaries in the new-terminal menu (issue 26), in the real `tandem serve`: two
 * scripts named bash in folders given by TANDEM_SHELL_SEARCH_DIRS (as Homebrew's and MacPorts'
 * are on a Mac) print a newer and an older version than this machine's and exec its bash with
 * TANDEM_FAKE_SHELL set, so the terminal says which binary it started.
 */
describe.skipIf(!runUi || !realBash)('the new-terminal menu with several bash binaries', () => {
  let serve: TandemServe | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let root = '';
  let newer: FakeShell;
  let older: FakeShell;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'tandem-e2e-shells-'));
    newer = fakeShell(root, 'newer/bin/bash', 'newer-5.3', 'GNU bash, version 5.3.0(1)-release (x86_64-pc-linux-gnu)', join(root, 'runs'), {
      execs: realBash!,
    });
    older = fakeShell(root, 'older/bin/bash', 'older-3.2', 'GNU bash, version 3.2.57(1)-release (arm64-apple-darwin23)', join(root, 'runs'), {
      execs: realBash!,
    });
    serve = await startServe({ TANDEM_SHELL_SEARCH_DIRS: [join(root, 'newer/bin'), join(root, 'older/bin')].join(':'), TANDEM_BASH_INTEGRATION: undefined });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1180, height: 720 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (error) => console.error('page error:', error));
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  async function openMenu() {
    await page.getByRole('button', { name: 'Choose a shell' }).click();
    const menu = page.getByRole('menu', { name: 'New terminal with shell' });
    await menu.waitFor();
    return menu;
  }

  it('lists each bash with a label that says which is which, the default (SHELL=/bin/bash) first', async () => {
    const menu = await openMenu();
    const items = await menu
      .getByRole('menuitem')
      .evaluateAll((buttons) => buttons.map((button) => ({ name: button.querySelector('.name')?.textContent, path: button.getAttribute('title') })));
    const bashes = items.filter((item) => item.name?.startsWith('bash'));
    expect(bashes).toEqual([
      { name: expect.stringMatching(/^bash \d+\.\d+ \(system\)$/), path: '/bin/bash' },
      { name: 'bash 5.3', path: newer.path },
      { name: 'bash 3.2 (limited)', path: older.path },
    ]);
    await page.screenshot({ path: join(resultsDir, 'screenshots', 'new-terminal-menu-bash-labels.png') });
    await page.keyboard.press('Escape');
    // The versions were read by the host (once each, barring a listing that beat its background
    // read): a reload asks for the shells again and the menu opens again, and nothing runs.
    const runs = [newer.runs(), older.runs()];
    expect(runs.every((count) => count >= 1)).toBe(true);
    await page.reload();
    await page.locator('[data-connection="connected"]').waitFor();
    await openMenu();
    await page.keyboard.press('Escape');
    expect([newer.runs(), older.runs()]).toEqual(runs);
  });

  for (const [kind, label] of [
    ['newer', /^bash 5\.3\b/],
    ['older', /^bash 3\.2 .*limited/],
  ] as const) {
    it(`opening the ${kind} one's entry runs that binary`, async () => {
      const tabs = page.locator('[role="tab"][data-terminal-id]');
      const before = new Set(await tabs.evaluateAll((all) => all.map((tab) => tab.getAttribute('data-terminal-id'))));
      const menu = await openMenu();
      await menu.getByRole('menuitem', { name: label }).click();
      await expect.poll(async () => !before.has(await activeTerminalId(page))).toBe(true);
      const id = await activeTerminalId(page);
      await waitForPrompt(page, id);
      await typeLine(page, 'echo "shell=$TANDEM_FAKE_SHELL"');
      await waitForScreen(page, id, new RegExp(`^shell=${(kind === 'newer' ? newer : older).id}$`, 'm'));
    });
  }
});
