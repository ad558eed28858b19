/** Side by side (`row`) or one above the other (`column`). */
export type SplitDirection = 'row' | 'column';

export interface SplitPair {
  first: string;
  second: string;
  direction: SplitDirection;
}

/** Where a terminal is drawn: the whole workspace, one half of the split, or not at all. */
export type Slot = 'full' | 'first' | 'second' | null;

/**
 * Two terminals shown at once (the person's beside an agent's). Each pane is its own view and
 * attachment of a different terminal, so both take input; one terminal is never in both panes
 * (its latest attachment would own input and the other pane would go read-only). Selecting a
 * tab outside the pair shows that tab alone; selecting one of the pair shows the split again.
 */
export class SplitStore {
  pair = $state<SplitPair | null>(null);

  open(first: string, second: string, direction: SplitDirection): void {
    if (first === second) return;
    this.pair = { first, second, direction };
  }

  close(): void {
    this.pair = null;
  }

  /** The pair without `id` (its pane was closed or left the split); the other pane stays. */
  remove(id: string): void {
    if (this.pair && (this.pair.first === id || this.pair.second === id)) this.pair = null;
  }

  /** Forgets a pair whose terminal left the roster. */
  prune(ids: readonly string[]): void {
    if (this.pair && (!ids.includes(this.pair.first) || !ids.includes(this.pair.second))) this.pair = null;
  }

  /** True when the split is what the workspace shows for the active tab. */
  shownFor(activeId: string | null): boolean {
    return this.pair !== null && (this.pair.first === activeId || this.pair.second === activeId);
  }

  slotOf(id: string, activeId: string | null): Slot {
    if (this.shownFor(activeId)) {
      if (this.pair!.first === id) return 'first';
      if (this.pair!.second === id) return 'second';
      return null;
    }
    return id === activeId ? 'full' : null;
  }
}

export const split = new SplitStore();

/** The terminal whose tab is being dragged, if any (tabs carry `data-terminal-id`). */
export const tabDrag = $state<{ id: string | null }>({ id: null });

if (typeof window !== 'undefined') {
  // Captured for any tab drag, whatever the tab strip's own drag handling carries.
  window.addEventListener(
    'dragstart',
    (event) => {
      const tab = (event.target as Element | null)?.closest?.('[role="tab"][data-terminal-id]');
      tabDrag.id = tab?.getAttribute('data-terminal-id') ?? null;
      // Chromium drags without data; other engines need some to start a drag at all.
      if (tabDrag.id && event.dataTransfer && event.dataTransfer.types.length === 0) event.dataTransfer.setData('text/plain', tabDrag.id);
    },
    true,
  );
  window.addEventListener('dragend', () => (tabDrag.id = null), true);
}
