import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, skipReason } from './helpers/browser';
import { openTerminal, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';
import { hostLook, shots } from './helpers/shots';
import { type UiFixture, useUiFixture } from './helpers/ui-fixture';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

type ToolResult = Record<string, unknown> & { isError?: boolean };
interface Hook {
  viewport(id: string, text?: string): { viewportY: number; baseY: number; line: number } | null;
}

async function viewport(page: Page, id: string, text?: string): Promise<{ viewportY: number; baseY: number; line: number }> {
  return (await page.evaluate(([terminalId, find]) => (window as unknown as { __tandemTest: Hook }).__tandemTest.viewport(terminalId!, find), [
    id,
    text,
  ] as const))!;
}

async function screenshots(fixture: UiFixture, name: string): Promise<void> {
  await shots(fixture.page, `timeline-${name}`, { looks: hostLook(fixture.page, fixture.serve.host.settings) });
}

/**
 * Issue 29, the Timeline panel (Debian's Chromium against an in-process `tandem serve`, a real
 * agent over MCP with the official SDK client): the person hands their terminal to codex, approves
 * one command, edits another, rejects a third with a reason, takes over and hands back with a
 * note. The terminal's timeline shows these in order with who and how; the filters narrow it; a
 * click on a command scrolls its terminal to the command's line; a record changed on disk is
 * reported.
 */
describe.skipIf(!runUi)('Tandem UI: the timeline of a terminal and of an agent', () => {
  const fixture = useUiFixture({ width: 1280, height: 800 }, async ({ page, serve }) => {
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });
  let mcp: Client | undefined;
  let id = '';

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
  });

  async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const result = await mcp!.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
    const structured = result.structuredContent as Record<string, unknown>;
    return result.isError ? { isError: true, ...structured } : structured;
  }

  const panel = (page: Page): Locator => page.getByRole('region', { name: 'Timeline' });
  const entries = (page: Page): Locator => panel(page).locator('li.entry');
  async function entryTexts(page: Page): Promise<string[]> {
    return (await entries(page).allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim());
  }
  const timelineFile = async (fx: UiFixture): Promise<string> => {
    const store = fx.serve.host.recordings();
    const info = (await store.list()).filter((r) => r.terminalId === id).at(-1)!;
    return join(store.dir, `${info.id}.timeline.jsonl`);
  };

  it('shows an approval, an edit, a rejection and a handoff in order, and filters them', async () => {
    const { page, serve } = fixture;
    const token = serve.agents.tokens.pair('codex');
    mcp = new Client({ name: 'timeline-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${serve.origin}/mcp`), { requestInit: { headers: serve.agentHeaders(token) } }));

    id = await openTerminal(page);
    await waitForPrompt(page, id);
    await typeLine(page, 'echo mark-target-$((6*7))');
    await waitForScreen(page, id, /^mark-target-42$/m);
    // Enough lines to push the first command out of the viewport.
    await typeLine(page, 'seq -f "fill-%g" 1 120');
    await waitForScreen(page, id, /^fill-120$/m);
    await waitForPrompt(page, id);

    serve.host.handToAgent(id, 'codex');
    const question = page.getByRole('group', { name: 'Command from codex' });

    const approved = call('terminal_send', { id, text: 'printf approved-one', waitMs: 50_000 });
    await question.waitFor();
    await question.getByRole('button', { name: 'Approve', exact: true }).click();
    await question.waitFor({ state: 'detached' });
    expect(await approved).toMatchObject({ status: 'done' });

    const edited = call('terminal_send', { id, text: 'printf hi', waitMs: 50_000 });
    await question.waitFor();
    await question.getByRole('button', { name: 'Edit then approve…' }).click();
    await question.getByRole('textbox', { name: 'Command to approve' }).fill('printf edited-two');
    await question.getByRole('button', { name: 'Approve edited command' }).click();
    await question.waitFor({ state: 'detached' });
    expect(await edited).toMatchObject({ status: 'done', command: 'printf edited-two' });

    const rejected = call('terminal_send', { id, text: 'printf nope', waitMs: 50_000 });
    await question.waitFor();
    await question.getByRole('button', { name: 'Reject…' }).click();
    await question.getByRole('textbox', { name: 'Reason for rejecting' }).fill('not on the main branch');
    await question.getByRole('button', { name: 'Reject', exact: true }).click();
    await question.waitFor({ state: 'detached' });
    expect(await rejected).toMatchObject({ isError: true });

    serve.host.takeControl(id);
    serve.host.handBack(id, { note: 'tests pass now, carry on' });
    // The edited command's record is written at its end (bash names it after the end marker).
    await expect.poll(async () => readFileSync(await timelineFile(fixture), 'utf8'), { timeout: 15_000 }).toMatch(/"kind":"hand_back"/);
    await expect.poll(async () => readFileSync(await timelineFile(fixture), 'utf8'), { timeout: 15_000 }).toContain('"command":"printf edited-two"');

    // The terminal's menu opens its timeline.
    await page.locator(`#pane-${id} .xterm`).click({ button: 'right' });
    await page.getByRole('menu', { name: 'Terminal' }).getByRole('menuitem', { name: 'Timeline…' }).click();
    await panel(page).waitFor();
    await expect.poll(() => entries(page).count(), { timeout: 15_000 }).toBeGreaterThan(5);
    const texts = await entryTexts(page);
    const index = (pattern: RegExp): number => texts.findIndex((text) => pattern.test(text));
    const approval = index(/Command printf approved-one succeeded .*by codex \(handoff\) approved by the person/);
    const edit = index(/Command printf edited-two succeeded .*by codex \(handoff\) edited by the person/);
    const rejection = index(/Rejected printf nope rejected .*rejected by you.*reason not on the main branch/);
    const handoff = index(/Handoff You handed control back .*note tests pass now, carry on/);
    const person = index(/Command echo mark-target-\$\(\(6\*7\)\) succeeded by you .*exit 0/);
    expect({ approval, edit, rejection, handoff, person }, texts.join('\n')).toSatisfy((found: Record<string, number>) =>
      Object.values(found).every((i) => i >= 0),
    );
    expect(person).toBeLessThan(approval);
    expect(approval).toBeLessThan(edit);
    expect(edit).toBeLessThan(rejection);
    expect(rejection).toBeLessThan(handoff);
    // Handed to codex before the approval; the approval was asked for first.
    expect(index(/Handoff Handed to an agent .*to codex/)).toBeLessThan(approval);
    expect(index(/Approval asked printf approved-one/)).toBeLessThan(approval);
    expect(await panel(page).locator('.chain-broken').count()).toBe(0);
    await screenshots(fixture, 'terminal');

    // Filters: outcome, then who.
    await panel(page).getByRole('combobox', { name: 'Filter by outcome' }).selectOption('rejected');
    await expect.poll(() => entryTexts(page)).toEqual([expect.stringMatching(/^.*Rejected printf nope/)]);
    await panel(page).getByRole('combobox', { name: 'Filter by outcome' }).selectOption('ok');
    await panel(page).getByRole('combobox', { name: 'Filter by who' }).selectOption('codex');
    await expect.poll(async () => (await entryTexts(page)).map((t) => /Command (\S+ \S+)/.exec(t)?.[1])).toEqual(['printf approved-one', 'printf edited-two']);
    await panel(page).getByRole('combobox', { name: 'Filter by who' }).selectOption('person');
    await expect.poll(async () => (await entryTexts(page)).map((t) => /Command (\S+ \S+)/.exec(t)?.[1])).toEqual(['echo mark-target-$((6*7))', 'seq -f']);
    await panel(page).getByRole('combobox', { name: 'Filter by who' }).selectOption('all');
    await panel(page).getByRole('combobox', { name: 'Filter by outcome' }).selectOption('all');

    // A click on the person's first command, with another tab selected: its tab, scrolled to the command's line.
    await page.getByRole('button', { name: 'New terminal', exact: true }).click();
    await expect.poll(async () => page.locator('[role="tab"][aria-selected="true"]').getAttribute('data-terminal-id')).not.toBe(id);
    await panel(page).waitFor();
    const before = await viewport(page, id);
    expect(before.viewportY).toBe(before.baseY);
    const target = await viewport(page, id, 'echo mark-target');
    expect(target.line).toBeLessThan(before.baseY);
    await entries(page).filter({ hasText: 'echo mark-target' }).getByRole('button').click();
    await panel(page).waitFor({ state: 'hidden' });
    await expect.poll(() => page.locator('[role="tab"][aria-selected="true"]').getAttribute('data-terminal-id')).toBe(id);
    await expect.poll(async () => (await viewport(page, id)).viewportY).toBe(target.line);
  }, 180_000);

  it('shows one agent across its terminals from its card', async () => {
    const { page } = fixture;
    if (await panel(page).isVisible()) await page.keyboard.press('Escape');
    const agentsButton = page.getByRole('button', { name: /^Agents/ });
    await agentsButton.click();
    const card = page.getByRole('article', { name: 'Agent codex' });
    await card.getByRole('button', { name: 'Timeline' }).click();
    await panel(page).waitFor();
    await expect.poll(() => panel(page).getByRole('heading').textContent()).toBe('Timeline of agent codex');
    await expect.poll(() => entries(page).count(), { timeout: 15_000 }).toBeGreaterThan(3);
    const texts = await entryTexts(page);
    // Only codex's records of the person's terminal (its commands, the handoffs to it), not the person's own commands.
    expect(texts.some((t) => t.includes('printf edited-two'))).toBe(true);
    expect(texts.some((t) => t.includes('echo mark-target'))).toBe(false);
    await screenshots(fixture, 'agent');
    await page.keyboard.press('Escape');
    await panel(page).waitFor({ state: 'hidden' });
    await agentsButton.click();
  });

  it('says so when a terminal has nothing recorded (recording off)', async () => {
    const { page, serve } = fixture;
    if (await panel(page).isVisible()) await page.keyboard.press('Escape');
    serve.host.settings.update({ recording: false });
    const unrecorded = await openTerminal(page);
    await waitForPrompt(page, unrecorded);
    await page.locator(`#pane-${unrecorded} .xterm`).click({ button: 'right' });
    await page.getByRole('menu', { name: 'Terminal' }).getByRole('menuitem', { name: 'Timeline…' }).click();
    await panel(page).getByText('Nothing recorded yet in this terminal').waitFor();
    expect(await entries(page).count()).toBe(0);
    await page.keyboard.press('Escape');
    await panel(page).waitFor({ state: 'hidden' });
    serve.host.settings.update({ recording: true });
    await page.locator(`[role="tab"][data-terminal-id="${id}"]`).click();
    await page.locator(`#pane-${id}`).waitFor();
  });

  it('reports a timeline record changed on disk', async () => {
    const { page } = fixture;
    if (await panel(page).isVisible()) await page.keyboard.press('Escape');
    const file = await timelineFile(fixture);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('not on the main branch');
    writeFileSync(file, text.replace('not on the main branch', 'fine by me, go ahead'));
    await page.locator(`#pane-${id} .xterm`).click({ button: 'right' });
    await page.getByRole('menu', { name: 'Terminal' }).getByRole('menuitem', { name: 'Timeline…' }).click();
    await panel(page).waitFor();
    const warning = panel(page).locator('.chain-broken');
    await warning.waitFor();
    const lines = text.trimEnd().split('\n');
    const changed = lines.findIndex((line) => line.includes('not on the main branch')) + 1;
    // The chain breaks at the record after the changed one (its prev no longer matches).
    await expect.poll(() => warning.textContent()).toMatch(new RegExp(`This timeline was changed after it was written.*breaks at record ${changed + 1}\\b`));
    await expect.poll(() => panel(page).locator('li.entry.suspect').count()).toBeGreaterThan(0);
    // The changed record itself (the chain cannot tell it from the one after) and those after it; not those before.
    expect(await panel(page).locator('li.entry.suspect[data-type="rejection"]').count()).toBe(1);
    expect(await panel(page).locator('li.entry.suspect', { hasText: 'echo mark-target' }).count()).toBe(0);
    await screenshots(fixture, 'tampered');
  });
});
