import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Locator } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, screenshotPath, skipReason } from './helpers/browser';
import { useUiFixture } from './helpers/ui-fixture';
import { activeTerminalId, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';
import { hostLook, shots } from './helpers/shots';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

type ToolResult = Record<string, unknown> & { isError?: boolean };

/** Long enough for held-back input to have reached the host, had it been sent. */
const settleMs = 800;

/**
 * The agents panel and the questions agents put to the person, against a real `tandem serve`
 * (in process) and a real MCP client over HTTP with the token the UI showed.
 */
describe.skipIf(!runUi)('Tandem UI: agents, approvals and handoff', () => {
  const ui = useUiFixture({ width: 1280, height: 780 }, async ({ serve, page }) => {
    await page.goto(testUrl(serve.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
  });
  let mcp: Client | undefined;
  let token = '';
  /** The agent's terminal (opened through MCP). */
  let agentTerminal = '';
  /** The person's own terminal. */
  let ownTerminal = '';

  const agentsButton = (): Locator => ui.page.getByRole('button', { name: /^Agents/ });
  const panel = (): Locator => ui.page.getByRole('complementary', { name: 'Agents' });
  const bar = (): Locator => ui.page.locator('[role="tabpanel"]:visible').getByRole('group', { name: 'Control of this terminal' });
  const control = (id: string): string => ui.serve.host.get(id).meta.control;

  async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const result = await mcp!.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
    const structured = result.structuredContent as Record<string, unknown>;
    return result.isError ? { isError: true, ...structured } : structured;
  }

  async function openPanel(): Promise<void> {
    if (!(await panel().isVisible())) await agentsButton().click();
    await panel().waitFor();
  }

  async function closePanel(): Promise<void> {
    if (await panel().isVisible()) await agentsButton().click();
    await panel().waitFor({ state: 'hidden' });
  }

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
  });

  it('pairs an agent: ready-to-copy configurations and the token, shown once', async () => {
    await openPanel();
    await panel().getByText('No agent is paired yet').waitFor();
    await panel().getByRole('textbox', { name: 'Name of the agent to pair' }).fill('codex');
    await panel().getByRole('button', { name: 'Pair', exact: true }).click();

    const result = panel().getByRole('region', { name: 'Configuration for codex' });
    await result.waitFor();
    await result.getByText('The token is shown only this once').waitFor();
    token = (await result.getByLabel('Token', { exact: true }).textContent())!.trim();
    expect(token.length).toBeGreaterThan(20);
    expect(ui.serve.agents.tokens.identify(token)).not.toBeNull();
    // One configuration open at a time, each with the token and a copy button.
    for (const client of ['Claude Code', 'Codex', 'Gemini CLI', 'Cursor', 'Other MCP clients']) {
      const config = result.getByRole('listitem', { name: new RegExp(`^${client}.* configuration$`) });
      const toggle = config.getByRole('button', { name: new RegExp(`^${client}`) });
      if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
      await expect.poll(() => config.locator('pre').textContent()).toContain(token);
      await config.getByRole('button', { name: 'Copy' }).waitFor();
    }
    await result.getByRole('button', { name: /^Claude Code/ }).click();

    // The paired agent is listed with its policy (the default asks unless allow-listed).
    const card = panel().getByRole('article', { name: 'Agent codex' });
    await card.waitFor();
    await expect.poll(() => card.getByRole('combobox', { name: 'Approval policy for codex' }).inputValue()).toBe('ask-unless-allowed');
    expect(ui.serve.agents.state().paired.map((agent) => agent.name)).toEqual(['codex']);

    // The MCP client uses the token the UI showed.
    mcp = new Client({ name: 'ui-agents-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ui.serve.origin}/mcp`), { requestInit: { headers: ui.serve.agentHeaders(token) } }));
    await expect.poll(() => card.textContent()).toMatch(/connected · paired/);
    await ui.page.screenshot({ path: screenshotPath('ui-agents-panel') });

    await result.getByRole('button', { name: 'Done, hide the token' }).click();
    await expect.poll(() => ui.page.getByText(token).count()).toBe(0);
  });

  it("shows the agent's project and changes it in the panel (issue 23: the person's decision)", async () => {
    const card = panel().getByRole('article', { name: 'Agent codex' });
    const row = card.getByLabel('Project of codex');
    // Its first session claimed the fixture's project folder (the bridge header): kept as its project.
    const first = ui.serve.agents.state().paired[0]!.project;
    await expect.poll(() => row.textContent()).toContain(first ?? 'none yet');
    const chosen = mkdtempSync(join(tmpdir(), 'tandem-chosen-project-'));
    await row.getByRole('button', { name: 'Change…' }).click();
    await row.getByRole('textbox', { name: 'Project folder of codex' }).fill(chosen);
    await row.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => ui.serve.agents.state().paired[0]!.project).toBe(realpathSync(chosen));
    await expect.poll(() => row.textContent()).toContain(realpathSync(chosen));
    // A folder that is not there is refused, and the project stays.
    await row.getByRole('button', { name: 'Change…' }).click();
    await row.getByRole('textbox', { name: 'Project folder of codex' }).fill(join(chosen, 'missing'));
    await row.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => ui.page.getByText(/project: there is no folder at/).count()).toBeGreaterThan(0);
    expect(ui.serve.agents.state().paired[0]!.project).toBe(realpathSync(chosen));
    await row.getByRole('button', { name: 'Cancel' }).click();
    // Back to the first, for the tests after this one.
    const codex = ui.serve.agents.state().paired[0]!;
    ui.serve.agents.setAgentPolicy({ name: 'codex', policy: codex.policy, allow: codex.allow, deny: codex.deny, project: first ?? ui.serve.project });
    rmSync(chosen, { recursive: true, force: true });
  });

  it('edits the policy lists of a paired agent', async () => {
    const card = panel().getByRole('article', { name: 'Agent codex' });
    await card.getByText(/^Allow list \(\d+\) and deny list/).click();
    await card.getByRole('textbox', { name: 'Add to deny list' }).fill('git push');
    await card.getByRole('group', { name: 'Deny list' }).getByRole('button', { name: 'Add' }).click();
    await expect.poll(() => ui.serve.agents.state().paired[0]!.deny).toContain('git push');
    await card.getByRole('button', { name: 'Remove git push' }).click();
    await expect.poll(() => ui.serve.agents.state().paired[0]!.deny).not.toContain('git push');

    await card.getByRole('combobox', { name: 'Approval policy for codex' }).selectOption('ask');
    await expect.poll(() => ui.serve.agents.state().paired[0]!.policy).toBe('ask');
    await card.getByRole('combobox', { name: 'Approval policy for codex' }).selectOption('ask-unless-allowed');
    await expect.poll(() => ui.serve.agents.state().paired[0]!.policy).toBe('ask-unless-allowed');
    await closePanel();
  });

  it('shows a pairing request as a banner; Allow once answers it', async () => {
    const requestId = ui.serve.agents.pairing.request({ name: 'gemini', pid: 4242, exe: '/usr/bin/gemini', cwd: '/tmp/project' });
    const banner = ui.page.getByRole('region', { name: 'Questions from agents' }).getByRole('group', { name: 'Pairing request from gemini' });
    await banner.waitFor();
    // Who asks, in words a person checks (issue 28): the program, the folder, the process.
    // What the kernel verified comes first and apart (a request made inside the host has nothing verified); then the claims.
    await expect
      .poll(() => banner.textContent())
      .toMatch(
        /asks to use your terminals as gemini\.\s*User\s*not verified\s*Process\s*not verified\s*Program\s*not verified\s*Claimed by the requesting process \(Tandem cannot verify these\):\s*Program\s*gemini \(\/usr\/bin\/gemini\)\s*Started in\s*\/tmp\/project\s*Process\s*4242\s*Did you just start gemini in that folder\?/,
      );
    await expect.poll(() => agentsButton().getAttribute('aria-label')).toBe('Agents, 1 waiting for you');

    await banner.getByRole('button', { name: 'Allow once' }).click();
    await banner.waitFor({ state: 'detached' });
    expect(ui.serve.agents.state().pairings).toEqual([]);
    expect(ui.serve.agents.pairing.poll(requestId)).toMatchObject({ state: 'allowed', persistent: false, name: 'gemini' });
    // Allowed once is not paired.
    expect(ui.serve.agents.state().paired.map((agent) => agent.name)).toEqual(['codex']);
    await expect.poll(() => agentsButton().getAttribute('aria-label')).toBe('Agents');
  });

  // The claims are the requester's own words: a folder named with a right-to-left override read
  // as another folder on the card (the class found black-box in round 4, on the handoff card).
  it("draws a pairing request's control and bidi characters as visible tokens, never as they would act", async () => {
    const requestId = ui.serve.agents.pairing.request({ name: 'mimic', pid: 4243, exe: '/usr/bin/cl\u202eedua', cwd: '/tmp/evil\u202etcejorp\x1b[8m' });
    const banner = ui.page.getByRole('region', { name: 'Questions from agents' }).getByRole('group', { name: 'Pairing request from mimic' });
    await banner.waitFor();
    const text = (await banner.textContent()) ?? '';
    expect(text).not.toMatch(/[\u202e\x1b]/);
    expect(text).toContain('cl\\u{202e}edua');
    expect(text).toContain('/tmp/evil\\u{202e}tcejorp\\x1b[8m');
    await banner.getByRole('button', { name: 'Deny' }).click();
    await banner.waitFor({ state: 'detached' });
    expect(ui.serve.agents.pairing.poll(requestId)).toMatchObject({ state: 'denied' });
  });

  it('asks to approve an agent command; Edit then approve runs the edited command', async () => {
    // The person's own terminal first, so that the terminal link has somewhere to switch from.
    await ui.page.getByRole('button', { name: 'New terminal', exact: true }).click();
    ownTerminal = await activeTerminalId(ui.page);
    await waitForPrompt(ui.page, ownTerminal);

    const opened = await call('terminal_open', { title: 'codex: build' });
    agentTerminal = opened.id as string;
    expect(opened).toMatchObject({ origin: 'agent', agent: 'codex' });
    await ui.page.locator(`[role="tab"][data-terminal-id="${agentTerminal}"]`).waitFor();
    expect(await activeTerminalId(ui.page)).toBe(ownTerminal);

    const sent = call('terminal_send', { id: agentTerminal, text: 'printf hi', waitMs: 50_000 });
    const question = ui.page.getByRole('group', { name: 'Command from codex' });
    await question.waitFor();
    await expect.poll(() => question.getByLabel('Command', { exact: true }).textContent()).toBe('printf hi');
    await question.getByRole('button', { name: 'codex: build' }).click();
    await expect.poll(() => activeTerminalId(ui.page)).toBe(agentTerminal);
    await waitForPrompt(ui.page, agentTerminal);
    await ui.page.screenshot({ path: screenshotPath('ui-approval') });

    await question.getByRole('button', { name: 'Edit then approve…' }).click();
    const editor = question.getByRole('textbox', { name: 'Command to approve' });
    await expect.poll(() => editor.inputValue()).toBe('printf hi');
    await editor.fill('printf edited');
    await ui.page.screenshot({ path: screenshotPath('ui-approval-edit') });
    await question.getByRole('button', { name: 'Approve edited command' }).click();
    await question.waitFor({ state: 'detached' });

    const result = await sent;
    expect(result).toMatchObject({ status: 'done', command: 'printf edited', output: 'edited', approval: { state: 'edited' } });
    await waitForScreen(ui.page, agentTerminal, /edited/);
  }, 90_000);

  it('rejects a command with a reason, which reaches the agent', async () => {
    const sent = call('terminal_send', { id: agentTerminal, text: 'printf nope', waitMs: 50_000 });
    const question = ui.page.getByRole('group', { name: 'Command from codex' });
    await question.waitFor();
    await question.getByRole('button', { name: 'Reject…' }).click();
    await question.getByRole('textbox', { name: 'Reason for rejecting' }).fill('not on the main branch');
    await question.getByRole('button', { name: 'Reject', exact: true }).click();
    await question.waitFor({ state: 'detached' });
    const result = await sent;
    expect(result.isError).toBe(true);
    expect(result.error).toMatchObject({ code: 'rejected' });
    expect((result.error as { message: string }).message).toContain('not on the main branch');
  }, 90_000);

  it('a command longer than its box is approved only once its end was in view; a long run of spaces shows as one token', async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `echo line-${i}`);
    const sent = call('terminal_send', { id: agentTerminal, text: lines.join('\n'), waitMs: 50_000 });
    const question = ui.page.getByRole('group', { name: 'Command from codex' });
    await question.waitFor();
    const approve = question.getByRole('button', { name: /^Approve/ });
    await question.getByText('Longer than the box shows: scroll to its end to approve.').waitFor();
    expect(await approve.isDisabled()).toBe(true);
    expect(await question.getByRole('button', { name: 'Edit then approve…' }).isDisabled()).toBe(true);
    await ui.page.screenshot({ path: screenshotPath('ui-approval-unseen'), animations: 'disabled' });
    // Enter, the card's own key, approves nothing either.
    await question.getByLabel('Command', { exact: true }).click();
    await ui.page.keyboard.press('Enter');
    await ui.page.waitForTimeout(300);
    expect(await question.isVisible()).toBe(true);
    expect(ui.serve.host.get(agentTerminal).view().status).toBe('idle');
    await question.getByLabel('Command', { exact: true }).evaluate((box) => box.scrollTo({ top: box.scrollHeight }));
    await expect.poll(() => approve.isDisabled()).toBe(false);
    await approve.click();
    const result = await sent;
    expect(result).toMatchObject({ status: 'done', approval: { state: 'approved' } });
    expect(result.output).toContain('line-29');

    const padded = call('terminal_send', { id: agentTerminal, text: `echo ok${' '.repeat(3000)}; printf padded-tail`, waitMs: 50_000 });
    await question.waitFor();
    const command = question.getByLabel('Command', { exact: true });
    await expect.poll(() => command.textContent()).toBe('echo ok␣×3000; printf padded-tail');
    await command.getByLabel('3000 spaces').waitFor();
    expect(await approve.isDisabled()).toBe(false);
    await question.getByRole('button', { name: 'Reject…' }).click();
    await question.getByRole('button', { name: 'Reject', exact: true }).click();
    expect(await padded).toMatchObject({ isError: true, error: { code: 'rejected' } });
  }, 90_000);

  it('shows control characters visibly, lists env variables of an open, and logs what ran without asking', async () => {
    const sent = call('terminal_send', { id: agentTerminal, text: "printf 'a\tb'", waitMs: 50_000 });
    const question = ui.page.getByRole('group', { name: 'Command from codex' });
    await question.waitFor();
    const command = question.getByLabel('Command', { exact: true });
    await expect.poll(() => command.textContent()).toBe("printf 'a\\tb'");
    await command.getByLabel('TAB (U+0009)').waitFor();
    await question.getByLabel('Why it asks').waitFor();
    await ui.page.screenshot({ path: screenshotPath('ui-approval-control') });
    await question.getByRole('button', { name: 'Reject…' }).click();
    await question.getByRole('button', { name: 'Reject', exact: true }).click();
    expect(await sent).toMatchObject({ isError: true, error: { code: 'rejected' } });

    const before = ui.serve.host.list().length;
    const opening = call('terminal_open', { title: 'codex: env', env: { GIT_PAGER: 'less', NO_COLOR: '1' } });
    const open = ui.page.getByRole('group', { name: 'Terminal from codex' });
    await open.waitFor();
    await expect.poll(() => open.getByRole('list', { name: 'Environment variables' }).textContent()).toBe('GIT_PAGER=less');
    expect(await open.getByRole('button', { name: 'Edit then approve…' }).count()).toBe(0);
    expect(ui.serve.host.list().length).toBe(before);
    await ui.page.screenshot({ path: screenshotPath('ui-approval-env') });
    await open.getByRole('button', { name: 'Reject…' }).click();
    await open.getByRole('button', { name: 'Reject', exact: true }).click();
    expect(await opening).toMatchObject({ isError: true, error: { code: 'rejected' } });
    expect(ui.serve.host.list().length).toBe(before);

    // A variable longer than its box: the tail (what the pager really runs) must have been in view.
    const pager = `less ${'-R'.repeat(600)} ; cat ~/.ssh/id_rsa`;
    const longOpen = call('terminal_open', { title: 'codex: env', env: { GIT_PAGER: pager } });
    await open.waitFor();
    const variable = open.getByRole('list', { name: 'Environment variables' }).getByRole('listitem');
    await expect.poll(() => variable.textContent()).toBe(`GIT_PAGER=${pager}`);
    const approveOpen = open.getByRole('button', { name: /^Approve/ });
    await open.getByText('Longer than the box shows: scroll to its end to approve.').waitFor();
    expect(await approveOpen.isDisabled()).toBe(true);
    await variable.evaluate((box) => box.scrollTo({ top: box.scrollHeight }));
    await expect.poll(() => approveOpen.isDisabled()).toBe(false);
    await open.getByRole('button', { name: 'Reject…' }).click();
    await open.getByRole('button', { name: 'Reject', exact: true }).click();
    expect(await longOpen).toMatchObject({ isError: true, error: { code: 'rejected' } });
    expect(ui.serve.host.list().length).toBe(before);

    expect(await call('terminal_send', { id: agentTerminal, text: 'pwd', waitMs: 20_000 })).toMatchObject({ status: 'done', approval: null });
    await openPanel();
    const card = panel().getByRole('article', { name: 'Agent codex' });
    await card.getByText(/^Ran without asking \(\d+\)/).click();
    await expect.poll(() => card.getByRole('list', { name: 'Ran without asking by codex' }).locator('code').first().textContent()).toBe('pwd');
    await closePanel();
  }, 90_000);

  it('asks the person to take over; Take over switches control and focus, Hand back returns it', async () => {
    await ui.page.locator(`[role="tab"][data-terminal-id="${ownTerminal}"]`).click();
    const handoff = call('terminal_handoff', { id: agentTerminal, message: 'please log in to npm', waitMs: 50_000 });
    const banner = ui.page.getByRole('group', { name: 'Handoff request from codex' });
    await banner.waitFor();
    await expect.poll(() => banner.textContent()).toMatch(/codex asks you to take over:\s*please log in to npm/);
    await expect.poll(() => agentsButton().getAttribute('aria-label')).toBe('Agents, 1 waiting for you');

    await banner.getByRole('button', { name: 'Take over' }).click();
    await banner.waitFor({ state: 'detached' });
    await expect.poll(() => activeTerminalId(ui.page)).toBe(agentTerminal);
    await expect.poll(() => ui.serve.host.list().find((terminal) => terminal.id === agentTerminal)?.control).toBe('user');
    await bar().getByText('You have control').waitFor();
    // The agent's words stay in view while the person works.
    await expect
      .poll(() => ui.page.locator('[role="tabpanel"]:visible [data-testid="handoff-message"]').textContent())
      .toBe('codex asked you: please log in to npm');
    // The keyboard is in the agent's terminal: the person types right away.
    await expect.poll(() => ui.page.evaluate(() => document.activeElement?.closest('[role="tabpanel"]')?.id)).toBe(`pane-${agentTerminal}`);
    await ui.page.keyboard.type('echo by-person');
    await ui.page.keyboard.press('Enter');
    await waitForScreen(ui.page, agentTerminal, /^by-person$/m);

    await bar().getByRole('button', { name: 'Hand back to codex' }).click();
    await bar().getByText('Agent codex is driving').waitFor();
    const result = await handoff;
    expect(result).toMatchObject({ control: 'agent', handoff: { state: 'returned', note: null } });
    expect((result.handoff as { summary: string }).summary).toContain('echo by-person');
    expect(control(agentTerminal)).toBe('agent');
    // Handed back without sharing: the bar says the person's output stays theirs, until the
    // agent's next command (nothing of the person's runs on).
    const kept = bar().locator('[data-kept-private]');
    await kept.waitFor();
    expect(await kept.getAttribute('title')).toContain('kept from codex');
    for (const [width, height] of [
      [800, 600],
      [1280, 780],
    ] as const) {
      await ui.page.setViewportSize({ width, height });
      await ui.page.screenshot({ path: screenshotPath(`ui-kept-private-${width}x${height}`) });
    }
    expect(JSON.stringify(await call('terminal_list', {}))).not.toContain('keptPrivate');
    expect(await call('terminal_send', { id: agentTerminal, text: 'pwd', waitMs: 20_000 })).toMatchObject({ status: 'done', approval: null });
    await kept.waitFor({ state: 'detached' });
  }, 90_000);

  it('declines a handoff with a note, which reaches the agent', async () => {
    const handoff = call('terminal_handoff', { id: agentTerminal, message: 'one more thing', waitMs: 50_000 });
    const banner = ui.page.getByRole('group', { name: 'Handoff request from codex' });
    await banner.getByRole('button', { name: 'Decline…' }).click();
    await banner.getByRole('textbox', { name: 'Note for the agent' }).fill('not now, the build is running');
    await banner.getByRole('button', { name: 'Decline', exact: true }).click();
    expect(await handoff).toMatchObject({ control: 'agent', handoff: { state: 'declined', note: 'not now, the build is running' } });
    expect(control(agentTerminal)).toBe('agent');
  });

  it('hands the person’s terminal to a paired agent chosen from a list', async () => {
    await ui.page.locator(`[role="tab"][data-terminal-id="${ownTerminal}"]`).click();
    const choice = ui.page.getByRole('combobox', { name: 'Agent to hand this terminal to' });
    await expect.poll(async () => (await choice.locator('option:not([disabled])').allTextContents()).map((text) => text.trim())).toEqual(['codex · connected']);
    await choice.selectOption('codex');
    await ui.page.getByRole('button', { name: 'Hand to agent' }).click();
    // codex runs sandboxed (the default for new pairings); the person's own terminal is not.
    const confirm = ui.page.getByRole('dialog', { name: /Hand an unsandboxed terminal to “codex”/ });
    await confirm.waitFor();
    expect(ui.serve.host.get(ownTerminal).meta.handedTo).toBeNull();
    await confirm.getByRole('button', { name: 'Hand over unsandboxed' }).click();
    await bar().getByText('Agent codex is driving').waitFor();
    expect(ui.serve.host.get(ownTerminal).meta).toMatchObject({ handedTo: 'codex', control: 'agent' });
    await bar().getByRole('button', { name: 'Take back' }).click();
    await ui.page.getByRole('switch', { name: 'Share with agents' }).waitFor();
    expect(ui.serve.host.get(ownTerminal).meta).toMatchObject({ handedTo: null, control: 'user' });
  });

  it('holds typing back when typing does not take over, and keeps the settings', async () => {
    const host = ui.serve.host;
    const inputs: string[] = [];
    const original = host.input.bind(host);
    host.input = async (attachmentId, data, typed) => {
      inputs.push(data);
      return await original(attachmentId, data, typed);
    };
    try {
      await ui.page.getByRole('button', { name: 'Settings' }).click();
      const dialog = ui.page.getByRole('dialog', { name: 'Settings' });
      const takesOver = dialog.getByRole('checkbox', { name: "Typing into an agent's terminal takes over" });
      expect(await takesOver.isChecked()).toBe(true);
      await takesOver.uncheck();
      await ui.page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });

      await ui.page.locator(`[role="tab"][data-terminal-id="${agentTerminal}"]`).click();
      await bar().getByText('press Take over to type').waitFor();
      inputs.length = 0;
      await typeLine(ui.page, 'echo held-back');
      await ui.page.getByTestId('held-input-hint').waitFor();
      await ui.page.waitForTimeout(settleMs);
      expect(inputs).toEqual([]);
      expect(control(agentTerminal)).toBe('agent');

      // Kept across a reload.
      await ui.page.reload();
      await ui.page.locator('[data-connection="connected"]').waitFor();
      await ui.page.getByRole('button', { name: 'Settings' }).click();
      // "connected" shows before the page has its settings: the box follows them when they come.
      await expect
        .poll(() => ui.page.getByRole('dialog', { name: 'Settings' }).getByRole('checkbox', { name: "Typing into an agent's terminal takes over" }).isChecked())
        .toBe(false);

      // A larger font gives the terminal fewer columns.
      await ui.page.locator(`[role="tab"][data-terminal-id="${ownTerminal}"]`).click();
      await ui.page.getByRole('button', { name: 'Settings' }).click();
      await ui.page.getByRole('dialog', { name: 'Settings' }).waitFor();
      const cols = (): number => host.list().find((terminal) => terminal.id === ownTerminal)!.cols;
      const before = cols();
      for (let i = 0; i < 4; i++) await ui.page.getByRole('button', { name: 'Larger font' }).click();
      await expect.poll(cols).toBeLessThan(before);
      await ui.page.getByRole('button', { name: 'Reset to defaults' }).click();
      await expect.poll(cols).toBe(before);
      // The host keeps them (for every window), not this browser.
      await expect.poll(() => host.settings.get()).toMatchObject({ typingTakesOver: true, fontSize: 14 });
      expect(await ui.page.evaluate(() => localStorage.getItem('tandem.settings'))).toBeNull();
      await ui.page.keyboard.press('Escape');
    } finally {
      host.input = original;
    }
  });

  it('fits the panel at 800x600 with long allow entries: nothing cut or overflowing, Network whole, the sandbox explained once', async () => {
    const long = [
      'npm run build:production-bundle-with-sourcemaps',
      'git log | options: --format=%H%x20%an%x20%s --max-count=5000 --no-merges | operands: any',
    ];
    for (const name of ['reviewer-with-a-long-name', 'second-agent']) {
      ui.serve.agents.pairAgent({ name });
      ui.serve.agents.setAgentPolicy({ name, policy: 'ask-unless-allowed', allow: long, sandbox: 'workspace-write', network: true });
    }
    try {
      await ui.page.setViewportSize({ width: 800, height: 600 });
      await openPanel();
      for (const name of ['reviewer-with-a-long-name', 'second-agent']) {
        const card = panel().getByRole('article', { name: `Agent ${name}` });
        await card.getByText(/^Allow list \(\d+\) and deny list/).click();
        await card.getByText(long[1]!).waitFor();
        // The checkbox's label reads whole: its text is not clipped by its box.
        const network = card.locator('label.network');
        expect((await network.innerText()).trim()).toBe('Network');
        expect(await network.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
      }
      // Nothing in the panel is wider than the panel shows (a long entry wraps instead).
      const overflowing = await panel().evaluate((root) => {
        const box = root.getBoundingClientRect();
        const wide: string[] = [];
        if (root.scrollWidth > root.clientWidth + 1) wide.push(`panel ${root.scrollWidth} > ${root.clientWidth}`);
        for (const el of root.querySelectorAll<HTMLElement>('*')) {
          const rect = el.getBoundingClientRect();
          if (rect.width === 0 || getComputedStyle(el).visibility === 'hidden') continue;
          if (rect.right > box.right + 1) wide.push(`${el.tagName}.${el.className}: ${(el.textContent ?? '').slice(0, 40)}`);
        }
        return wide;
      });
      expect(overflowing).toEqual([]);
      expect(await panel().getByLabel('What the sandbox does').count()).toBe(1);
      await shots(ui.page, 'issue28-agents-panel-long-entries', { looks: hostLook(ui.page, ui.serve.host.settings) });
      await closePanel();
    } finally {
      await ui.page.setViewportSize({ width: 1280, height: 780 });
      ui.serve.agents.revokeAgent({ name: 'reviewer-with-a-long-name' });
      ui.serve.agents.revokeAgent({ name: 'second-agent' });
    }
  });

  it('revokes an agent after confirmation', async () => {
    await openPanel();
    const card = panel().getByRole('article', { name: 'Agent codex' });
    await card.getByRole('button', { name: 'Revoke…' }).click();
    await ui.page.getByRole('dialog').getByRole('button', { name: 'Revoke', exact: true }).click();
    await card.waitFor({ state: 'detached' });
    expect(ui.serve.agents.state().paired).toEqual([]);
    expect(ui.serve.agents.tokens.identify(token)).toBeNull();
    // The agent allowed once earlier is listed until revoked, here too.
    const allowedOnce = panel().getByRole('list', { name: 'Agents allowed once' });
    expect(ui.serve.agents.state().allowedOnce.length).toBeGreaterThan(0);
    while (ui.serve.agents.state().allowedOnce.length > 0) {
      const left = ui.serve.agents.state().allowedOnce.length;
      await allowedOnce.getByRole('button', { name: 'Revoke' }).first().click();
      await expect.poll(() => ui.serve.agents.state().allowedOnce.length).toBe(left - 1);
    }
    await panel().getByText('No agent is paired yet').waitFor();
  });
});
