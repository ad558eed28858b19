export type ShortcutAction = 'new' | 'close' | 'next' | 'prev' | 'search' | 'copy' | 'paste' | 'fontBigger' | 'fontSmaller' | 'fontReset';

/**
 * The app's keyboard shortcuts. Letters match by physical key (`code`) so Shift and keyboard
 * layouts do not change them. In a browser tab, Chrome keeps Ctrl+Shift+T/W and
 * Ctrl+PageUp/PageDown for itself, so each of those has an Alt+Shift alternative that works
 * everywhere; the desktop app receives them all.
 */
export function shortcutOf(event: KeyboardEvent): ShortcutAction | null {
  if (event.altKey && event.shiftKey && !event.ctrlKey && !event.metaKey) return browserSafeShortcut(event);
  if (!event.ctrlKey || event.altKey || event.metaKey) return null;
  if (event.shiftKey) {
    switch (event.code) {
      case 'KeyT':
        return 'new';
      case 'KeyW':
        return 'close';
      case 'KeyF':
        return 'search';
      case 'KeyC':
        return 'copy';
      case 'KeyV':
        return 'paste';
      case 'Equal':
        // Ctrl+Shift+= is Ctrl++ on most layouts.
        return 'fontBigger';
      default:
        return null;
    }
  }
  switch (event.code) {
    case 'Equal':
    case 'NumpadAdd':
      return 'fontBigger';
    // Ctrl+Shift+- (Ctrl+_, readline's undo) still reaches the shell.
    case 'Minus':
    case 'NumpadSubtract':
      return 'fontSmaller';
    case 'Digit0':
    case 'Numpad0':
      return 'fontReset';
  }
  if (event.key === 'PageUp') return 'prev';
  if (event.key === 'PageDown') return 'next';
  return null;
}

function browserSafeShortcut(event: KeyboardEvent): ShortcutAction | null {
  switch (event.code) {
    case 'KeyN':
      return 'new';
    case 'KeyW':
      return 'close';
    case 'ArrowRight':
      return 'next';
    case 'ArrowLeft':
      return 'prev';
    default:
      return null;
  }
}

type LabelledAction = Exclude<ShortcutAction, 'copy' | 'paste'>;

export const shortcutLabels: Record<LabelledAction, string> = {
  new: 'Ctrl+Shift+T',
  close: 'Ctrl+Shift+W',
  next: 'Ctrl+PageDown',
  prev: 'Ctrl+PageUp',
  search: 'Ctrl+Shift+F',
  fontBigger: 'Ctrl+=',
  fontSmaller: 'Ctrl+-',
  fontReset: 'Ctrl+0',
};

/** What works in a browser tab where the browser keeps the usual shortcut for itself. */
export const browserShortcutLabels: Partial<Record<LabelledAction, string>> = {
  new: 'Alt+Shift+N',
  close: 'Alt+Shift+W',
  next: 'Alt+Shift+→',
  prev: 'Alt+Shift+←',
};

/** In a browser tab (no desktop bridge) the browser-safe alternative, else the usual one. */
export function shortcutLabel(action: LabelledAction, inBrowser: boolean): string {
  return (inBrowser ? browserShortcutLabels[action] : undefined) ?? shortcutLabels[action];
}
