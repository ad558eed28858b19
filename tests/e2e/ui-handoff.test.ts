import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, screenshotPath, skipReason } from './helpers/browser';
import { useUiFixture } from './helpers/ui-fixture';
import { typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

const agentName = 'test-agent';
/** Long enough for a wrongly typed focus report to have reached the host and taken control. */
const settleMs = 600;

/**
 * An agent's terminal in the UI. No agent needed: the test opens the terminal through the host
 * as the agent layer would (origin agent, the agent in control).
 */
describe.skipIf(!runUi)('Tandem UI: an agent terminal and handoff', () => {
  let id = '';
  const ui = useUiFixture({ width: 1180, height: 720 }, async ({ serve, page }) => {
    // Handing goes to a token: the agent is paired, as the person would have done.
    serve.agents.pairAgent({ name: agentName });
    id = (await serve.host.create({ origin: 'agent', agent: agentName, title: 'agent: tests' })).id;
    await page.goto(testUrl(serve.loginUrl));
  });

  const control = (): string => ui.serve.host.get(id).meta.control;
  const bar = (): ReturnType<Page['getByRole']> => ui.page.getByRole('group', { name: 'Control of this terminal' });

  it('shows the agent tab with its badge and who drives', async () => {
    const tab = ui.page.locator(`[role="tab"][data-terminal-id="${id}"]`);
    await tab.waitFor();
    await expect.poll(() => tab.textContent()).toContain(agentName);
    await bar().getByText(`Agent ${agentName} is driving`).waitFor();
    await waitForPrompt(ui.page, id);
    await ui.serve.host.get(id).session.write('echo "agent was here"\r');
    await waitForScreen(ui.page, id, /^agent was here$/m);
    await ui.page.screenshot({ path: screenshotPath('ui-agent-tab') });
  });

  it('takes over with the button and hands back', async () => {
    await bar().getByRole('button', { name: 'Take over' }).click();
    await bar().getByText('You have control').waitFor();
    expect(control()).toBe('user');
    await bar()
      .getByRole('button', { name: `Hand back to ${agentName}` })
      .click();
    await bar().getByText(`Agent ${agentName} is driving`).waitFor();
    expect(control()).toBe('agent');
  });

  it('keeps the agent in control on focus reports, and gives control to the person who types', async () => {
    // The program asks for focus reports: clicking away and back sends them, untyped.
    await ui.serve.host.get(id).session.write("printf '\\033[?1004h'; echo focus-on\r");
    await waitForScreen(ui.page, id, /^focus-on$/m);
    await ui.page.locator(`[role="tabpanel"]:visible .xterm`).click();
    await ui.page.locator('footer').click();
    await ui.page.locator(`[role="tabpanel"]:visible .xterm`).click();
    await ui.page.waitForTimeout(settleMs);
    expect(control()).toBe('agent');

    await typeLine(ui.page, 'echo typed-by-person');
    await bar().getByText('You have control').waitFor();
    expect(control()).toBe('user');
    await waitForScreen(ui.page, id, /^typed-by-person$/m);
  });

  it("shares the person's own terminal, hands it to an agent, takes it back and resets it", async () => {
    await ui.page.getByRole('button', { name: 'New terminal', exact: true }).click();
    await ui.page.locator(`[role="tab"][aria-selected="true"]:not([data-terminal-id="${id}"])`).waitFor();
    const own = (await ui.page.locator('[role="tab"][aria-selected="true"]').getAttribute('data-terminal-id'))!;
    await waitForPrompt(ui.page, own);
    const meta = () => ui.serve.host.get(own).meta;

    const share = ui.page.getByRole('switch', { name: 'Share with agents' });
    await share.click();
    await expect.poll(() => share.getAttribute('aria-checked')).toBe('true');
    expect(meta().shared).toBe(true);

    await ui.page.getByRole('combobox', { name: 'Agent to hand this terminal to' }).selectOption(agentName);
    await ui.page.getByRole('button', { name: 'Hand to agent' }).click();
    // The agent runs sandboxed (the default for new pairings); the person's own terminal is not.
    await ui.page
      .getByRole('dialog', { name: /Hand an unsandboxed terminal/ })
      .getByRole('button', { name: 'Hand over unsandboxed' })
      .click();
    // Driving, or holding it while its MCP session is away (the bar says which since issue 28).
    await bar()
      .getByText(new RegExp(`^Agent ${agentName} is (driving|disconnected)$`))
      .waitFor();
    expect(meta()).toMatchObject({ handedTo: agentName, control: 'agent' });
    await bar().getByRole('button', { name: 'Take back' }).click();
    await ui.page.getByRole('switch', { name: 'Share with agents' }).waitFor();
    expect(meta()).toMatchObject({ handedTo: null, control: 'user' });

    const pid = ui.serve.host.get(own).session.pid;
    await ui.page.getByRole('button', { name: 'Reset…' }).click();
    await ui.page.getByRole('dialog').getByRole('button', { name: 'Reset terminal' }).click();
    await expect.poll(() => ui.serve.host.get(own).session.pid, { timeout: 15_000 }).not.toBe(pid);
    await waitForPrompt(ui.page, own);
    await typeLine(ui.page, 'echo fresh-shell');
    await waitForScreen(ui.page, own, /^fresh-shell$/m);
  });
});
