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
