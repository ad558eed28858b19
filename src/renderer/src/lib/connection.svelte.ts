import { connect, type ConnectionStatus, type TandemConnection } from '../api';
import { type Problem, toProblem } from './problem';

export type ConnectionState = ConnectionStatus | 'failed';

export interface ConnectionHooks {
  /** The transport came back: the host dropped this page's views, so list and re-attach. */
  onReconnect: () => Promise<void>;
  /** The transport went away: views are no longer attached. */
  onLost: () => void;
}

/** The page's one connection to the host, and its state for the status line. */
export class ConnectionStore {
  state = $state<ConnectionState>('connecting');
  detail = $state<string | null>(null);
  api = $state.raw<TandemConnection | null>(null);
  /** Why the first connection failed (not logged in, host not running). */
  problem = $state<Problem | null>(null);

  async start(hooks: ConnectionHooks): Promise<TandemConnection | null> {
    this.state = 'connecting';
    this.problem = null;
    try {
      const api = await connect({
        onStatus: (status, detail) => {
          this.state = status;
          this.detail = detail ?? null;
          if (status === 'reconnecting' || status === 'login_required' || status === 'closed') hooks.onLost();
        },
        onReconnect: hooks.onReconnect,
      });
      this.api = api;
      this.state = 'connected';
      return api;
    } catch (error) {
      this.problem = toProblem(error);
      this.state = 'failed';
      return null;
    }
  }
}

export const connection = new ConnectionStore();
