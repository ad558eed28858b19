import type { TerminalView } from '../../../shared/contract';

/** The last folder of a path (`/home/me/src/tandem` → `tandem`, `/` → `/`), or null. */
export function lastFolder(path: string | null, home: string | null): string | null {
  if (!path) return null;
  if (home && path === home) return '~';
  const parts = path.split(/[\\/]+/).filter(Boolean);
  return parts.at(-1) ?? path;
}

/** A program's own title is cut to this many characters where Tandem shows it. */
export const programTextMax = 48;

/**
 * A program's own words (its OSC 0/2 title, or the foreground program's name) made safe to show
 * beside Tandem's: control characters (C0, DEL, C1), bidirectional overrides, isolates and marks,
 * zero-width and other invisible format characters and line/paragraph separators are removed,
 * runs of spaces folded, and the text cut to `programTextMax` characters (an ellipsis says so).
 * Null when nothing visible is left. Shown only as the program's (quoted, in its own style,
 * never where Tandem writes its own states): see `programQuoted`.
 */
export function programText(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const cleaned = raw
    .replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, ' ')
    // Format characters (bidi overrides, isolates and marks, zero-width, soft hyphen, BOM), private use, lone surrogates, fillers.
    .replace(/[\p{Cf}\p{Co}\p{Cs}\u115f\u1160\u3164\uffa0]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (cleaned === '') return null;
  const chars = [...cleaned];
  return chars.length > programTextMax ? `${chars.slice(0, programTextMax - 1).join('')}…` : cleaned;
}

/** How a program's words read in Tandem's sentences and tooltips: quoted and named as the program's. */
export function programQuoted(raw: string | null | undefined): string | null {
  const text = programText(raw);
  return text === null ? null : `program: \u201c${text}\u201d`;
}

/**
 * What a tab says. The label is always Tandem's: a title someone chose in Tandem (a rename, the
 * agent's `terminal_open` title), else the cwd's last folder, else the shell's name. What the
 * program says of itself (its OSC 0/2 title or its name) is never the label: it is the `detail`,
 * cleaned by `programText`, and shown in the program's own style beside the label. A program can
 * thus never write in the place where Tandem names the terminal (an approval card names the
 * terminal by this label).
 */
export function tabTitle(info: Pick<TerminalView, 'title' | 'shell' | 'program' | 'cwd'>, home: string | null): { label: string; detail: string | null } {
  const chosen = info.title !== info.shell;
  const program = programText(info.program);
  if (chosen) return { label: info.title, detail: program };
  return { label: lastFolder(info.cwd, home) ?? info.title, detail: program };
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
      .filter(
        (entry): entry is [string, { key: string; n: number }] =>
          Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1]?.key === 'string' && Number.isInteger(entry[1]?.n),
      )
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

/**
 * Every tab's title; tabs whose Tandem label would read the same get a number from the second on
 * (`~ (2)`), kept as long as the label reads the same. The program's detail plays no part: the label
 * alone names one terminal (approval and handoff cards name it so), and a program starting or
 * setting its title never renumbers a tab.
 */
export function tabTitles(
  list: readonly Pick<TerminalView, 'id' | 'title' | 'shell' | 'program' | 'cwd'>[],
  home: string | null,
  memory: LabelMemory = labelMemory,
): Record<string, { label: string; detail: string | null }> {
  const plain = list.map((info) => ({ id: info.id, title: tabTitle(info, home) }));
  const numbers = memory.assign(plain.map(({ id, title }) => ({ id, key: title.label })));
  const titles: Record<string, { label: string; detail: string | null }> = {};
  for (const { id, title } of plain) {
    const n = numbers[id] ?? 1;
    titles[id] = n === 1 ? title : { ...title, label: `${title.label} (${n})` };
  }
  return titles;
}
