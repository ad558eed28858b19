import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Locator, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, screenshotPath, skipReason } from './helpers/browser';
import { useUiFixture } from './helpers/ui-fixture';
import { activeTerminalId, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

type ToolResult = Record<string, unknown> & { isError?: boolean };

interface Recorded {
  notes: Array<{ title: string; body: string; tag: string }>;
  permissionAsked: number;
}

/**
 * Records what the page does with the browser's Notification API (the real one stays
 * underneath: permission is granted to the page, notifications are created for real).
 */
function recordNotifications(): void {
  const Real = window.Notification;
  const record = { notes: [] as Recorded['notes'], permissionAsked: 0, last: null as Notification | null };
  (window as unknown as { __notifications: typeof record }).__notifications = record;
  class Recording extends Real {
    constructor(title: string, options?: NotificationOptions) {
      super(title, options);
      record.notes.push({ title, body: options?.body ?? '', tag: options?.tag ?? '' });
      record.last = this;
    }
    static override requestPermission(...args: Parameters<typeof Notification.requestPermission>): Promise<NotificationPermission> {
      record.permissionAsked++;
      return Real.requestPermission(...args);
    }
  }
  window.Notification = Recording;
}

async function recorded(page: Page): Promise<Recorded> {
  return await page.evaluate(() => {
    const { notes, permissionAsked } = (window as unknown as { __notifications: Recorded }).__notifications;
    return { notes: [...notes], permissionAsked };
  });
}

/**
 * How the person is called and what the tabs tell, against a real `tandem serve` (in process),
 * Chromium, and a real MCP client with the token the UI showed.
 */
describe.skipIf(!runUi)('Tandem UI: tab states, notifications, closing and handoff notes', () => {
  const ui = useUiFixture({ width: 1280, height: 800 }, async ({ serve, page }) => {
    await page.addInitScript(recordNotifications);
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });
  let mcp: Client | undefined;
  let agentTerminal = '';
  let ownTerminal = '';

  const tab = (id: string): Locator => ui.page.locator(`.tab[data-tab-id="${id}"]`);
  const bar = (): Locator => ui.page.locator('[role="tabpanel"]:visible').getByRole('group', { name: 'Control of this terminal' });

  async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const result = await mcp!.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
    const structured = result.structuredContent as Record<string, unknown>;
    return result.isError ? { isError: true, ...structured } : structured;
  }

  async function shoot(name: string): Promise<void> {
    await ui.page.screenshot({ path: screenshotPath(`screenshots/${name}-1280x800`) });
    await ui.page.setViewportSize({ width: 800, height: 600 });
    await ui.page.waitForTimeout(250);
    await ui.page.screenshot({ path: screenshotPath(`screenshots/${name}-800x600`) });
    await ui.page.setViewportSize({ width: 1280, height: 800 });
    await ui.page.waitForTimeout(150);
  }

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
  });

  it('asks for notification permission when the person pairs an agent, not on load', async () => {
    expect((await recorded(ui.page)).permissionAsked).toBe(0);
    expect(await ui.page.evaluate(() => Notification.permission)).toBe('default');
    await ui.page.getByRole('button', { name: /^Agents/ }).click();
    const panel = ui.page.getByRole('complementary', { name: 'Agents' });
    await panel.getByRole('textbox', { name: 'Name of the agent to pair' }).fill('codex');
    await panel.getByRole('button', { name: 'Pair', exact: true }).click();
    const result = panel.getByRole('region', { name: 'Configuration for codex' });
    const token = (await result.getByLabel('Token', { exact: true }).textContent())!.trim();
    await expect.poll(async () => (await recorded(ui.page)).permissionAsked).toBe(1);
    // The person allows it (the test browser has no prompt to click).
    await ui.page.context().grantPermissions(['notifications'], { origin: ui.serve.origin });
    expect(await ui.page.evaluate(() => Notification.permission)).toBe('granted');
    await result.getByRole('button', { name: 'Done, hide the token' }).click();
    // The panel floats over the terminal, which keeps its size (issue 28; tests/e2e/ui-day.test.ts).
    await ui.page.getByRole('button', { name: 'New terminal', exact: true }).click();
    const opened = await activeTerminalId(ui.page);
    await waitForPrompt(ui.page, opened);
    const under = (await ui.page.locator('[role="tabpanel"]:visible').boundingBox())!;
    expect(under.x + under.width).toBeGreaterThan((await panel.boundingBox())!.x);
    await ui.page.getByRole('button', { name: /^Agents/ }).click();
    await panel.waitFor({ state: 'hidden' });

    mcp = new Client({ name: 'ui-attention-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ui.serve.origin}/mcp`), { requestInit: { headers: ui.serve.agentHeaders(token) } }));
    const before = await activeTerminalId(ui.page);
    await ui.page.getByRole('button', { name: 'New terminal', exact: true }).click();
    // The new tab is selected once its terminal exists: until then the earlier one still is.
    await expect.poll(() => activeTerminalId(ui.page)).not.toBe(before);
    ownTerminal = await activeTerminalId(ui.page);
    await waitForPrompt(ui.page, ownTerminal);
    agentTerminal = (await call('terminal_open', { title: 'codex: build' })).id as string;
    await tab(agentTerminal).waitFor();
    expect(await activeTerminalId(ui.page)).toBe(ownTerminal);
  });

  it('calls the person for an approval asked on another tab: a notification, the title count and a mark on the tab', async () => {
    const sent = call('terminal_send', { id: agentTerminal, text: 'printf approved-run', waitMs: 50_000 });
    await tab(agentTerminal).locator('[data-mark="approval"]').waitFor();
    await expect.poll(() => ui.page.title()).toBe('(1) Tandem');
    await expect
      .poll(async () => (await recorded(ui.page)).notes)
      .toEqual([{ title: 'codex asks to run a command', body: 'printf approved-run\nin codex: build', tag: `approval:${agentTerminal}` }]);
    // The agent's tab wears the agent's own mark.
    await expect.poll(() => tab(agentTerminal).locator('[data-agent-hue]').textContent()).toContain('C');

    // The card never covers the new-terminal menu, nor the terminal.
    const question = ui.page.getByRole('group', { name: 'Command from codex' });
    await ui.page.getByRole('button', { name: 'Choose a shell' }).click();
    const menu = ui.page.getByRole('menu', { name: 'New terminal with shell' });
    const box = (await menu.boundingBox())!;
    const onTop = await ui.page.evaluate(({ x, y }) => Boolean(document.elementFromPoint(x, y)?.closest('[role="menu"]')), {
      x: box.x + box.width - 8,
      y: box.y + box.height - 8,
    });
    expect(onTop).toBe(true);
    await ui.page.keyboard.press('Escape');
    const pane = (await ui.page.locator('[role="tabpanel"]:visible').boundingBox())!;
    const card = (await question.boundingBox())!;
    // The card floats over the terminal, which keeps its width (issue 28).
    expect(pane.x + pane.width).toBeGreaterThan(card.x + card.width);
    await shoot('approval-on-another-tab');

    // Clicking the notification shows that terminal.
    await ui.page.evaluate(() => {
      const last = (window as unknown as { __notifications: { last: Notification } }).__notifications.last;
      last.onclick?.(new Event('click'));
    });
    await expect.poll(() => activeTerminalId(ui.page)).toBe(agentTerminal);
    await question.getByRole('button', { name: 'Approve', exact: true }).click();
    expect(await sent).toMatchObject({ status: 'done', output: 'approved-run' });
    await expect.poll(() => ui.page.title()).toBe('Tandem');
  }, 90_000);

  it('raises no notification for an event the settings turned off (the tab still shows it)', async () => {
    await ui.page.locator(`[role="tab"][data-terminal-id="${ownTerminal}"]`).click();
    await ui.page.getByRole('button', { name: 'Settings' }).click();
    const setting = ui.page.getByRole('dialog', { name: 'Settings' }).getByRole('checkbox', { name: 'An agent asks to run a command' });
    await setting.uncheck();
    await ui.page.keyboard.press('Escape');
    const before = (await recorded(ui.page)).notes.length;
    const sent = call('terminal_send', { id: agentTerminal, text: 'printf quiet-run', waitMs: 50_000 });
    await tab(agentTerminal).locator('[data-mark="approval"]').waitFor();
    await expect.poll(() => ui.page.title()).toBe('(1) Tandem');
    await ui.page.getByRole('group', { name: 'Command from codex' }).getByRole('button', { name: 'Approve', exact: true }).click();
    expect(await sent).toMatchObject({ status: 'done', output: 'quiet-run' });
    expect((await recorded(ui.page)).notes.length).toBe(before);
    await ui.page.getByRole('button', { name: 'Settings' }).click();
    await setting.check();
    await ui.page.keyboard.press('Escape');
  });

  it('shows a failed command’s exit code on its tab, and the program that runs as its title', async () => {
    ui.serve.agents.setAgentPolicy({ name: 'codex', policy: 'always' });
    await ui.page.locator(`[role="tab"][data-terminal-id="${ownTerminal}"]`).click();
    expect(await call('terminal_send', { id: agentTerminal, text: "bash -c 'exit 3'", waitMs: 20_000 })).toMatchObject({ status: 'done', exitCode: 3 });
    await expect.poll(() => tab(agentTerminal).locator('[data-mark="failed"]').textContent()).toBe('✗ 3');

    // The person's idle tab is named after its folder; a running program is shown beside it as the program's (issue 23).
    await typeLine(ui.page, 'cd /tmp');
    await expect.poll(() => tab(ownTerminal).locator('.title').textContent()).toBe('tmp');
    await typeLine(ui.page, 'sleep 300');
    await expect.poll(() => tab(ownTerminal).locator('[data-program-title]').textContent()).toMatch(/^program:\s\u201csleep\u201d$/);
    expect(await tab(ownTerminal).locator('.title').textContent()).toBe('tmp');
    await shoot('failed-and-running');
  });

  it('asks before closing a tab whose command still runs', async () => {
    await tab(ownTerminal)
      .getByRole('button', { name: /^Close/ })
      .click();
    const dialog = ui.page.getByRole('dialog', { name: /^Close/ });
    await dialog.waitFor();
    await expect.poll(() => dialog.textContent()).toContain('The program \u201csleep\u201d is still running');
    await shoot('close-running');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(ui.serve.host.has(ownTerminal)).toBe(true);

    await tab(ownTerminal)
      .getByRole('button', { name: /^Close/ })
      .click();
    await dialog.getByRole('button', { name: 'Close terminal' }).click();
    await expect.poll(() => ui.serve.host.has(ownTerminal)).toBe(false);
  });

  it('marks a waiting program, and calls the person once the agent leaves it unanswered', async () => {
    // A person's tab in front, so the agent's tab is in the background.
    const selected = await activeTerminalId(ui.page);
    await ui.page.getByRole('button', { name: 'New terminal', exact: true }).click();
    // The new tab is selected once its terminal exists: until then the earlier one still is.
    await expect.poll(() => activeTerminalId(ui.page)).not.toBe(selected);
    ownTerminal = await activeTerminalId(ui.page);
    await waitForPrompt(ui.page, ownTerminal);
    const before = (await recorded(ui.page)).notes.length;
    // An unclosed quote: the shell itself waits for the rest of the line.
    expect(await call('terminal_send', { id: agentTerminal, text: 'echo "unclosed', waitMs: 20_000 })).toMatchObject({
      status: 'waiting_input',
      evidence: 'continuation',
    });
    await tab(agentTerminal).locator('[data-mark="waiting"]').waitFor();
    await expect
      .poll(async () => (await recorded(ui.page)).notes.slice(before).map((note) => note.tag), { timeout: 12_000 })
      .toEqual([`input:${agentTerminal}`]);
    await expect.poll(() => ui.page.title()).toBe('(1) Tandem');
    await expect.poll(() => tab(agentTerminal).locator('[data-mark="waiting"].unanswered').count()).toBe(1);
    await shoot('waiting-unanswered');
    await call('terminal_send', { id: agentTerminal, text: 'end"', waitMs: 20_000 });
    await expect.poll(() => ui.page.title()).toBe('Tandem');
  });

  it('keeps 12 tabs reachable: scroll buttons and a list of all tabs', async () => {
    await ui.page.setViewportSize({ width: 800, height: 600 });
    // One tab at a time, each waited for (not 300 ms a loaded machine can outlast, which clicked
    // again before the last tab came and made more than 12).
    for (let count = await ui.page.locator('[role="tab"]').count(); count < 12; count += 1) {
      await ui.page.getByRole('button', { name: 'New terminal', exact: true }).click();
      await expect.poll(() => ui.page.locator('[role="tab"]').count()).toBe(count + 1);
    }
    await expect.poll(() => ui.page.locator('[role="tab"]').count()).toBe(12);
    const strip = (await ui.page.getByRole('tablist', { name: 'Terminals' }).boundingBox())!;
    await ui.page.getByRole('button', { name: 'Scroll tabs left' }).waitFor();
    await ui.page.getByRole('button', { name: /^All tabs \(12\)/ }).click();
    const list = ui.page.getByRole('menu', { name: 'All tabs' });
    await expect.poll(() => list.getByRole('menuitem').count()).toBe(12);
    await ui.page.screenshot({ path: screenshotPath('screenshots/twelve-tabs-list-800x600') });
    const first = (await ui.page.locator('[role="tab"]').first().getAttribute('data-terminal-id'))!;
    await list.locator(`[data-terminal-id="${first}"]`).click();
    await expect.poll(() => activeTerminalId(ui.page)).toBe(first);
    // The chosen tab is scrolled into the strip's view.
    await expect
      .poll(async () => {
        const box = (await tab(first).boundingBox())!;
        return box.x >= strip.x - 1 && box.x + box.width <= strip.x + strip.width + 1;
      })
      .toBe(true);
    // Drag and drop reorders: the first tab goes after the second.
    const second = (await ui.page.locator('[role="tab"]').nth(1).getAttribute('data-terminal-id'))!;
    const target = (await tab(second).boundingBox())!;
    // Dropped on the right half of the second tab: after it.
    await tab(first).dragTo(tab(second), { targetPosition: { x: target.width - 12, y: 10 } });
    await expect
      .poll(async () => (await ui.page.locator('[role="tab"]').evaluateAll((tabs) => tabs.map((el) => el.getAttribute('data-terminal-id')))).slice(0, 2))
      .toEqual([second, first]);
    // The strip's own buttons reach the other end too.
    await ui.page.getByRole('button', { name: 'Scroll tabs right' }).click();
    await ui.page.screenshot({ path: screenshotPath('screenshots/twelve-tabs-800x600') });
    await ui.page.setViewportSize({ width: 1280, height: 800 });
    await ui.page.screenshot({ path: screenshotPath('screenshots/twelve-tabs-1280x800') });
  }, 90_000);

  it('hands back with a note; the output of the person’s commands reaches the agent only when shared', async () => {
    await ui.page.locator(`[role="tab"][data-terminal-id="${ownTerminal}"]`).click();
    // Wrapped: an async function returning the call's promise would wait for its result.
    const ask = async (): Promise<{ handoff: Promise<ToolResult> }> => {
      const handoff = call('terminal_handoff', { id: agentTerminal, message: 'please type the deploy password', waitMs: 50_000 });
      const banner = ui.page.getByRole('group', { name: 'Handoff request from codex' });
      await tab(agentTerminal).locator('[data-mark="handoff"]').waitFor();
      await banner.getByRole('button', { name: 'Take over' }).click();
      await bar().getByText('You have control').waitFor();
      await expect
        .poll(() => ui.page.locator('[role="tabpanel"]:visible [data-testid="handoff-message"]').textContent())
        .toBe('codex asked you: please type the deploy password');
      await typeLine(ui.page, "printf 'pri%s\\n' vate-output");
      await waitForScreen(ui.page, agentTerminal, /^private-output$/m);
      return { handoff };
    };

    let { handoff } = await ask();
    const form = ui.page.getByRole('dialog', { name: 'Hand back to codex' });
    const openForm = async (): Promise<void> => {
      await bar().getByRole('button', { name: 'With a note…' }).click();
      await form.getByRole('textbox', { name: 'Note for codex (optional)' }).fill('password typed, carry on');
    };
    // The form opens inside the window at either size (a resize closes it).
    await ui.page.setViewportSize({ width: 800, height: 600 });
    await openForm();
    await ui.page.screenshot({ path: screenshotPath('screenshots/hand-back-note-800x600') });
    await ui.page.setViewportSize({ width: 1280, height: 800 });
    await form.waitFor({ state: 'detached' });
    await openForm();
    expect(await form.getByRole('checkbox', { name: 'Share my output with the agent' }).isChecked()).toBe(false);
    await ui.page.screenshot({ path: screenshotPath('screenshots/hand-back-note-1280x800') });
    await form.getByRole('button', { name: 'Hand back', exact: true }).click();
    let result = await handoff;
    expect(result).toMatchObject({ control: 'agent', handoff: { state: 'returned', note: 'password typed, carry on' } });
    const summary = (result.handoff as { summary: string }).summary;
    expect(summary).toContain("printf 'pri%s\\n' vate-output → exit 0");
    expect(summary).not.toContain('private-output');
    expect(result.output).not.toContain('private-output');
    await expect.poll(() => ui.page.locator('[data-testid="handoff-message"]').count()).toBe(0);

    ({ handoff } = await ask());
    await bar().getByRole('button', { name: 'With a note…' }).click();
    await form.getByRole('textbox', { name: 'Note for codex (optional)' }).waitFor();
    await form.getByRole('checkbox', { name: 'Share my output with the agent' }).check();
    await form.getByRole('button', { name: 'Hand back', exact: true }).click();
    result = await handoff;
    expect(result).toMatchObject({ handoff: { state: 'returned', note: null } });
    const shared = (result.handoff as { summary: string }).summary;
    expect(shared).toContain('The person shared their output:');
    expect(shared.slice(shared.indexOf('The person shared their output:'))).toMatch(/^private-output$/m);
  }, 90_000);
});
