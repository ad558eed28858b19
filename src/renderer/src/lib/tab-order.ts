/**
 * The person's order of the tabs. The host lists terminals in the order they were opened;
 * tabs dragged elsewhere keep their place across roster updates and reloads of this window.
 */
const orderKey = 'tandem.tabOrder';
/** More remembered ids than this are trimmed (ids of closed terminals go first). */
export const rememberedOrderMax = 256;

function readOrder(): string[] {
  try {
    const raw = JSON.parse(sessionStorage.getItem(orderKey) ?? '[]') as unknown;
    return Array.isArray(raw) ? raw.filter((id): id is string => typeof id === 'string').slice(0, rememberedOrderMax) : [];
  } catch {
    return [];
  }
}

function writeOrder(ids: readonly string[]): void {
  try {
    sessionStorage.setItem(orderKey, JSON.stringify(ids.slice(0, rememberedOrderMax)));
  } catch {
    // Storage can be unavailable (privacy settings); the order then lasts for this page only.
  }
}

/** `next` sorted by `order` (ids in it first, in its order), the rest after in their own order. */
export function sortByOrder<T extends { id: string }>(order: readonly string[], next: readonly T[]): T[] {
  const rank = new Map(order.map((id, index) => [id, index]));
  const known = next.filter((item) => rank.has(item.id)).sort((a, b) => rank.get(a.id)! - rank.get(b.id)!);
  return [...known, ...next.filter((item) => !rank.has(item.id))];
}

/** `list` with `id` moved to `index` (counted in the list without it). */
export function moveTo<T extends { id: string }>(list: readonly T[], id: string, index: number): T[] {
  const item = list.find((entry) => entry.id === id);
  if (!item) return [...list];
  const rest = list.filter((entry) => entry.id !== id);
  const at = Math.max(0, Math.min(rest.length, index));
  return [...rest.slice(0, at), item, ...rest.slice(at)];
}

/** Keeps the order of the current tabs and restores it after a reload. */
export class TabOrder {
  private order = readOrder();

  apply<T extends { id: string }>(next: readonly T[]): T[] {
    const sorted = sortByOrder(this.order, next);
    this.remember(sorted);
    return sorted;
  }

  remember(list: readonly { id: string }[]): void {
    this.order = list.map((item) => item.id);
    writeOrder(this.order);
  }
}
