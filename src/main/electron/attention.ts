/**
 * The desktop app calls the person: system notifications (a click shows the window and the
 * terminal), the dock/taskbar badge count, and a window flash. Electron's objects come in as
 * parameters so a test runs this with a small fake; this module does not import electron.
 */
import type { DesktopAttention } from '../host/dispatch.js';

export interface NotificationLike {
  on(event: 'click' | 'close', listener: () => void): unknown;
  show(): void;
}

export interface WindowLike {
  isDestroyed(): boolean;
  isFocused(): boolean;
  isMinimized(): boolean;
  restore(): void;
  show(): void;
  focus(): void;
  flashFrame(flag: boolean): void;
  once(event: 'focus', listener: () => void): unknown;
}

export interface AttentionDeps {
  /** `new Notification(...)`, or null where the system has no notifications (`Notification.isSupported()`). */
  notification: ((options: { title: string; body: string }) => NotificationLike) | null;
  /** `app.setBadgeCount`: the dock on macOS, the launcher on Linux (Unity); Windows has none. */
  setBadgeCount(count: number): void;
  /** The window to show and flash (null while it is closed). */
  window(): WindowLike | null;
}

/** Notifications shown and not yet clicked or closed are kept here (Electron drops the click of one no longer referenced); the oldest go first. */
export const liveNotificationsMax = 16;

export function createDesktopAttention(deps: AttentionDeps): DesktopAttention {
  const live: NotificationLike[] = [];
  const forget = (notification: NotificationLike): void => {
    const index = live.indexOf(notification);
    if (index >= 0) live.splice(index, 1);
  };
  return {
    notify({ title, body }, onClick) {
      if (!deps.notification) return;
      const notification = deps.notification({ title, body });
      notification.on('click', () => {
        forget(notification);
        const win = deps.window();
        if (win && !win.isDestroyed()) {
          if (win.isMinimized()) win.restore();
          win.show();
          win.focus();
        }
        onClick();
      });
      notification.on('close', () => forget(notification));
      live.push(notification);
      if (live.length > liveNotificationsMax) live.shift();
      notification.show();
    },
    attention(count, flash) {
      deps.setBadgeCount(count);
      const win = deps.window();
      if (!win || win.isDestroyed()) return;
      if (count === 0) win.flashFrame(false);
      else if (flash && !win.isFocused()) {
        win.flashFrame(true);
        win.once('focus', () => win.flashFrame(false));
      }
    },
  };
}
