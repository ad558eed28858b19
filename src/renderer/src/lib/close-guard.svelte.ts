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

/** Closing a tab whose command still runs asks first, unless the person said not to. */
export class CloseGuard {
  /** The terminal whose close waits for the person's answer. */
  asking = $state<string | null>(null);
  #noAsk = $state(readNoAsk());

  get asks(): boolean {
    return !this.#noAsk;
  }

  request(id: string): void {
    const info = terminals.list.find((terminal) => terminal.id === id);
    const busy = info?.status === 'running' || info?.status === 'waiting_input';
    if (busy && !this.#noAsk && terminals.closing[id]?.phase !== 'closing') this.asking = id;
    else void terminals.close(id);
  }

  confirm(dontAskAgain: boolean): void {
    const id = this.asking;
    this.asking = null;
    if (dontAskAgain) this.setAsks(false);
    if (id) void terminals.close(id);
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
