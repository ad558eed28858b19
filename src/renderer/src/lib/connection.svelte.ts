import { connect, type ConnectionStatus, type HostState, type TandemConnection } from '../api';
import { type Problem, toProblem } from './problem';

export type ConnectionState = ConnectionStatus | 'failed';

export interface ConnectionHooks {
  /** The transport came back: the host dropped this page's views, so list and re-attach. */
  onReconnect: () => Promise<void>;
  /** The transport went away: views are no longer attached. */
  onLost: () => void;
  /** The Tandem this page knew stopped or was replaced: its terminals ended. Returns how many tabs that ended. */
  onEnded: () => number;
}

/** How long "your terminals kept running" stays up after a reconnect (ms). */
const keptNoticeMs = 8000;

/** The page's one connection to the host, and its state for the status line. */
export class ConnectionStore {
  state = $state<ConnectionState>('connecting');
  detail = $state<string | null>(null);
  api = $state.raw<TandemConnection | null>(null);
  /** Why the first connection failed (not logged in, host not running). */
  problem = $state<Problem | null>(null);
  /** What is known about the Tandem the connection lost (null: connected, or nothing known yet). */
  host = $state<HostState | null>(null);
  /** Terminals that ended with a Tandem that stopped or restarted. */
  ended = $state(0);
  /** True for a while after a reconnect to the same Tandem. */
  kept = $state(false);
  private keptTimer: ReturnType<typeof setTimeout> | null = null;

  async start(hooks: ConnectionHooks): Promise<TandemConnection | null> {
    this.state = 'connecting';
    this.problem = null;
    this.host = null;
    this.ended = 0;
    try {
      const api = await connect({
        onStatus: (status, detail) => {
          this.state = status;
          this.detail = detail ?? null;
          if (status === 'reconnecting' || status === 'login_required' || status === 'closed') hooks.onLost();
          if (status === 'reconnecting') this.showKept(false);
          if (status === 'connected' && this.host === 'same') this.showKept(true);
        },
        onHost: (host) => {
          this.host = host;
          if (host === 'stopped' || host === 'restarted') this.ended += hooks.onEnded();
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

  private showKept(on: boolean): void {
    if (this.keptTimer) clearTimeout(this.keptTimer);
    this.keptTimer = on ? setTimeout(() => (this.kept = false), keptNoticeMs) : null;
    this.kept = on;
  }
}

export const connection = new ConnectionStore();
