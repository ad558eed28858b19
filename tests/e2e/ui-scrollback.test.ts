import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, skipReason } from './helpers/browser';
import { useUiFixture } from './helpers/ui-fixture';
import { openTerminal, screenText, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

/** Reloads the page and waits until the terminal's view shows its restored buffer again. */
async function reloadInto(page: Page, id: string, until: RegExp): Promise<string> {
  await page.reload();
  await page.locator('[data-connection="connected"]').waitFor();
  const tab = page.locator(`[role="tab"][data-terminal-id="${id}"]`);
  if ((await tab.getAttribute('aria-selected')) !== 'true') await tab.click();
  return await waitForScreen(page, id, until, 20_000);
}

/** The numbers of the lines that are exactly `<prefix><n>`, in buffer order. */
function numbered(text: string, prefix: string): number[] {
  const pattern = new RegExp(`^${prefix}(\\d+)$`);
  return text.split('\n').flatMap((line) => {
    const match = pattern.exec(line);
    return match ? [Number(match[1])] : [];
  });
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * What a reload restores, read from the page's xterm.js through the test hook: the host's
 * snapshot (cold history, live scrollback, screen) followed by live frames, against a real
 * `tandem serve` and bash.
 */
describe.skipIf(!runUi)('Tandem UI: scrollback survives reloads', () => {
  const ui = useUiFixture({ width: 1000, height: 640 }, async ({ serve, page }) => {
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });
  let mcp: Client | undefined;

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
  });

  it('restores all 5,000 lines of a burst after a reload', async () => {
    const id = await openTerminal(ui.page);
    await waitForPrompt(ui.page, id);
    await typeLine(ui.page, 'seq 1 5000; echo burst-done');
    await waitForScreen(ui.page, id, /^burst-done$/m);
    expect(numbered(await screenText(ui.page, id), '')).toEqual(range(1, 5000));
    const restored = await reloadInto(ui.page, id, /^burst-done$/m);
    expect(numbered(restored, '')).toEqual(range(1, 5000));
    expect(restored).not.toMatch(/not kept|skipped/);
  }, 90_000);

  it('keeps what `clear` erased out of the restored view', async () => {
    const id = await openTerminal(ui.page);
    await waitForPrompt(ui.page, id);
    await typeLine(ui.page, "seq -f 'gone%g' 1 3000; clear; echo after-clear");
    await waitForScreen(ui.page, id, /^after-clear$/m);
    expect(await screenText(ui.page, id)).not.toMatch(/gone\d/);
    const restored = await reloadInto(ui.page, id, /^after-clear$/m);
    expect(restored).not.toMatch(/gone\d/);
  }, 90_000);

  it('shows every line exactly once across 20 reloads during a stream, with 3,000 lines of history and an agent attached', async () => {
    const token = ui.serve.agents.pairAgent({ name: 'streamer' }).token;
    ui.serve.agents.setAgentPolicy({ name: 'streamer', policy: 'always' });
    mcp = new Client({ name: 'ui-scrollback-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ui.serve.origin}/mcp`), { requestInit: { headers: ui.serve.agentHeaders(token) } }));
    const call = async (name: string, args: Record<string, unknown>) =>
      (await mcp!.callTool({ name, arguments: args }, undefined, { timeout: 70_000 })).structuredContent as Record<string, unknown>;

    const opened = await call('terminal_open', { title: 'streamer: numbers' });
    const id = opened.id as string;
    // A second viewer stays attached throughout, as another browser tab would.
    const other = await ui.page.context().newPage();
    await other.goto(testUrl(ui.serve.server.loginUrl()));
    await other.locator('[data-connection="connected"]').waitFor();

    expect(await call('terminal_send', { id, text: "seq -f 'h%g' 1 3000" })).toMatchObject({ status: 'done' });
    const tab = ui.page.locator(`[role="tab"][data-terminal-id="${id}"]`);
    await tab.click();
    await waitForScreen(ui.page, id, /^h3000$/m);

    const total = 400;
    const started = await call('terminal_send', { id, text: `for i in $(seq 1 ${total}); do echo L$i; sleep 0.02; done; echo stream-done`, waitMs: 100 });
    expect(started).toMatchObject({ status: 'running' });
    for (let reload = 0; reload < 20; reload++) {
      await ui.page.waitForTimeout(Math.floor(Math.random() * 250));
      const restored = await reloadInto(ui.page, id, /^h3000$/m);
      // At any moment: the history whole, and the stream so far without a gap or a repeat.
      expect(numbered(restored, 'h')).toEqual(range(1, 3000));
      const lines = numbered(restored, 'L');
      expect(lines, `reload ${reload + 1}`).toEqual(range(1, lines.length));
    }
    await waitForScreen(ui.page, id, /^stream-done$/m, 60_000);
    const final = await screenText(ui.page, id);
    expect(numbered(final, 'h')).toEqual(range(1, 3000));
    expect(numbered(final, 'L')).toEqual(range(1, total));
    // The viewer that never reloaded saw the same.
    await other.locator(`[role="tab"][data-terminal-id="${id}"]`).click();
    await waitForScreen(other, id, /^stream-done$/m);
    expect(numbered(await screenText(other, id), 'L')).toEqual(range(1, total));
    await other.close();
  }, 180_000);
});
