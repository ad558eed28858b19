import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, skipReason } from './helpers/browser';
import { activeTerminalId, screenText, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';
import { hostLook, shots } from './helpers/shots';
import { useUiFixture } from './helpers/ui-fixture';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

/** What a program like vim does to learn the background: ask (OSC 11) and read the reply. */
const askBackground = `stty -echo; printf '\\033]11;?\\007'; IFS= read -rs -d '\\' -t 5 r; r=\${r%$'\\033'}; stty echo; echo "bg=\${r#*;}"`;
const lightBg = /^bg=rgb:fafa\/fafa\/fafa$/m;
const darkBg = /^bg=rgb:0f0f\/1111\/1515$/m;

/** The context menu closes when the window resizes: it is opened again at each size. */
async function menuShots(page: Page, id: string, name: string): Promise<void> {
  const menu = page.getByRole('menu', { name: 'Terminal' });
  await shots(page, name, {
    before: async () => {
      const box = (await pane(page, id).locator('.xterm').boundingBox())!;
      await pane(page, id)
        .locator('.xterm')
        .click({ button: 'right', position: { x: box.width * 0.3, y: box.height * 0.3 } });
      await menu.waitFor();
    },
    after: async () => {
      await page.keyboard.press('Escape');
      await menu.waitFor({ state: 'detached' });
    },
  });
}

function pane(page: Page, id: string) {
  return page.locator(`#pane-${id}`);
}

async function typeInto(page: Page, id: string, line: string): Promise<void> {
  await pane(page, id).locator('.xterm').click();
  await pane(page, id)
    .locator('.xterm-helper-textarea')
    .evaluate((element) => {
      if (document.activeElement !== element) throw new Error('The clicked terminal does not have the keyboard.');
    });
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

async function viewportBackground(page: Page, id: string): Promise<string> {
  // xterm.js paints its theme's background on the scrollable element around the rows.
  return await pane(page, id)
    .locator('.xterm-scrollable-element')
    .evaluate((element) => getComputedStyle(element).backgroundColor);
}

async function openSettings(page: Page): Promise<void> {
  if (await page.getByRole('dialog', { name: 'Settings' }).isVisible()) return;
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByRole('dialog', { name: 'Settings' }).waitFor();
}

async function closeSettings(page: Page): Promise<void> {
  await page.keyboard.press('Escape');
  await page.getByRole('dialog', { name: 'Settings' }).waitFor({ state: 'detached' });
}

async function newTab(page: Page, known: string[]): Promise<string> {
  await page.getByRole('button', { name: 'New terminal', exact: true }).click();
  const selector = `[role="tab"][aria-selected="true"]${known.map((id) => `:not([data-terminal-id="${id}"])`).join('')}`;
  await page.locator(selector).waitFor();
  const id = await activeTerminalId(page);
  await waitForPrompt(page, id);
  return id;
}

describe.skipIf(!runUi)('Tandem UI: settings, theme, context menu and split view', () => {
  const ui = useUiFixture({ width: 1280, height: 800 }, async ({ page, serve }) => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: serve.origin });
  });
  const ids: string[] = [];

  it('shows the browser-safe shortcuts in the empty state, and Alt+Shift+N opens a terminal', async () => {
    const { page } = ui;
    await page.goto(testUrl(ui.serve.loginUrl));
    await page.getByRole('heading', { name: 'No terminals open' }).waitFor();
    const keys = page.getByTestId('shortcut-keys');
    await expect.poll(() => keys.textContent()).toContain('Alt+Shift+N');
    expect(await keys.textContent()).toContain('Alt+Shift+W');
    expect(await keys.textContent()).toContain('Ctrl+=');
    await shots(page, 'empty-dark');
    await page.keyboard.press('Alt+Shift+KeyN');
    ids.push(await activeTerminalId(page));
    await waitForPrompt(page, ids[0]!);
  });

  it('turns the terminal light with the light theme, and the host answers OSC 11 from it', async () => {
    const { page } = ui;
    const id = ids[0]!;
    await typeInto(page, id, askBackground);
    await waitForScreen(page, id, darkBg);
    expect(await viewportBackground(page, id)).toBe('rgb(15, 17, 21)');

    await openSettings(page);
    await page.getByLabel('Theme').selectOption('light');
    await expect.poll(() => viewportBackground(page, id)).toBe('rgb(250, 250, 250)');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
    // The page applies the change before the host has it.
    await expect.poll(() => ui.serve.host.settings.get().theme).toBe('light');
    await shots(page, 'settings-light');
    await closeSettings(page);

    await typeInto(page, id, 'clear; ' + askBackground);
    await waitForScreen(page, id, lightBg);
    await shots(page, 'terminal-light');
  });

  it('follows the system with the "system" theme: the page and the host\'s answers change with it', async () => {
    const { page } = ui;
    const id = ids[0]!;
    await page.emulateMedia({ colorScheme: 'dark' });
    ui.serve.host.settings.update({ theme: 'system' });
    await expect.poll(() => viewportBackground(page, id)).toBe('rgb(15, 17, 21)');
    await typeInto(page, id, 'clear; ' + askBackground);
    await waitForScreen(page, id, darkBg);
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(() => viewportBackground(page, id)).toBe('rgb(250, 250, 250)');
    await typeInto(page, id, 'clear; ' + askBackground);
    await waitForScreen(page, id, lightBg);
    ui.serve.host.settings.update({ theme: 'light' });
    await page.emulateMedia({ colorScheme: 'dark' });
  });

  it('flashes the view on a bell with the visual bell, and not with the bell off', async () => {
    const { page } = ui;
    const id = ids[0]!;
    await pane(page, id)
      .locator('.viewport')
      .evaluate((viewport) => {
        const counter = window as unknown as { flashes: number };
        counter.flashes = 0;
        new MutationObserver(() => {
          if (viewport.classList.contains('flashing')) counter.flashes += 1;
        }).observe(viewport, { attributes: true, attributeFilter: ['class'] });
      });
    const flashes = (): Promise<number> => page.evaluate(() => (window as unknown as { flashes: number }).flashes);
    expect(ui.serve.host.settings.get().bell).toBe('visual');
    await typeInto(page, id, `printf '\\a'; echo rang-1`);
    await waitForScreen(page, id, /^rang-1$/m);
    await expect.poll(flashes).toBe(1);
    ui.serve.host.settings.update({ bell: 'none' });
    await page.waitForTimeout(200);
    await typeInto(page, id, `printf '\\a'; echo rang-2`);
    await waitForScreen(page, id, /^rang-2$/m);
    await page.waitForTimeout(500);
    expect(await flashes()).toBe(1);
    ui.serve.host.settings.update({ bell: 'visual' });
  });

  it('grows the font with Ctrl+=, shrinks it with Ctrl+- and resets it with Ctrl+0 (the shell gets the new size)', async () => {
    const { page } = ui;
    const size = page.locator('footer [title="Columns × rows"]');
    const cols = async (): Promise<number> => Number((await size.textContent())!.split('×')[0]);
    // The size settles after a layout change (screenshots resized the window).
    let start = -1;
    await expect
      .poll(async () => {
        const before = start;
        await page.waitForTimeout(300);
        start = await cols();
        return start === before;
      })
      .toBe(true);
    await pane(page, ids[0]!).locator('.xterm').click();
    await page.keyboard.press('Control+Equal');
    await page.keyboard.press('Control+Equal');
    await expect.poll(() => ui.serve.host.settings.get().fontSize).toBe(16);
    await expect.poll(cols).toBeLessThan(start);
    await page.keyboard.press('Control+Digit0');
    await expect.poll(() => ui.serve.host.settings.get().fontSize).toBe(14);
    await expect.poll(cols).toBe(start);
    await page.keyboard.press('Control+Minus');
    await expect.poll(() => ui.serve.host.settings.get().fontSize).toBe(13);
    await expect.poll(cols).toBeGreaterThan(start);
    await page.keyboard.press('Control+Digit0');
    await expect.poll(() => ui.serve.host.settings.get().fontSize).toBe(14);
  });

  it('keeps settings across a reload and shares them with a second page at once', async () => {
    const { page } = ui;
    await openSettings(page);
    await page.getByLabel('Cursor').selectOption('bar');
    await expect.poll(() => ui.serve.host.settings.get().cursorStyle).toBe('bar');
    await closeSettings(page);

    const second = await page.context().newPage();
    try {
      await second.goto(testUrl(ui.serve.loginUrl));
      await second.locator(`[role="tab"][data-terminal-id="${ids[0]}"]`).waitFor();
      await expect.poll(() => second.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
      await openSettings(second);
      expect(await second.getByLabel('Cursor').inputValue()).toBe('bar');
      // A change on the second page reaches the first without a reload.
      await second.getByLabel('Theme').selectOption('dark');
      await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
      await expect.poll(() => viewportBackground(page, ids[0]!)).toBe('rgb(15, 17, 21)');
    } finally {
      await second.close();
    }

    await page.reload();
    await page.locator(`[role="tab"][data-terminal-id="${ids[0]}"]`).waitFor();
    await openSettings(page);
    expect(await page.getByLabel('Cursor').inputValue()).toBe('bar');
    expect(await page.getByLabel('Theme').inputValue()).toBe('dark');
    await closeSettings(page);
  });

  it('moves settings an older version kept in localStorage to the host, once', async () => {
    const { page } = ui;
    await page.evaluate(() => localStorage.setItem('tandem.settings', JSON.stringify({ typingTakesOver: false, fontSize: 17 })));
    await page.reload();
    await expect.poll(() => ui.serve.host.settings.get().fontSize).toBe(17);
    expect(ui.serve.host.settings.get().typingTakesOver).toBe(false);
    // The host holds the change before its reply reaches the page, which removes the old entry then.
    await expect.poll(() => page.evaluate(() => localStorage.getItem('tandem.settings'))).toBeNull();
    ui.serve.host.settings.update({ fontSize: 14, typingTakesOver: true });
    await page.reload();
    await page.locator(`[role="tab"][data-terminal-id="${ids[0]}"]`).waitFor();
    expect(ui.serve.host.settings.get().fontSize).toBe(14);
  });

  it('edits the variables agents get: a name goes to the host, a wrong one is refused and said, and one can be removed', async () => {
    const { page } = ui;
    await openSettings(page);
    const list = page.getByRole('group', { name: 'Variables agents get' });
    const field = list.getByRole('textbox', { name: 'Add to variables agents get' });
    await field.fill('AWS_PROFILE');
    await list.getByRole('button', { name: 'Add' }).click();
    await expect.poll(() => ui.serve.host.settings.get().agentEnvAllow).toEqual(['AWS_PROFILE']);
    await field.fill('bad name');
    await list.getByRole('button', { name: 'Add' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /variable names/ })
      .waitFor();
    expect(ui.serve.host.settings.get().agentEnvAllow).toEqual(['AWS_PROFILE']);
    await expect.poll(() => list.locator('.chip code').allTextContents()).toEqual(['AWS_PROFILE']);
    await shots(page, 'settings-agent-env', { reveal: list });
    await list.getByRole('button', { name: 'Remove AWS_PROFILE' }).click();
    await expect.poll(() => ui.serve.host.settings.get().agentEnvAllow).toEqual([]);
    await closeSettings(page);
  });

  it('copies, pastes, selects all and clears from the context menu', async () => {
    const { page } = ui;
    const id = ids[0]!;
    await waitForPrompt(page, id);
    await typeInto(page, id, 'clear; echo menu-copy-source');
    await waitForScreen(page, id, /^menu-copy-source$/m);
    const menu = page.getByRole('menu', { name: 'Terminal' });

    await pane(page, id).locator('.xterm').click({ button: 'right' });
    await menu.waitFor();
    expect(await menu.getByRole('menuitem', { name: /^Copy( Ctrl|$)/ }).isDisabled()).toBe(true);
    await menu.getByRole('menuitem', { name: 'Select all' }).click();
    await pane(page, id).locator('.xterm').click({ button: 'right' });
    await menu.getByRole('menuitem', { name: /^Copy( Ctrl|$)/ }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain('menu-copy-source');
    await menuShots(page, id, 'context-menu-dark');

    await page.evaluate(() => navigator.clipboard.writeText('echo pasted-$((6*7))'));
    await pane(page, id).locator('.xterm').click({ button: 'right' });
    await menu.getByRole('menuitem', { name: 'Paste' }).click();
    // Reading the clipboard takes a moment: Enter goes after the pasted line shows.
    await waitForScreen(page, id, /# echo pasted-\$\(\(6\*7\)\)$/m);
    await page.keyboard.press('Enter');
    await waitForScreen(page, id, /^pasted-42$/m);

    await pane(page, id).locator('.xterm').click({ button: 'right' });
    await menu.getByRole('menuitem', { name: 'Clear' }).click();
    await expect.poll(() => screenText(page, id)).not.toContain('menu-copy-source');

    // Copy on select: selecting is enough.
    ui.serve.host.settings.update({ copyOnSelect: true });
    await page.evaluate(() => navigator.clipboard.writeText('nothing yet'));
    await typeInto(page, id, 'echo selected-$((5*5))');
    await waitForScreen(page, id, /^selected-25$/m);
    await pane(page, id).locator('.xterm').click({ button: 'right' });
    await menu.getByRole('menuitem', { name: 'Select all' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain('selected-25');
    ui.serve.host.settings.update({ copyOnSelect: false });

    // Right-click pastes when the person chose so: chosen in the page, which applies it at once.
    await openSettings(page);
    await page.getByLabel('Right-click').selectOption('paste');
    await closeSettings(page);
    await page.evaluate(() => navigator.clipboard.writeText('echo right-$((2+3))'));
    await pane(page, id).locator('.xterm').click({ button: 'right' });
    await waitForScreen(page, id, /# echo right-\$\(\(2\+3\)\)$/m);
    await page.keyboard.press('Enter');
    await waitForScreen(page, id, /^right-5$/m);
    expect(await menu.count()).toBe(0);
    await openSettings(page);
    await page.getByLabel('Right-click').selectOption('menu');
    await closeSettings(page);
    await expect.poll(() => ui.serve.host.settings.get().rightClick).toBe('menu');
  });

  it('shows a dragged tab beside the active one, and both panes take input', async () => {
    const { page } = ui;
    const first = ids[0]!;
    const second = await newTab(page, ids);
    ids.push(second);
    await page.locator(`[role="tab"][data-terminal-id="${first}"]`).click();
    expect(await activeTerminalId(page)).toBe(first);

    const box = (await page.locator('main.workspace').boundingBox())!;
    await page.locator(`[role="tab"][data-terminal-id="${second}"]`).dragTo(page.locator('main.workspace'), {
      targetPosition: { x: box.width * 0.85, y: box.height * 0.4 },
    });
    await page.locator('[data-split="row"]').waitFor();
    await expect.poll(() => page.locator('[role="tabpanel"]:visible').count()).toBe(2);
    const [left, right] = await Promise.all([pane(page, first).boundingBox(), pane(page, second).boundingBox()]);
    expect(left!.x + left!.width).toBeLessThanOrEqual(right!.x + 1);

    await typeInto(page, first, 'echo left-$((1+1))');
    await typeInto(page, second, 'echo right-$((2+2))');
    await typeInto(page, first, 'echo left-again');
    await waitForScreen(page, first, /^left-2$/m);
    await waitForScreen(page, first, /^left-again$/m);
    await waitForScreen(page, second, /^right-4$/m);
    expect(await screenText(page, second)).not.toMatch(/^left-/m);
    expect(await screenText(page, first)).not.toMatch(/^right-4$/m);
    // A reload keeps the split.
    await page.reload();
    await page.locator('[data-split="row"]').waitFor();
    await expect.poll(() => page.locator('[role="tabpanel"]:visible').count()).toBe(2);
    await waitForScreen(page, second, /^right-4$/m);

    // The browser-safe tab switch moves between the two panes' tabs.
    await page.keyboard.press('Alt+Shift+ArrowRight');
    await expect.poll(() => activeTerminalId(page)).toBe(second);
    await page.keyboard.press('Alt+Shift+ArrowLeft');
    await expect.poll(() => activeTerminalId(page)).toBe(first);
    await shots(page, 'split-row', { looks: hostLook(page, ui.serve.host.settings) });
  });

  it('splits down from the context menu into a new terminal, and closes the split', async () => {
    const { page } = ui;
    const first = ids[0]!;
    const menu = page.getByRole('menu', { name: 'Terminal' });
    await pane(page, first).locator('.xterm').click({ button: 'right' });
    await menu.getByRole('menuitem', { name: 'Close split' }).click();
    await page.locator('[data-split="none"]').waitFor();
    await expect.poll(() => page.locator('[role="tabpanel"]:visible').count()).toBe(1);

    await pane(page, first).locator('.xterm').click({ button: 'right' });
    await menu.getByRole('menuitem', { name: 'Split down' }).click();
    await page.locator('[data-split="column"]').waitFor();
    const below = await activeTerminalId(page);
    expect(ids).not.toContain(below);
    ids.push(below);
    await waitForPrompt(page, below);
    await typeInto(page, below, 'echo below-$((3*3))');
    await waitForScreen(page, below, /^below-9$/m);
    await typeInto(page, first, 'echo above-ok');
    await waitForScreen(page, first, /^above-ok$/m);
    const [top, bottom] = await Promise.all([pane(page, first).boundingBox(), pane(page, below).boundingBox()]);
    expect(top!.y + top!.height).toBeLessThanOrEqual(bottom!.y + 1);
    await hostLook(page, ui.serve.host.settings)('light');
    await menuShots(page, first, 'split-column-menu-light');
    await hostLook(page, ui.serve.host.settings)('dark');
    await openSettings(page);
    await shots(page, 'settings-split', { looks: hostLook(page, ui.serve.host.settings) });
    await closeSettings(page);
  });

  it("watches an agent's terminal beside the person's own", async () => {
    const { page } = ui;
    const own = ids[0]!;
    const agent = await ui.serve.host.create({ origin: 'agent', agent: 'my-agent', title: 'agent work' });
    const agentTab = page.locator(`[role="tab"][data-terminal-id="${agent.id}"]`);
    await agentTab.waitFor();
    await page.locator(`[role="tab"][data-terminal-id="${own}"]`).click();
    const box = (await page.locator('main.workspace').boundingBox())!;
    await agentTab.dragTo(page.locator('main.workspace'), { targetPosition: { x: box.width * 0.9, y: box.height * 0.5 } });
    await page.locator('[data-split="row"]').waitFor();
    await expect.poll(() => page.locator('[role="tabpanel"]:visible').count()).toBe(2);

    const sent = ui.serve.host.get(agent.id).session.send({ text: 'echo from-the-agent', waitMs: 15_000 });
    await typeInto(page, own, 'echo from-the-person');
    expect((await sent).output).toBe('from-the-agent');
    await waitForScreen(page, agent.id, /^from-the-agent$/m);
    await waitForScreen(page, own, /^from-the-person$/m);
    // Watching did not take control from the agent.
    expect(ui.serve.host.get(agent.id).meta.control).toBe('agent');
    await shots(page, 'split-agent', { looks: hostLook(page, ui.serve.host.settings) });
  });

  it('turns recording of new terminals off and on, and sets its bounds, in Settings', async () => {
    const { page } = ui;
    await openSettings(page);
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    const record = dialog.getByRole('checkbox', { name: 'Record new terminals' });
    expect(await record.isChecked()).toBe(true);
    await record.uncheck();
    await expect.poll(() => ui.serve.host.settings.get().recording).toBe(false);
    await closeSettings(page);
    // A terminal opened now is not recorded; one opened after it is turned on again is.
    const unrecorded = await newTab(page, [...ids, ...ui.serve.host.list().map((t) => t.id)]);
    const recordedIds = async () => (await ui.serve.host.recordings().list()).map((r) => r.terminalId);
    expect(await recordedIds()).not.toContain(unrecorded);
    await openSettings(page);
    await record.check();
    await expect.poll(() => ui.serve.host.settings.get().recording).toBe(true);
    for (const [label, key, value] of [
      ['Per terminal (MiB)', 'recordingMaxMiB', 64],
      ['All together (MiB)', 'recordingTotalMiB', 2000],
      ['Keep (days)', 'recordingDays', 7],
    ] as const) {
      await dialog.getByLabel(label).fill(String(value));
      await dialog.getByLabel(label).press('Enter');
      await expect.poll(() => ui.serve.host.settings.get()[key]).toBe(value);
    }
    await shots(page, 'settings-recording', { looks: hostLook(page, ui.serve.host.settings) });
    await closeSettings(page);
    const recorded = await newTab(page, [...ids, ...ui.serve.host.list().map((t) => t.id)]);
    await expect.poll(recordedIds).toContain(recorded);
  });
});
