import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from './browser';
import { type InProcessServe, startInProcessServe } from './in-process';

export interface UiFixture {
  readonly serve: InProcessServe;
  readonly page: Page;
}

/**
 * An in-process `tandem serve` and one Chromium page, for a describe block: started before its
 * tests (then `ready` runs, e.g. to open the page), torn down after them.
 */
export function useUiFixture(viewport: { width: number; height: number }, ready?: (fixture: UiFixture) => Promise<void>): UiFixture {
  let serve: InProcessServe | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  const fixture: UiFixture = {
    get serve() {
      return serve!;
    },
    get page() {
      return page!;
    },
  };
  beforeAll(async () => {
    serve = await startInProcessServe();
    browser = await launchChromium();
    const context = await browser.newContext({ viewport });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (error) => console.error('page error:', error));
    await ready?.(fixture);
  });
  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
  });
  return fixture;
}
