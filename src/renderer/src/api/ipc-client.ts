import type { EventName, EventPayload, OpArgs, OpName, OpResult, TandemApi } from '../../../shared/contract';
import type { TandemBridge } from '../../../shared/wire.js';
import { TandemCallError } from './errors';

/** The contract over Electron IPC, through the preload's `window.tandem` bridge. */
export class IpcClient implements TandemApi {
  readonly transport = 'ipc' as const;

  constructor(private readonly bridge: Pick<TandemBridge, 'call' | 'on'>) {}

  async call<K extends OpName>(op: K, args: OpArgs<K>): Promise<OpResult<K>> {
    const reply = await this.bridge.call(op, args);
    if (reply.ok) return reply.value as OpResult<K>;
    throw new TandemCallError(reply.error.code, reply.error.message);
  }

  on<K extends EventName>(event: K, listener: (payload: EventPayload<K>) => void): () => void {
    return this.bridge.on(event, listener as (payload: unknown) => void);
  }

  /** Nothing to close: the page's client lives as long as the page. */
  close(): void {}
}
