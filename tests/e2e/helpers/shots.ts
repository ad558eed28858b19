import type { Locator, Page } from 'playwright-core';
import { screenshotPath } from './browser';

/** The two window sizes the UI issues name: a laptop's and a small window's. */
export const shotSizes = [
  { width: 1280, height: 800 },
  { width: 800, height: 600 },
] as const;

export type Look = 'dark' | 'light';

/** Turns the page dark or light and waits until the page shows it. */
export type SetLook = (look: Look) => Promise<void>;

export interface ShotOptions {
  /** Scrolled into view at each size (a panel scrolls its own content). */
  reveal?: Locator;
  /** Shoot both looks, dark then light, each at both sizes, and leave the page dark. */
  looks?: SetLook;
  /** Runs at each size before the shot (a menu that a resize closes is opened again here). */
  before?: () => Promise<void>;
  /** Runs at each size after the shot. */
  after?: () => Promise<void>;
}

/**
 * Screenshots for a person to look at, under test-results/screenshots: `NAME-WxH.png` at each
 * size, or `NAME-LOOK-WxH.png` with `looks`. The viewport is put back as it was.
 */
export async function shots(page: Page, name: string, options: ShotOptions = {}): Promise<void> {
  const restore = page.viewportSize() ?? shotSizes[0];
  const looks: (Look | undefined)[] = options.looks ? ['dark', 'light'] : [undefined];
  for (const look of looks) {
    if (look) await options.looks!(look);
    for (const size of shotSizes) {
      await page.setViewportSize(size);
      // The layout (tab strip, terminal fit) re-measures after a resize.
      await page.waitForTimeout(300);
      await options.reveal?.scrollIntoViewIfNeeded();
      await options.before?.();
      const file = [name, look, `${size.width}x${size.height}`].filter(Boolean).join('-');
      await page.screenshot({ path: screenshotPath(`screenshots/${file}`) });
      await options.after?.();
    }
  }
  if (options.looks) await options.looks('dark');
  await page.setViewportSize(restore);
  await page.waitForTimeout(200);
}

/** A `SetLook` through the host's settings, which every page of that host follows. */
export function hostLook(page: Page, settings: { update(patch: { theme: Look }): unknown }): SetLook {
  return async (look) => {
    settings.update({ theme: look });
    await page.waitForFunction((wanted) => document.documentElement.dataset.theme === wanted, look);
  };
}
