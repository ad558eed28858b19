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

/** Every tab's title; tabs that would read the same get a number from the second on (`~ (2)`). */
export function tabTitles(list: readonly Pick<TerminalView, 'id' | 'title' | 'shell' | 'program' | 'cwd'>[], home: string | null): Record<string, { label: string; detail: string | null }> {
  const titles: Record<string, { label: string; detail: string | null }> = {};
  const seen: Record<string, number> = {};
  for (const info of list) {
    const title = tabTitle(info, home);
    const key = `${title.label}\u0000${title.detail ?? ''}`;
    const count = (seen[key] = (seen[key] ?? 0) + 1);
    titles[info.id] = count === 1 ? title : { ...title, label: `${title.label} (${count})` };
  }
  return titles;
}
