import type { Page } from 'playwright-core';

/** The page's read-only test hook (src/renderer/src/terminal/test-hook.ts). */
interface TestHook {
  screen(id: string): string | null;
  ids(): string[];
}

const pollMs = 100;

/** The text of a terminal's buffer as its xterm.js holds it. */
export async function screenText(page: Page, id: string): Promise<string> {
  return await page.evaluate((terminalId) => (window as unknown as { __tandemTest?: TestHook }).__tandemTest?.screen(terminalId) ?? '', id);
}

/** Waits until the terminal's buffer matches; fails with the buffer's text. */
export async function waitForScreen(page: Page, id: string, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let text = '';
  while (Date.now() < deadline) {
    text = await screenText(page, id);
    if (pattern.test(text)) return text;
    await page.waitForTimeout(pollMs);
  }
  throw new Error(`The screen of ${id} did not match ${pattern} within ${timeoutMs} ms. It shows:\n${text}`);
}

/** The id of the selected tab's terminal. */
export async function activeTerminalId(page: Page): Promise<string> {
  const tab = page.locator('[role="tab"][aria-selected="true"]');
  await tab.waitFor();
  const id = await tab.getAttribute('data-terminal-id');
  if (!id) throw new Error('The selected tab names no terminal.');
  return id;
}

/**
 * Opens a terminal with the New terminal button and returns its id once its tab is the
 * selected one: right after the click the tab selected before still is, until the host answers.
 */
export async function openTerminal(page: Page): Promise<string> {
  const before = new Set(await page.locator('[role="tab"][data-terminal-id]').evaluateAll((tabs) => tabs.map((tab) => tab.getAttribute('data-terminal-id'))));
  await page
    .getByRole('button', { name: /^New terminal/ })
    .first()
    .click();
  const selected = page.locator('[role="tab"][aria-selected="true"][data-terminal-id]').first();
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await page.waitForTimeout(pollMs)) {
    const id = await selected.getAttribute('data-terminal-id', { timeout: 1000 }).catch(() => null);
    if (id && !before.has(id)) return id;
  }
  throw new Error('No new terminal tab was selected within 30 s of New terminal.');
}

/** Types a line into the active terminal as the person would (keyboard events). */
export async function typeLine(page: Page, line: string): Promise<void> {
  await page.locator('[role="tabpanel"]:visible .xterm').click();
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

/** Waits for bash's prompt (the shell is ready for a command). */
export async function waitForPrompt(page: Page, id: string): Promise<void> {
  await waitForScreen(page, id, /[$#] ?$/m);
}

/** A command mark as the page's view of a terminal holds it (the test hook of `?test`). */
export type ViewMark = { line: number; status: string; exitCode: number | null; command: string | null; output: string };

export async function marksOf(page: Page, id: string): Promise<ViewMark[]> {
  type Hook = { marks(id: string): ViewMark[] | null };
  return (await page.evaluate((terminalId) => (window as unknown as { __tandemTest: Hook }).__tandemTest.marks(terminalId), id)) ?? [];
}
