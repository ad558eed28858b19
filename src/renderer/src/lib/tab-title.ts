import type { TerminalView } from '../../../shared/contract';

/** The last folder of a path (`/home/me/src/tandem` → `tandem`, `/` → `/`), or null. */
export function lastFolder(path: string | null, home: string | null): string | null {
  if (!path) return null;
  if (home && path === home) return '~';
  const parts = path.split(/[\\/]+/).filter(Boolean);
  return parts.at(-1) ?? path;
}

/**
 * What a tab says. A title someone chose (a rename, the agent's `terminal_open` title) leads,
 * with the program beside it; a default title (the shell's name) gives way to what tells
 * terminals apart: the program's own title or foreground program, else the cwd's last folder.
 */
export function tabTitle(info: Pick<TerminalView, 'title' | 'shell' | 'program' | 'cwd'>, home: string | null): { label: string; detail: string | null } {
  const chosen = info.title !== info.shell;
  const where = lastFolder(info.cwd, home);
  if (chosen) return { label: info.title, detail: info.program };
  return { label: info.program ?? where ?? info.title, detail: info.program && where ? where : null };
}

/** Survives a reload of this window (or browser tab), as the tab order does. */
const memoryKey = 'tandem.tabNumbers';
/** Remembered numbers beyond this many terminals are dropped (the host holds 32). */
const rememberedMax = 256;

/**
 * The number each tab was given among look-alikes (`~ (3)`), kept while the tab reads the same:
 * another tab starting a program or closing never renumbers it (a script that went by the label
 * closed the wrong terminal). A tab that reads differently (a rename, its own program or folder)
 * gives its number up.
 */
export class LabelMemory {
  private numbers: Map<string, { key: string; n: number }>;

  constructor(private readonly persist = false) {
    this.numbers = new Map(persist ? readMemory() : []);
  }

  /** Every tab's label: the remembered number where it still reads the same, else the lowest free one. */
  assign(list: readonly { id: string; key: string }[]): Record<string, number> {
    const taken = new Map<string, Set<number>>();
    const result: Record<string, number> = {};
    const claim = (key: string, n: number): boolean => {
      const used = taken.get(key) ?? new Set<number>();
      taken.set(key, used);
      if (used.has(n)) return false;
      used.add(n);
      return true;
    };
    for (const { id, key } of list) {
      const kept = this.numbers.get(id);
      if (kept && kept.key === key && claim(key, kept.n)) result[id] = kept.n;
    }
    let changed = false;
    for (const { id, key } of list) {
      if (result[id] !== undefined) continue;
      let n = 1;
      while (!claim(key, n)) n++;
      result[id] = n;
      this.numbers.set(id, { key, n });
      changed = true;
    }
    for (const id of this.numbers.keys()) {
      if (!list.some((entry) => entry.id === id)) {
        this.numbers.delete(id);
        changed = true;
      }
    }
    if (changed && this.persist) writeMemory([...this.numbers].slice(-rememberedMax));
    return result;
  }
}

function readMemory(): [string, { key: string; n: number }][] {
  try {
    const raw = JSON.parse(sessionStorage.getItem(memoryKey) ?? '[]') as unknown;
    if (!Array.isArray(raw)) return [];
    return raw
      .filter((entry): entry is [string, { key: string; n: number }] => Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1]?.key === 'string' && Number.isInteger(entry[1]?.n))
      .slice(0, rememberedMax);
  } catch {
    return [];
  }
}

function writeMemory(entries: [string, { key: string; n: number }][]): void {
  try {
    sessionStorage.setItem(memoryKey, JSON.stringify(entries));
  } catch {
    // Storage can be unavailable (privacy settings); numbers then last for this page only.
  }
}

/** The page's one memory: the tabs, the list of all tabs, the cards and dialogs all read the same labels. */
export const labelMemory = new LabelMemory(typeof sessionStorage !== 'undefined');

/** Every tab's title; tabs that would read the same get a number from the second on (`~ (2)`), kept as long as the tab reads the same. */
export function tabTitles(
  list: readonly Pick<TerminalView, 'id' | 'title' | 'shell' | 'program' | 'cwd'>[],
  home: string | null,
  memory: LabelMemory = labelMemory,
): Record<string, { label: string; detail: string | null }> {
  const plain = list.map((info) => ({ id: info.id, title: tabTitle(info, home) }));
  const numbers = memory.assign(plain.map(({ id, title }) => ({ id, key: `${title.label}\u0000${title.detail ?? ''}` })));
  const titles: Record<string, { label: string; detail: string | null }> = {};
  for (const { id, title } of plain) {
    const n = numbers[id] ?? 1;
    titles[id] = n === 1 ? title : { ...title, label: `${title.label} (${n})` };
  }
  return titles;
}
