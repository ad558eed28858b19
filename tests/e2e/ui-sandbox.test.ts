import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Locator } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { sandboxAvailable, sandboxRequired } from '../integration/sandbox-helpers';
import { chromiumAvailable, chromiumRequired, skipReason } from './helpers/browser';
import { testUrl } from './helpers/serve';
import { useUiFixture } from './helpers/ui-fixture';

const runUi = (chromiumAvailable || chromiumRequired) && (sandboxAvailable || sandboxRequired);
if (!runUi)
  console.warn(chromiumAvailable ? 'sandbox UI tests: skipped, bubblewrap cannot run here (set TANDEM_REQUIRE_SANDBOX=1 to fail instead).' : skipReason);

/**
 * The agents panel's sandbox choices, in real Chromium against an in-process `tandem serve`:
 * the default for new pairings (kept by the host), each agent's select, and what the host does
 * with them when a real MCP client opens a terminal.
 */
describe.skipIf(!runUi)('Tandem UI: sandbox choices', () => {
  const ui = useUiFixture({ width: 1280, height: 780 }, async ({ serve, page }) => {
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });
  let mcp: Client | undefined;
  const panel = (): Locator => ui.page.getByRole('complementary', { name: 'Agents' });
  const defaultSelect = (): Locator => panel().getByRole('combobox', { name: 'Sandbox for new pairings' });
  const agentSelect = (name: string): Locator => panel().getByRole('combobox', { name: `Sandbox for ${name}` });
  const openPanel = async () => {
    if (!(await panel().isVisible())) await ui.page.getByRole('button', { name: /^Agents/ }).click();
    await panel().waitFor();
  };
  const pair = async (name: string): Promise<string> => {
    await panel().getByRole('textbox', { name: 'Name of the agent to pair' }).fill(name);
    await panel().getByRole('button', { name: 'Pair', exact: true }).click();
    const result = panel().getByRole('region', { name: `Configuration for ${name}` });
    const token = (await result.getByLabel('Token', { exact: true }).textContent())!.trim();
    await result.getByRole('button', { name: 'Done, hide the token' }).click();
    return token;
  };
  const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const result = await mcp!.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
    return { ...(result.structuredContent as Record<string, unknown>), ...(result.isError ? { isError: true } : {}) };
  };

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
  });

  it('says what the sandbox stops and what it does not, and keeps the default for new pairings in the host', async () => {
    await openPanel();
    expect(await defaultSelect().inputValue()).toBe('workspace-write');
    const said = await panel().getByLabel('What the sandbox does').textContent();
    expect(said).toMatch(/cannot write outside its workspace/);
    expect(said).toMatch(/can still delete or rewrite files in its workspace/);
    await defaultSelect().selectOption('read-only');
    await panel().getByRole('checkbox', { name: 'Network for new pairings' }).uncheck();
    await expect.poll(() => ui.serve.host.settings.get()).toMatchObject({ newAgentSandbox: 'read-only', newAgentNetwork: false });
    // Another window (a reload) reads the host's choice, not this page's memory.
    await ui.page.reload();
    await ui.page.locator('[data-connection="connected"]').waitFor();
    await openPanel();
    await expect.poll(() => defaultSelect().inputValue()).toBe('read-only');
    expect(await panel().getByRole('checkbox', { name: 'Network for new pairings' }).isChecked()).toBe(false);
  });

  it('pairs under that default, opens a read-only terminal through MCP, and refuses a change while it is open', async () => {
    const token = await pair('boxed');
    await expect.poll(() => agentSelect('boxed').inputValue()).toBe('read-only');
    expect(await panel().getByRole('checkbox', { name: 'Network for boxed' }).isChecked()).toBe(false);
    expect(ui.serve.agents.state().paired.find((agent) => agent.name === 'boxed')).toMatchObject({ sandbox: 'read-only', network: false });
    // Sandboxed, running without asking is the point: the sandbox, not approvals, is the boundary here.
    await panel().getByRole('combobox', { name: 'Approval policy for boxed' }).selectOption('always');
    await expect.poll(() => ui.serve.agents.state().paired.find((agent) => agent.name === 'boxed')?.policy).toBe('always');

    mcp = new Client({ name: 'ui-sandbox-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ui.serve.origin}/mcp`), { requestInit: { headers: ui.serve.agentHeaders(token) } }));
    const opened = await call('terminal_open', { title: 'boxed: look' });
    expect(opened).toMatchObject({ sandbox: { mode: 'read-only', network: false } });
    const id = opened.id as string;
    await ui.page.locator(`[role="tab"][data-terminal-id="${id}"] [data-sandbox="read-only"]`).waitFor();
    expect(await call('terminal_send', { id, text: 'touch nope.txt' })).toMatchObject({ status: 'done', exitCode: 1 });

    // A change while the terminal is open is refused, and the select shows what still applies.
    await agentSelect('boxed').selectOption('workspace-write');
    await ui.page
      .getByRole('alert')
      .filter({ hasText: /close them before changing its sandbox/ })
      .waitFor();
    await expect.poll(() => agentSelect('boxed').inputValue()).toBe('read-only');
    expect(ui.serve.agents.state().paired.find((agent) => agent.name === 'boxed')).toMatchObject({ sandbox: 'read-only' });

    await call('terminal_close', { id });
    await agentSelect('boxed').selectOption('workspace-write');
    await expect.poll(() => ui.serve.agents.state().paired.find((agent) => agent.name === 'boxed')?.sandbox).toBe('workspace-write');
    const again = await call('terminal_open', { title: 'boxed: write' });
    expect(again).toMatchObject({ sandbox: { mode: 'workspace-write', network: false } });
    expect(await call('terminal_send', { id: again.id, text: 'touch made.txt' })).toMatchObject({ status: 'done', exitCode: 0 });
    await call('terminal_close', { id: again.id });
  }, 90_000);

  it('changing the default later leaves agents already paired as they are', async () => {
    await defaultSelect().selectOption('off');
    await expect.poll(() => ui.serve.host.settings.get().newAgentSandbox).toBe('off');
    expect(ui.serve.agents.state().paired.find((agent) => agent.name === 'boxed')).toMatchObject({ sandbox: 'workspace-write', network: false });
    await pair('loose');
    await expect.poll(() => agentSelect('loose').inputValue()).toBe('off');
    expect(await agentSelect('boxed').inputValue()).toBe('workspace-write');
  });
});
