/**
 * The desktop app's notification, badge and flash code, against a SMALL FAKE of Electron's
 * Notification, app.setBadgeCount and BrowserWindow (no Electron runtime here): the fake
 * records calls and lets the test click a notification or focus the window.
 */
import { describe, expect, it } from 'vitest';
import { createDesktopAttention, liveNotificationsMax, type NotificationLike, type WindowLike } from '../../src/main/electron/attention.js';

class FakeNotification implements NotificationLike {
  shown = false;
  readonly listeners = new Map<string, () => void>();
  constructor(readonly options: { title: string; body: string }) {}
  on(event: 'click' | 'close', listener: () => void): void {
    this.listeners.set(event, listener);
  }
  show(): void {
    this.shown = true;
  }
}

class FakeWindow implements WindowLike {
  readonly calls: string[] = [];
  focused = false;
  minimized = false;
  private onFocus: (() => void) | null = null;
  isDestroyed = (): boolean => false;
  isFocused = (): boolean => this.focused;
  isMinimized = (): boolean => this.minimized;
  restore(): void {
    this.calls.push('restore');
  }
  show(): void {
    this.calls.push('show');
  }
  focus(): void {
    this.calls.push('focus');
    this.onFocus?.();
    this.onFocus = null;
  }
  flashFrame(flag: boolean): void {
    this.calls.push(`flash:${flag}`);
  }
  once(_event: 'focus', listener: () => void): void {
    this.onFocus = listener;
  }
}

function setup(supported = true) {
  const notifications: FakeNotification[] = [];
  const badges: number[] = [];
  const win = new FakeWindow();
  const attention = createDesktopAttention({
    notification: supported ? (options) => notifications.at(notifications.push(new FakeNotification(options)) - 1)! : null,
    setBadgeCount: (count) => badges.push(count),
    window: () => win,
  });
  return { attention, notifications, badges, win };
}

describe('desktop attention (Electron notification, badge and flash)', () => {
  it('shows a notification whose click restores and focuses the window, then reports the click', () => {
    const { attention, notifications, win } = setup();
    const clicked: string[] = [];
    win.minimized = true;
    attention.notify({ title: 'Approval needed', body: 'codex: rm -rf build' }, () => clicked.push('t1'));
    expect(notifications).toHaveLength(1);
    expect(notifications[0]!.options).toEqual({ title: 'Approval needed', body: 'codex: rm -rf build' });
    expect(notifications[0]!.shown).toBe(true);
    expect(clicked).toEqual([]);
    notifications[0]!.listeners.get('click')!();
    expect(win.calls).toEqual(['restore', 'show', 'focus']);
    expect(clicked).toEqual(['t1']);
  });

  it('shows nothing where the system has no notifications', () => {
    const { attention, notifications } = setup(false);
    attention.notify({ title: 'x', body: '' }, () => undefined);
    expect(notifications).toHaveLength(0);
  });

  it('sets the badge, flashes an unfocused window only when asked, and stops at focus or zero', () => {
    const { attention, badges, win } = setup();
    attention.attention(2, true);
    expect(badges).toEqual([2]);
    expect(win.calls).toEqual(['flash:true']);
    win.focus();
    expect(win.calls).toEqual(['flash:true', 'focus', 'flash:false']);

    win.calls.length = 0;
    attention.attention(1, false);
    expect(win.calls).toEqual([]);
    win.focused = true;
    attention.attention(3, true);
    expect(win.calls).toEqual([]);
    attention.attention(0, false);
    expect(badges).toEqual([2, 1, 3, 0]);
    expect(win.calls).toEqual(['flash:false']);
  });

  it(`keeps at most ${liveNotificationsMax} unclicked notifications referenced`, () => {
    const { attention, notifications } = setup();
    const clicked: number[] = [];
    for (let i = 0; i < liveNotificationsMax + 4; i++) attention.notify({ title: `n${i}`, body: '' }, () => clicked.push(i));
    // The newest still work when clicked; the module holds no more than its bound.
    notifications.at(-1)!.listeners.get('click')!();
    expect(clicked).toEqual([liveNotificationsMax + 3]);
  });
});
