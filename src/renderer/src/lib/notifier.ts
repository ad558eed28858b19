/**
 * How the person is called, on the platform the UI runs on: the desktop app's system
 * notifications, badge and flash (through the contract's `notify` and `attention`), or the
 * browser's Notification API in `tandem serve`. Either way the page title carries the count.
 */
import type { TandemApi } from '../../../shared/contract';
import type { Call } from './attention-rules';

export const baseTitle = 'Tandem';

export interface Notifier {
  notify(call: Call): void;
  /** The count of what waits for the person; `grew` when it just went up. */
  setCount(count: number, grew: boolean): void;
}

/**
 * Text a system notification shows, made plain: control characters, line separators and format
 * characters (bidi overrides and isolates, zero-width) that a program's title could carry into a
 * call are removed, so nothing reorders or hides the words around them. A body (`lines`) keeps its line breaks.
 */
export function plainText(text: string, max: number, lines = false): string {
  const kept = lines ? text.replace(/\r\n?/g, '\n') : text;
  const plain = kept
    .replace(lines ? /[^\P{Cc}\n]|[\p{Zl}\p{Zp}]/gu : /[\p{Cc}\p{Zl}\p{Zp}]/gu, ' ')
    .replace(/[\p{Cf}\p{Co}\p{Cs}]/gu, '')
    .replace(lines ? /[^\S\n]+/g : /\s+/g, ' ')
    .trim();
  return [...plain].slice(0, max).join('');
}

export function pageTitle(count: number): string {
  return count > 0 ? `(${count}) ${baseTitle}` : baseTitle;
}

/** Whether this page can notify: the desktop app always can; a browser as its permission says. */
export function notificationPermission(): NotificationPermission | 'unsupported' | 'desktop' {
  if (window.tandem) return 'desktop';
  if (typeof Notification === 'undefined') return 'unsupported';
  return Notification.permission;
}

/**
 * Asks the browser for permission; it must run in a gesture (pairing an agent, or the button
 * in Settings, so a second browser can turn notifications on too). Resolves with the answer.
 */
export async function askNotificationPermission(): Promise<NotificationPermission | 'unsupported' | 'desktop'> {
  const now = notificationPermission();
  if (now !== 'default') return now;
  try {
    return await Notification.requestPermission();
  } catch {
    return notificationPermission();
  }
}

export function browserNotifier(show: (terminalId: string) => void): Notifier {
  return {
    notify(call) {
      if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
      // One notification per terminal and kind: a newer one replaces the older.
      const notification = new Notification(plainText(call.title, 200), {
        body: plainText(call.body, 500, true),
        tag: `${call.kind}:${call.terminalId ?? call.title}`,
      });
      notification.onclick = () => {
        window.focus();
        if (call.terminalId) show(call.terminalId);
        notification.close();
      };
    },
    setCount(count) {
      document.title = pageTitle(count);
    },
  };
}

export function desktopNotifier(api: TandemApi, show: (terminalId: string) => void): { notifier: Notifier; dispose: () => void } {
  // A pairing request's notification names no terminal: the click only raises the window.
  const off = api.on('notificationClicked', ({ terminalId }) => terminalId && show(terminalId));
  const quiet = (): undefined => undefined;
  return {
    notifier: {
      notify(call) {
        api
          .call('notify', {
            title: plainText(call.title, 200) || baseTitle,
            body: plainText(call.body, 500, true),
            ...(call.terminalId ? { terminalId: call.terminalId } : {}),
          })
          .catch(quiet);
      },
      setCount(count, grew) {
        document.title = pageTitle(count);
        api.call('attention', { count: Math.min(count, 999), flash: grew }).catch(quiet);
      },
    },
    dispose: off,
  };
}
