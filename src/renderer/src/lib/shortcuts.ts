export type ShortcutAction = 'new' | 'close' | 'next' | 'prev' | 'search' | 'copy' | 'paste';

/**
 * The app's keyboard shortcuts. Letters match by physical key (`code`) so Shift and keyboard
 * layouts do not change them. In a browser tab, Chrome keeps Ctrl+Shift+T/W and
 * Ctrl+PageUp/PageDown for itself; the desktop app receives them all.
 */
export function shortcutOf(event: KeyboardEvent): ShortcutAction | null {
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
      default:
        return null;
    }
  }
  if (event.key === 'PageUp') return 'prev';
  if (event.key === 'PageDown') return 'next';
  return null;
}

export const shortcutLabels: Record<Exclude<ShortcutAction, 'copy' | 'paste'>, string> = {
  new: 'Ctrl+Shift+T',
  close: 'Ctrl+Shift+W',
  next: 'Ctrl+PageDown',
  prev: 'Ctrl+PageUp',
  search: 'Ctrl+Shift+F',
};
