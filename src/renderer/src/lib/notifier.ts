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

export function pageTitle(count: number): string {
  return count > 0 ? `(${count}) ${baseTitle}` : baseTitle;
}

/** Asks the browser for permission, once, from a gesture (pairing an agent); the desktop app needs none. */
export function askNotificationPermission(): void {
  if (typeof Notification === 'undefined' || Notification.permission !== 'default' || window.tandem) return;
  void Notification.requestPermission().catch(() => undefined);
}

export function browserNotifier(show: (terminalId: string) => void): Notifier {
  return {
    notify(call) {
      if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
      // One notification per terminal and kind: a newer one replaces the older.
      const notification = new Notification(call.title, { body: call.body, tag: `${call.kind}:${call.terminalId}` });
      notification.onclick = () => {
        window.focus();
        show(call.terminalId);
        notification.close();
      };
    },
    setCount(count) {
      document.title = pageTitle(count);
    },
  };
}

export function desktopNotifier(api: TandemApi, show: (terminalId: string) => void): { notifier: Notifier; dispose: () => void } {
  const off = api.on('notificationClicked', ({ terminalId }) => show(terminalId));
  const quiet = (): undefined => undefined;
  return {
    notifier: {
      notify(call) {
        api.call('notify', { title: call.title.slice(0, 200), body: call.body.slice(0, 500), terminalId: call.terminalId }).catch(quiet);
      },
      setCount(count, grew) {
        document.title = pageTitle(count);
        api.call('attention', { count: Math.min(count, 999), flash: grew }).catch(quiet);
      },
    },
    dispose: off,
  };
}
