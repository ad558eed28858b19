import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, launchChromium, skipReason } from './helpers/browser';
import { type InProcessServe, startInProcessServe } from './helpers/in-process';
import { activeTerminalId, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

/**
 * Every request a program can send that xterm.js would answer: DA1, DA2, DA3, DSR status, CPR,
 * DECXCPR, DECRQM (ANSI and DEC), XTVERSION, window reports, OSC 10/11/12 colour queries and
 * DECRQSS. The program collects whatever comes back within a second and prints how many escape
 * sequences arrived.
 */
const probe = [
  `printf '\\033[c\\033[>c\\033[=c\\033[5n\\033[6n\\033[?6n\\033[4$p\\033[?25$p\\033[>q\\033[14t\\033[18t\\033]10;?\\007\\033]11;?\\007\\033]12;?\\007\\033P$qm\\033\\\\'`,
  `read -rs -t 1 -d '' x`,
  `r=\${x//[^$'\\e']/}`,
  `echo "replies=\${#r}"`,
].join('; ');
const repliesLine = /^replies=(\d+)$/m;

/** The browser's xterm.js must add nothing to what the host's emulator answers. */
describe.skipIf(!runUi)('Tandem UI: terminal protocol requests', () => {
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

  it('gets as many replies with the page attached as the host alone gives', async () => {
    // Without any view: only the host can answer.
    const alone = await serve!.host.create({ title: 'no view' });
    await serve!.host.get(alone.id).session.write(`${probe}\r`);

    await page.goto(testUrl(serve!.loginUrl));
    await page.locator(`[role="tab"][data-terminal-id="${alone.id}"]`).waitFor();
    const hostOnly = Number(repliesLine.exec(await waitForScreen(page, alone.id, repliesLine))![1]);
    expect(hostOnly).toBeGreaterThan(0);

    // With the page attached and in front, the person runs the same probe.
    await page.getByRole('button', { name: 'New terminal', exact: true }).click();
    await page.locator(`[role="tab"][aria-selected="true"]:not([data-terminal-id="${alone.id}"])`).waitFor();
    const viewed = await activeTerminalId(page);
    await waitForPrompt(page, viewed);
    await typeLine(page, probe);
    const withPage = Number(repliesLine.exec(await waitForScreen(page, viewed, repliesLine))![1]);
    expect(withPage).toBe(hostOnly);
  }, 60_000);
});
