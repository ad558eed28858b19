/** Side by side (`row`) or one above the other (`column`). */
export type SplitDirection = 'row' | 'column';

export interface SplitPair {
  first: string;
  second: string;
  direction: SplitDirection;
}

/** Where a terminal is drawn: the whole workspace, one half of the split, or not at all. */
export type Slot = 'full' | 'first' | 'second' | null;

/** Survives a reload of this window (or browser tab), like the active tab. */
const splitKey = 'tandem.split';

function readPair(): SplitPair | null {
  try {
    const raw = JSON.parse(sessionStorage.getItem(splitKey) ?? 'null') as Partial<SplitPair> | null;
    if (!raw || typeof raw.first !== 'string' || typeof raw.second !== 'string' || (raw.direction !== 'row' && raw.direction !== 'column')) return null;
    return { first: raw.first, second: raw.second, direction: raw.direction };
  } catch {
    return null;
  }
}

function writePair(pair: SplitPair | null): void {
  try {
    if (pair) sessionStorage.setItem(splitKey, JSON.stringify(pair));
    else sessionStorage.removeItem(splitKey);
  } catch {
    // Storage can be unavailable (privacy settings); the split is then not remembered.
  }
}

/**
 * Two terminals shown at once (the person's beside an agent's). Each pane is its own view and
 * attachment of a different terminal, so both take input; one terminal is never in both panes
 * (its latest attachment would own input and the other pane would go read-only). Selecting a
 * tab outside the pair shows that tab alone; selecting one of the pair shows the split again.
 */
export class SplitStore {
  pair = $state<SplitPair | null>(typeof sessionStorage === 'undefined' ? null : readPair());

  open(first: string, second: string, direction: SplitDirection): void {
    if (first === second) return;
    this.set({ first, second, direction });
  }

  close(): void {
    this.set(null);
  }

  /** The pair without `id` (its pane was closed or left the split); the other pane stays. */
  remove(id: string): void {
    if (this.pair && (this.pair.first === id || this.pair.second === id)) this.set(null);
  }

  /** Forgets a pair whose terminal left the roster. */
  prune(ids: readonly string[]): void {
    if (this.pair && (!ids.includes(this.pair.first) || !ids.includes(this.pair.second))) this.set(null);
  }

  private set(pair: SplitPair | null): void {
    this.pair = pair;
    writePair(pair);
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
