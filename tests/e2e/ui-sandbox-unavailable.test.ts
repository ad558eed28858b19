import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Locator } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { configureSandboxDetection } from '../../src/main/sandbox/availability';
import { chromiumAvailable, chromiumRequired, screenshotPath, skipReason } from './helpers/browser';
import { testUrl } from './helpers/serve';
import { useUiFixture } from './helpers/ui-fixture';

/**
 * The agents panel on a machine where bubblewrap cannot start (Ubuntu 24.04's AppArmor rule): it
 * says what that means and the fix, and a confined open is refused rather than run unconfined.
 * The host runs in this process, so the machine is simulated with two small stand-ins: the sysctl
 * reads 1 from a fake file, and the probe runs /bin/false in bubblewrap's place (a bubblewrap
 * that fails; tests/integration/sandbox-unavailable.test.ts makes the real one fail).
 */
const fake = mkdtempSync(join(tmpdir(), 'tandem-apparmor-'));
const sysctl = join(fake, 'apparmor_restrict_unprivileged_userns');
writeFileSync(sysctl, '1\n');
configureSandboxDetection({ bwrap: '/bin/false', restrictFile: sysctl });

const runUi = (chromiumAvailable || chromiumRequired) && process.platform === 'linux';
if (!runUi) console.warn(skipReason);

describe.skipIf(!runUi)('Tandem UI: the sandbox blocked by AppArmor', () => {
  const ui = useUiFixture({ width: 1280, height: 780 }, async ({ serve, page }) => {
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });
  let mcp: Client | undefined;
  const panel = (): Locator => ui.page.getByRole('complementary', { name: 'Agents' });
  const notice = (): Locator => panel().getByRole('alert', { name: 'Sandbox unavailable' });

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    configureSandboxDetection();
    rmSync(fake, { recursive: true, force: true });
  });

  it('says AppArmor blocks the sandbox, what that means and the fix, where a sandbox is chosen', async () => {
    await ui.page.getByRole('button', { name: /^Agents/ }).click();
    await panel().waitFor();
    await notice().first().waitFor();
    const said = (await notice().first().textContent()) ?? '';
    expect(said).toMatch(/AppArmor blocks the sandbox on this machine/);
    expect(said).toMatch(/refused until it is fixed \(never opened unconfined instead\)/);
    expect(said).toContain("install Tandem's .deb");
    expect(said).toContain('sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0');
    await ui.page.screenshot({ path: screenshotPath('sandbox-apparmor-notice') });
  });

  it('an agent paired under the default sandbox gets sandbox_unavailable over MCP, and no tab opens', async () => {
    const { token } = ui.serve.agents.pairAgent({ name: 'blocked' });
    ui.serve.agents.setAgentPolicy({ name: 'blocked', policy: 'always' });
    await panel().getByRole('combobox', { name: 'Sandbox for blocked' }).waitFor();
    // The agent's own card says it too.
    expect(await notice().count()).toBe(2);
    mcp = new Client({ name: 'ui-apparmor-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ui.serve.origin}/mcp`), { requestInit: { headers: ui.serve.agentHeaders(token) } }));
    const result = await mcp.callTool({ name: 'terminal_open', arguments: { title: 'blocked: try' } }, undefined, { timeout: 60_000 });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: 'sandbox_unavailable', message: expect.stringMatching(/^Ubuntu's AppArmor/) } });
    expect(ui.serve.host.list()).toEqual([]);
    expect(await ui.page.locator('[role="tab"][data-terminal-id]').count()).toBe(0);
  });

  it('with the sandbox off for new pairings and for the agent, the notice goes', async () => {
    await panel().getByRole('combobox', { name: 'Sandbox for new pairings' }).selectOption('off');
    await panel().getByRole('combobox', { name: 'Sandbox for blocked' }).selectOption('off');
    await expect.poll(() => notice().count()).toBe(0);
  });
});
