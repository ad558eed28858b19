import { type SplitDirection, split } from './split.svelte';
import { terminals } from './terminals.svelte';
import { views } from './views';

/** Opens a new terminal beside (or below) `id`, on its machine, in the directory `id` is in now, in a split, with the keyboard in it. */
export async function splitWithNew(id: string, direction: SplitDirection): Promise<void> {
  const from = terminals.list.find((terminal) => terminal.id === id);
  // A remote terminal's cwd is a path on its machine: the new one opens there, not here.
  const machine = from?.machine && from.machine !== 'local' ? from.machine : undefined;
  if (!(await terminals.create(undefined, null, from?.cwd, machine))) return;
  const created = terminals.activeId;
  if (!created || created === id) return;
  split.open(id, created, direction);
  views.find(created)?.focus();
}

/** Shows `id` in the split beside the active terminal (a tab dropped onto the workspace). */
export function splitWithTab(id: string, direction: SplitDirection): void {
  const active = terminals.activeId;
  if (!active || active === id) return;
  split.open(active, id, direction);
  terminals.select(id);
  views.find(id)?.focus();
}

/** Pastes the clipboard into a terminal as the person's input; says why when the browser refuses. */
export async function pasteInto(id: string): Promise<void> {
  const view = views.find(id);
  if (!view) return;
  try {
    view.paste(await navigator.clipboard.readText());
    view.focus();
  } catch {
    terminals.notice = { code: null, message: 'The browser did not let Tandem read the clipboard; paste with Ctrl+Shift+V instead.' };
  }
}
