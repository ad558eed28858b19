import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeHeaders } from '../../src/main/agent/mcp/mcp-http';
import { startServe } from '../../src/main/cli';
import type { Runtime } from '../../src/main/runtime';
import { chromiumAvailable, chromiumRequired, launchChromium, screenshotPath, skipReason } from './helpers/browser';
import { activeTerminalId, openTerminal, screenText, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { missingBuild, projectRoot, serveEnv, testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

/**
 * Issue 29, tabs that outlive their terminal, in Debian's Chromium against `tandem serve` (the
 * CLI's own startServe, in this process, so the test can stop it and start it again over the same
 * state directory): an agent's terminal_close leaves a read-only transcript tab with its output,
 * Dismiss removes it, the last session's tabs come back after a restart, and "Open a new shell
 * here" opens the person's shell in that directory.
 */
describe.skipIf(!runUi)('Tandem UI: transcript tabs', () => {
  let home: string;
  let project: string;
  let running: Runtime | null = null;
  let browser: Browser;
  let page: Page;
  let mcp: Client | null = null;

  const tab = (id: string): Locator => page.locator(`.tab[data-tab-id="${id}"]`);
  const bar = (): Locator => page.locator('[role="tabpanel"]:visible [data-testid="transcript-bar"]');

  async function start(): Promise<Runtime> {
    const env = serveEnv(home);
    return await startServe(
      { port: 0, allowOrigins: [], trustLocalAgents: false },
      { out: () => undefined, err: () => undefined, env },
      join(projectRoot, 'out/renderer'),
    );
  }

  async function login(): Promise<void> {
    await page.goto(testUrl(running!.server.loginUrl()));
    await page.locator('[data-connection="connected"]').waitFor();
  }

  async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const result = await mcp!.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  }

  async function shoot(name: string, viewport: { width: number; height: number }, theme: 'dark' | 'light'): Promise<void> {
    running!.host.settings.update({ theme });
    await page.setViewportSize(viewport);
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
    await page.waitForTimeout(300);
    await page.screenshot({ path: screenshotPath(`transcripts-${name}-${theme}-${viewport.width}x${viewport.height}`) });
  }

  beforeAll(async () => {
    const missing = missingBuild();
    if (missing) throw new Error(missing);
    home = mkdtempSync(join(tmpdir(), 'tandem-ui-transcripts-'));
    project = join(home, 'home', 'project');
    mkdirSync(project, { recursive: true });
    running = await start();
    const token = running.agents.tokens.pair('codex');
    running.agents.setAgentPolicy({ name: 'codex', policy: 'always', sandbox: 'off' });
    mcp = new Client({ name: 'ui-transcripts-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${running.server.origin}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}`, [bridgeHeaders.cwd]: encodeURIComponent(project) } },
      }),
    );
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (error) => console.error('page error:', error));
    await login();
  }, 90_000);

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await browser?.close();
    await running?.stop();
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('keeps an agent’s closed terminal as a read-only transcript with its output, until Dismiss', async () => {
    const id = (await call('terminal_open', { title: 'codex: build', shell: 'bash' })).id as string;
    await tab(id).click();
    await waitForScreen(page, id, /[$#] ?$/m);
    const sent = await call('terminal_send', { id, text: 'echo transcript-e2e-$((6*7))' });
    expect(sent.output).toContain('transcript-e2e-42');
    await waitForScreen(page, id, /transcript-e2e-42/);
    expect(await call('terminal_close', { id })).toMatchObject({ closed: true });

    await expect.poll(() => tab(id).locator('[data-mark="transcript"]').count()).toBe(1);
    await expect.poll(async () => (await bar().textContent()) ?? '').toMatch(/Closed by codex at .*Read-only transcript/);
    await waitForScreen(page, id, /transcript-e2e-42/);
    expect(running!.host.list().some((t) => t.id === id)).toBe(false);
    // Typing goes nowhere: the host has no terminal behind the tab.
    await page.locator('[role="tabpanel"]:visible .xterm').click();
    await page.keyboard.type('echo typed-into-transcript');
    await page.keyboard.press('Enter');
    expect(await screenText(page, id)).not.toContain('typed-into-transcript');

    await shoot('closed', { width: 1280, height: 800 }, 'dark');
    await shoot('closed', { width: 800, height: 600 }, 'light');
    await shoot('closed', { width: 1280, height: 800 }, 'light');
    await shoot('closed', { width: 800, height: 600 }, 'dark');
    await page.setViewportSize({ width: 1280, height: 800 });

    await bar().locator('xpath=..').getByRole('button', { name: 'Dismiss' }).click();
    await expect.poll(() => tab(id).count()).toBe(0);
    expect(running!.host.roster().some((t) => t.id === id)).toBe(false);
  });

  it('brings the last session’s tabs back after a restart, and opens a new shell in a tab’s directory', async () => {
    const own = await openTerminal(page);
    await waitForPrompt(page, own);
    await typeLine(page, `cd ${project} && echo restart-e2e-$((5*5))`);
    await waitForScreen(page, own, /^restart-e2e-25/m);
    await expect.poll(() => running!.host.get(own).view().cwd).toBe(project);
    const agentTab = (await call('terminal_open', { title: 'codex: tests', shell: 'bash' })).id as string;
    await call('terminal_send', { id: agentTab, text: 'echo agent-before-restart' });

    await mcp!.close();
    mcp = null;
    await running!.stop();
    running = await start();
    await login();

    for (const id of [own, agentTab]) await expect.poll(() => tab(id).locator('[data-mark="transcript"]').count()).toBe(1);
    await tab(own).click();
    await expect.poll(async () => (await bar().textContent()) ?? '').toMatch(/From the last session/);
    await waitForScreen(page, own, /^restart-e2e-25/m);
    await tab(agentTab).click();
    await waitForScreen(page, agentTab, /agent-before-restart/);
    expect(running.host.list()).toEqual([]);

    await tab(own).click();
    await shoot('restored', { width: 1280, height: 800 }, 'dark');
    await shoot('restored', { width: 800, height: 600 }, 'light');
    await shoot('restored', { width: 1280, height: 800 }, 'light');
    await shoot('restored', { width: 800, height: 600 }, 'dark');
    await page.setViewportSize({ width: 1280, height: 800 });

    await bar().locator('xpath=..').getByRole('button', { name: 'Open a new shell here' }).click();
    await expect.poll(() => activeTerminalId(page)).not.toBe(own);
    const fresh = await activeTerminalId(page);
    expect(running.host.get(fresh).view()).toMatchObject({ origin: 'user', cwd: project });
    await waitForPrompt(page, fresh);
    await typeLine(page, 'pwd');
    await waitForScreen(page, fresh, new RegExp(`^${project}$`, 'm'));
    // The transcript stays beside it until dismissed, or until the person keeps closed tabs no longer.
    expect(await tab(own).count()).toBe(1);
    await page.getByRole('button', { name: 'Settings' }).click();
    await page
      .getByRole('dialog', { name: 'Settings' })
      .getByLabel(/Keep closed tabs/)
      .fill('0');
    await page
      .getByRole('dialog', { name: 'Settings' })
      .getByLabel(/Keep closed tabs/)
      .press('Tab');
    await expect.poll(() => running!.host.settings.get().transcriptKeepHours).toBe(0);
    await page.keyboard.press('Escape');
    await expect.poll(() => tab(own).count()).toBe(0);
    expect(await tab(agentTab).count()).toBe(0);
    expect(await tab(fresh).count()).toBe(1);
  });
});
