/**
 * The preload bridge as a plain function of an `ipcRenderer`-like object, so it can be built
 * by the sandboxed preload (src/preload/index.ts) and by tests (with an in-process stand-in).
 * Never imports electron.
 */
import { type EventName, events, isOpName } from '../shared/contract.js';
import { ipcEventChannel, type IpcEventMessage, ipcOpChannel, type IpcReply, type TandemBridge } from '../shared/wire.js';

export type { TandemBridge };

/** The part of Electron's ipcRenderer the bridge uses. */
export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

const eventNames = new Set<string>(Object.keys(events));

export function isEventName(value: unknown): value is EventName {
  return typeof value === 'string' && eventNames.has(value);
}

export function createBridge(ipc: IpcRendererLike, runtime: Pick<TandemBridge, 'platform' | 'versions'>): TandemBridge {
  const listeners = new Map<EventName, Set<(payload: unknown) => void>>();
  ipc.on(ipcEventChannel, (_event, message) => {
    const { event, payload } = (message ?? {}) as Partial<IpcEventMessage>;
    if (!isEventName(event)) return;
    for (const listener of [...(listeners.get(event) ?? [])]) {
      try {
        listener(payload);
      } catch (error) {
        console.error(`A listener of the Tandem "${event}" event failed:`, error);
      }
    }
  });

  return {
    platform: runtime.platform,
    versions: runtime.versions,
    call(op, args) {
      if (!isOpName(op)) {
        return Promise.resolve({ ok: false, error: { code: 'invalid_argument', message: `op: "${String(op).slice(0, 60)}" is not an operation of Tandem.` } });
      }
      return ipc.invoke(ipcOpChannel(op), args).then(
        (reply) => reply as IpcReply,
        (error: unknown) => ({
          ok: false,
          error: { code: 'not_running', message: `Tandem's host did not answer: ${(error as Error)?.message ?? String(error)}` },
        }),
      );
    },
    on(event, listener) {
      if (!isEventName(event)) throw new TypeError(`"${String(event).slice(0, 60)}" is not an event of Tandem.`);
      if (typeof listener !== 'function') throw new TypeError('The listener must be a function.');
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
      };
    },
  };
}
