import type { AttentionKind } from './attention-rules';

/** Kept in this browser (or the app's renderer) across restarts, beside the other settings. */
const notifyKey = 'tandem.notify';

export const notifyLabels: Record<AttentionKind, string> = {
  approval: 'An agent asks to run a command',
  handoff: 'An agent asks you to take over',
  input: 'A program waits for input the agent is not giving',
  finished: 'A long command (10 s or more) finishes in a background tab',
  pairing: 'An agent asks to pair with Tandem',
};

type Stored = Record<AttentionKind, boolean>;
const defaults: Stored = { approval: true, handoff: true, input: true, finished: true, pairing: true };

function read(): Stored {
  try {
    const raw = JSON.parse(localStorage.getItem(notifyKey) ?? '{}') as Partial<Record<string, unknown>>;
    const kinds = Object.keys(defaults) as AttentionKind[];
    return Object.fromEntries(kinds.map((kind) => [kind, typeof raw[kind] === 'boolean' ? raw[kind] : defaults[kind]])) as Stored;
  } catch {
    return { ...defaults };
  }
}

/** Which events raise a notification. The tab marks and the title count show them all regardless. */
export class NotifySettings {
  #values = $state<Stored>(read());

  enabled(kind: AttentionKind): boolean {
    return this.#values[kind];
  }

  set(kind: AttentionKind, on: boolean): void {
    this.#values[kind] = on;
    try {
      localStorage.setItem(notifyKey, JSON.stringify(this.#values));
    } catch {
      // Storage can be unavailable (privacy settings); the choice then lasts for this page only.
    }
  }
}

export const notifySettings = new NotifySettings();
