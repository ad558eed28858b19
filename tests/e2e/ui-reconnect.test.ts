import { describe, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, screenshotPath, skipReason } from './helpers/browser';
import { dropUiConnections } from './helpers/in-process';
import { useUiFixture } from './helpers/ui-fixture';
import { activeTerminalId, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

/** The connection drops (the terminals stay on the host): the page says so, reconnects and re-attaches. */
describe.skipIf(!runUi)('Tandem UI: a dropped connection', () => {
  const ui = useUiFixture({ width: 1000, height: 640 });

  it('shows reconnecting, then restores the screen and takes input again', async () => {
    await ui.page.goto(testUrl(ui.serve.loginUrl));
    await ui.page.getByRole('button', { name: /^New terminal \(/ }).click();
    const id = await activeTerminalId(ui.page);
    await waitForPrompt(ui.page, id);
    await typeLine(ui.page, 'echo before-drop');
    await waitForScreen(ui.page, id, /^before-drop$/m);

    // Output produced while the page is away must show up after it re-attaches.
    await ui.serve.host.get(id).session.write('sleep 0.5; echo while-away\r');
    dropUiConnections(ui.serve.server);
    await ui.page.locator('[data-connection="reconnecting"]').waitFor();
    await ui.page.screenshot({ path: screenshotPath('ui-reconnecting') });
    await ui.page.locator('[data-connection="connected"]').waitFor();
    await waitForScreen(ui.page, id, /^while-away$/m);

    await typeLine(ui.page, 'echo after-drop');
    await waitForScreen(ui.page, id, /^after-drop$/m);
  }, 60_000);
});
