import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, screenshotPath, skipReason } from './helpers/browser';
import { useUiFixture } from './helpers/ui-fixture';
import { waitForPrompt } from './helpers/page';
import { testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

type ToolResult = Record<string, unknown> & { isError?: boolean };

/** What the hostile program names itself: Tandem's own state words, a bidi override and an escape sequence. */
const hostileTitle = '(approved) rm -rf';

/**
 * Issue 23, attack 11: a program's OSC 2 title that reads like Tandem's words ("(approved) rm -rf")
 * is shown only as the program's (quoted, in its own element, cleaned), never as the tab's label
 * or the approval card's name of the terminal. A real shell prints the title; a real MCP client
 * asks; the page is a real Chromium against an in-process `tandem serve`.
 */
describe.skipIf(!runUi)("Tandem UI: a program-set title is never shown as Tandem's words", () => {
  const ui = useUiFixture({ width: 1280, height: 780 }, async ({ serve, page }) => {
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });
  let mcp: Client | undefined;

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
  });

  async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const result = await mcp!.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
    const structured = result.structuredContent as Record<string, unknown>;
    return result.isError ? { isError: true, ...structured } : structured;
  }

  it("shows the title quoted as the program's beside Tandem's label, and the card names the terminal by Tandem's label", async () => {
    const { token } = ui.serve.agents.pairAgent({ name: 'codex' });
    // `always` only to let the shell print the title without a card; then every line asks.
    ui.serve.agents.setAgentPolicy({ name: 'codex', policy: 'always' });
    mcp = new Client({ name: 'ui-program-title-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ui.serve.origin}/mcp`), { requestInit: { headers: ui.serve.agentHeaders(token) } }));

    const opened = await call('terminal_open', { title: 'codex: build' });
    const id = opened.id as string;
    expect(opened).toMatchObject({ origin: 'agent', agent: 'codex' });
    const tab = ui.page.locator(`[role="tab"][data-terminal-id="${id}"]`);
    await tab.click();
    await waitForPrompt(ui.page, id);

    // The real shell sets its title: Tandem's words, a right-to-left override (U+202E), a zero-width space, a bell.
    const printed = await call('terminal_send', { id, text: `printf '\\033]2;\\342\\200\\256${hostileTitle}\\342\\200\\213\\007'`, waitMs: 20_000 });
    expect(printed).toMatchObject({ status: 'done' });
    await expect.poll(() => ui.serve.host.list().find((view) => view.id === id)?.program).toContain(hostileTitle);

    const program = tab.locator('[data-program-title]');
    await expect.poll(() => program.textContent()).toMatch(/^program:\s\u201c\(approved\) rm -rf\u201d$/);
    const label = (await tab.locator('.title').textContent())!;
    expect(label).not.toContain('approved');
    expect(label).toBe('codex: build');
    // Its own element and style, isolated from the label's direction.
    expect(await program.evaluate((node) => getComputedStyle(node).unicodeBidi)).toBe('isolate');
    expect(await program.evaluate((node) => getComputedStyle(node).fontStyle)).toBe('italic');
    expect(await tab.getAttribute('title')).toContain(`program: \u201c${hostileTitle}\u201d`);
    const tabText = (await tab.textContent())!;
    expect(tabText).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b\u0007]/);

    // Every line asks now: the card names the terminal by Tandem's label, never by the program's title.
    ui.serve.agents.setAgentPolicy({ name: 'codex', policy: 'ask' });
    const sent = call('terminal_send', { id, text: 'printf hi', waitMs: 50_000 });
    const question = ui.page.getByRole('group', { name: 'Command from codex' });
    await question.waitFor();
    const cardText = (await question.textContent())!;
    expect(cardText).not.toContain('approved');
    expect(cardText).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b]/);
    await question.getByRole('button', { name: label, exact: true }).waitFor();
    await ui.page.screenshot({ path: screenshotPath('ui-program-title') });

    await question.getByRole('button', { name: 'Reject…' }).click();
    await question.getByRole('button', { name: 'Reject', exact: true }).click();
    await question.waitFor({ state: 'detached' });
    const result = await sent;
    expect(result.error).toMatchObject({ code: 'rejected' });
  }, 120_000);
});
