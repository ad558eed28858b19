import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { chromium as chromiumBrowser, chromiumPath } from '../../support/capabilities';
import { projectRoot } from './serve';

/**
 * Debian's Chromium, never a downloaded one. `TANDEM_CHROMIUM` makes the browser mandatory
 * (a path in it replaces /usr/bin/chromium): then a missing browser fails the tests instead of
 * skipping them (tests/support/capabilities.ts).
 */
export { chromiumPath };
export const chromiumRequired = chromiumBrowser.required;
export const chromiumAvailable = chromiumBrowser.present;

export const skipReason = chromiumAvailable
  ? null
  : `Skipping the UI end-to-end tests: ${chromiumPath} is missing (apt-get install chromium, or set TANDEM_CHROMIUM to a Chromium binary; with TANDEM_CHROMIUM set, a missing browser fails instead).`;

export const resultsDir = join(projectRoot, 'test-results');

export async function launchChromium(): Promise<Browser> {
  if (!chromiumAvailable) throw new Error(`Chromium is required (TANDEM_CHROMIUM is set) but ${chromiumPath} does not exist.`);
  mkdirSync(resultsDir, { recursive: true });
  return await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export function screenshotPath(name: string): string {
  return join(resultsDir, `${name}.png`);
}
