import type { TerminalView } from '../../../shared/contract';

/** Survives a reload of this window (or browser tab), not a new one. */
const memoryKey = 'tandem.handoffMessages';
/** At most this many messages are kept (one per terminal the person holds). */
export const heldMessagesMax = 64;

type Held = Record<string, { agent: string; message: string }>;

function read(): Held {
  try {
    const raw = JSON.parse(sessionStorage.getItem(memoryKey) ?? '{}') as Held;
    return raw && typeof raw === 'object' ? raw : {};
  } catch {
    return {};
  }
}

/**
 * The agent's handoff message, kept while the person holds the terminal it asked about: the
 * question leaves the host's list once answered, the words the person acts on must not.
 */
export class HandoffMemory {
  held = $state<Held>(read());
  /** Who controlled each terminal at the last roster (not reactive: only compared). */
  private controls: Record<string, TerminalView['control']> = {};

  remember(terminalId: string, agent: string, message: string): void {
    this.held[terminalId] = { agent, message };
    const ids = Object.keys(this.held);
    if (ids.length > heldMessagesMax) delete this.held[ids[0]!];
    this.save();
  }

  forget(terminalId: string): void {
    if (!this.held[terminalId]) return;
    delete this.held[terminalId];
    this.save();
  }

  /** A terminal gone, or given back to its agent, takes its message with it. */
  follow(list: readonly TerminalView[]): void {
    const listed = (id: string): boolean => list.some((terminal) => terminal.id === id);
    for (const id of Object.keys(this.held)) if (!listed(id)) this.forget(id);
    const controls: Record<string, TerminalView['control']> = {};
    for (const terminal of list) {
      if (this.controls[terminal.id] === 'user' && terminal.control === 'agent') this.forget(terminal.id);
      controls[terminal.id] = terminal.control;
    }
    this.controls = controls;
  }

  private save(): void {
    try {
      sessionStorage.setItem(memoryKey, JSON.stringify(this.held));
    } catch {
      // Storage can be unavailable (privacy settings); messages then last for this page only.
    }
  }
}

export const handoffMemory = new HandoffMemory();
