import type { TerminalView } from '../../../shared/contract';
import { terminals } from './terminals.svelte';

/** The person chose not to be asked again before closing a busy terminal (kept across restarts). */
const noAskKey = 'tandem.closeBusyWithoutAsking';

function readNoAsk(): boolean {
  try {
    return localStorage.getItem(noAskKey) === '1';
  } catch {
    return false;
  }
}

/** The agent that holds a live terminal (it opened it, or the person handed it over), else null. */
export function holdingAgent(info: TerminalView | null | undefined): string | null {
  return info && info.status !== 'exited' ? info.agent : null;
}

/**
 * Closing a tab whose command still runs asks first, unless the person said not to. Closing a
 * terminal an agent holds always asks and names the agent: "don't ask again" is for the person's
 * own busy terminals, never a one-keystroke way to pull a terminal from under an agent. The close
 * that runs is the one the question named: a second request while it is open changes nothing.
 */
export class CloseGuard {
  /** The terminal whose close waits for the person's answer. */
  asking = $state<string | null>(null);
  #noAsk = $state(readNoAsk());

  get asks(): boolean {
    return !this.#noAsk;
  }

  request(id: string): void {
    // One question at a time: the open one keeps its terminal (a shortcut must not retarget it).
    if (this.asking !== null) return;
    const info = terminals.list.find((terminal) => terminal.id === id);
    if (!info || terminals.closing[id]?.phase === 'closing') return void terminals.close(id);
    const busy = info.status === 'running' || info.status === 'waiting_input';
    if (holdingAgent(info) !== null || (busy && !this.#noAsk)) this.asking = id;
    else void terminals.close(id);
  }

  /** The person confirmed the question about `id` (the terminal the dialog showed). */
  confirm(id: string, dontAskAgain: boolean): void {
    if (this.asking !== id) return;
    const info = terminals.list.find((terminal) => terminal.id === id);
    this.asking = null;
    if (dontAskAgain && holdingAgent(info) === null) this.setAsks(false);
    void terminals.close(id);
  }

  cancel(): void {
    this.asking = null;
  }

  setAsks(asks: boolean): void {
    this.#noAsk = !asks;
    try {
      if (asks) localStorage.removeItem(noAskKey);
      else localStorage.setItem(noAskKey, '1');
    } catch {
      // Storage can be unavailable (privacy settings); the choice then lasts for this page only.
    }
  }
}

export const closeGuard = new CloseGuard();
