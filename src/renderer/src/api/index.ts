/**
 * How the UI reaches the host: `connect()` picks Electron IPC when the preload bridge is
 * there (`window.tandem.call`), otherwise the WebSocket of `tandem serve` (after logging the
 * tab in, see session.ts). The UI talks to `TandemApi` and does not care which it got.
 */
import type { TandemApi } from '../../../shared/contract';
import { IpcClient } from './ipc-client';
import { browserEnvironment, checkSession, establishSession, forgetSession, proveRun } from './session';
import { type ConnectionStatus, type HostState, WsClient } from './ws-client';

export type { TandemApi } from '../../../shared/contract';
export { TandemCallError } from './errors';
export type { ConnectionStatus, HostState } from './ws-client';

export interface TandemConnection extends TandemApi {
  readonly transport: 'ipc' | 'websocket';
  close(): void;
}

export interface ConnectOptions {
  /** Runs after the browser transport reconnected: list the terminals and re-attach the views. */
  onReconnect?: () => void | Promise<void>;
  /** Connection state of the browser transport (IPC is always connected). */
  onStatus?: (status: ConnectionStatus, detail?: string) => void;
  /** What became known about the Tandem the browser transport lost (see HostState). */
  onHost?: (state: HostState) => void;
  /**
   * The `tandem serve` origin (`http://127.0.0.1:PORT`) when the page is served from
   * elsewhere (a UI dev server; start serve with --allow-origin for it). Default: the page's own.
   */
  server?: string;
}

export async function connect(opts: ConnectOptions = {}): Promise<TandemConnection> {
  const bridge = typeof window !== 'undefined' ? window.tandem : undefined;
  if (bridge && typeof bridge.call === 'function') return new IpcClient(bridge);

  const env = browserEnvironment();
  const server = (opts.server ?? window.location.origin).replace(/\/+$/, '');
  const secret = await establishSession(env, server);
  return await WsClient.connect({
    onHost: opts.onHost,
    url: `${server.replace(/^http/, 'ws')}/ws`,
    secret,
    onReconnect: opts.onReconnect,
    onStatus: (status, detail) => {
      if (status === 'login_required') forgetSession(env);
      opts.onStatus?.(status, detail);
    },
    checkSession: () => checkSession(env, secret, server),
    // After a lost connection: is this still the run that logged the page in? Asked before the
    // secret goes anywhere (after a crash another user's program may hold the port).
    proveRun: () => proveRun(env, secret, server),
  });
}
