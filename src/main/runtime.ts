/**
 * One running Tandem instance, the same for the desktop app and `tandem serve`: the instance
 * lock, the host, the agent layer, and the loopback HTTP server (/mcp and /pair always; the
 * browser UI and /ws only in `tandem serve`). Plain Node: never imports electron.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadGrammars } from './agent/judge/tree-sitter.js';
import { AgentLayer } from './agent/layer.js';
import { McpSocketEndpoint } from './agent/mcp/mcp-socket.js';
import { bridgeSocketPath } from './launch/socket-path.js';
import { provePath, proveHandler } from './host/instance-proof.js';
import type { BridgeCommand } from './launch/bridge-command.js';
import { forThisHost } from './launch/bridge-command.js';
import type { DispatchOptions } from './host/dispatch.js';
import { TerminalHost } from './host/host.js';
import { InstanceLock } from './host/instance.js';
import { SettingsStore } from './host/settings-store.js';
import type { SandboxMode } from './sandbox/types.js';
import { registerStateDir, stateDir } from './state-dir.js';
import { RecordingStore } from './record/store.js';
import { TranscriptStore } from './host/transcripts.js';
import { systemClock } from './clock.js';
import { WebServer } from './web/server.js';
import type { RemoteMachines } from './remote/machines.js';
import { startRemoteMachines } from './remote/setup.js';
import { type MachineEntry, storedMachines } from '../shared/settings.js';

export interface RuntimeOptions {
  env: NodeJS.ProcessEnv;
  port: number;
  allowOrigins: string[];
  trustLocalAgents: boolean;
  /** The sandbox of trusted agents' terminals; off unless given. */
  agentSandbox?: SandboxMode;
  /** The built renderer to serve to browsers, or null (desktop app: agents only on this port). */
  rendererDir: string | null;
  /** How agents start the stdio bridge, for the ready-to-copy configurations. */
  bridge: BridgeCommand;
  /**
   * Remote machines: the `--machine` ones (this run only), beside the ones kept in the settings
   * (added in the app). `false`: none at all (the remote end's own host, `tandem host --daemon`).
   */
  machines?: readonly MachineEntry[] | false;
  /** Where lines about remote machines go (default stderr). */
  log?: (line: string) => void;
}

export interface Runtime {
  host: TerminalHost;
  agents: AgentLayer;
  server: WebServer;
  /** The stdio bridge's channel, or null when it could not listen (bridges then use HTTP). */
  bridgeChannel: McpSocketEndpoint | null;
  lock: InstanceLock;
  /** What both UI transports pass to their dispatchers. */
  dispatch: DispatchOptions;
  /** Remote machines (null with `machines: false`); `dispatch.remote` is the same. */
  machines: RemoteMachines | null;
  /** Tears the terminals down, closes the server and removes the discovery file. */
  stop(): Promise<void>;
}

/** Starts everything and publishes instance.json. Throws InstanceConflictError when another instance runs. */
export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const lock = new InstanceLock(opts.env);
  lock.acquire();
  // The judge's grammars take 40-80 ms to load (and block the loop for much of it): load them
  // while the rest starts, so no agent's first command pays for it.
  const grammars = loadGrammars().catch(() => null);
  let host: TerminalHost | null = null;
  let agents: AgentLayer | null = null;
  let server: WebServer | null = null;
  let bridgeChannel: McpSocketEndpoint | null = null;
  let machines: RemoteMachines | null = null;
  try {
    const home = opts.env.HOME ?? opts.env.USERPROFILE ?? '';
    const state = stateDir({ platform: process.platform, env: opts.env, home });
    // A state directory of its own (TANDEM_HOME): the person's other instances protect it too.
    registerStateDir(state, home, process.platform, opts.env);
    const settings = new SettingsStore(join(state, 'settings.json'));
    // Recordings and timelines (src/main/record): pruned now and every hour, off the start path.
    const recordings = new RecordingStore(join(state, 'recordings'), { clock: systemClock, bounds: () => settings.get() });
    void recordings.start().catch(() => undefined);
    // The last session's tabs come back as transcripts (src/main/host/transcripts.ts).
    const transcripts = new TranscriptStore({ dir: join(state, 'transcripts'), clock: systemClock, keepHours: () => settings.get().transcriptKeepHours });
    await transcripts.load();
    host = new TerminalHost({ instancePath: lock.path, env: opts.env, settings, recordings, transcripts });
    let isUiCredential: (secret: string) => boolean = () => false;
    agents = new AgentLayer(host, {
      stateDir: state,
      trustLocalAgents: opts.trustLocalAgents,
      trustedSandbox: opts.agentSandbox,
      allowOrigins: opts.allowOrigins,
      isUiCredential: (secret) => isUiCredential(secret),
      bridge: forThisHost(opts.bridge, opts.env),
    });
    const layer = agents;
    const dispatch: DispatchOptions = { agents: layer, stateDir: state };
    if (opts.machines !== false) {
      // Read per connection by both transports: set before any window or browser connects.
      machines = startRemoteMachines({
        env: opts.env,
        version: host.version,
        log: opts.log ?? ((line) => process.stderr.write(`${line}\n`)),
        given: opts.machines ?? [],
        settings,
        refused: refusedMachines(join(state, 'settings.json')),
      });
      dispatch.remote = machines;
    }
    server = await WebServer.start({
      host,
      rendererDir: opts.rendererDir,
      port: opts.port,
      allowOrigins: opts.allowOrigins,
      isAgentToken: (secret) => layer.tokens.identify(secret) !== null,
      dispatch,
    });
    const web = server;
    isUiCredential = (secret) => web.isUiCredential(secret);
    for (const [prefix, handler] of Object.entries(layer.routes())) server.route(prefix, (req, res, url) => handler(req, res, url.pathname));
    // A bridge sends a token over TCP only after this run proves it is the one instance.json names.
    server.route(provePath, proveHandler(lock.instanceKey));
    const base = server.origin;
    const socketAt = bridgeSocketPath(process.platform, lock.dir);
    bridgeChannel = await McpSocketEndpoint.listen(layer.service, {
      path: socketAt.path,
      ownDir: socketAt.dir === lock.dir ? null : socketAt.dir,
      isUiCredential: (secret) => web.isUiCredential(secret),
      pairing: layer.pairing,
    }).catch((error: Error) => {
      process.stderr.write(`tandem: the bridge channel is off (${error.message}); bridges use HTTP.\n`);
      return null;
    });
    await grammars;
    lock.publish({
      pid: process.pid,
      version: host.version,
      mcpUrl: `${base}/mcp`,
      pairUrl: `${base}/pair`,
      ...(bridgeChannel ? { bridgeSocket: bridgeChannel.path } : {}),
      ...(opts.rendererDir ? { uiUrl: `${base}/` } : {}),
    });
    const running = { host, agents, server, bridgeChannel, lock, dispatch, machines };
    let stopping: Promise<void> | null = null;
    return {
      ...running,
      stop: () => {
        stopping ??= (async () => {
          // Discovery first: a bridge starting now finds no instance (not_running, where it
          // looked) instead of one whose channel is closing under it.
          running.lock.unpublish();
          running.machines?.stop();
          await running.bridgeChannel?.close();
          await running.server.close();
          await running.agents.close();
          await running.host.shutdown();
          running.lock.release();
        })();
        return stopping;
      },
    };
  } catch (error) {
    machines?.stop();
    await bridgeChannel?.close();
    await server?.close();
    await agents?.close();
    await host?.shutdown();
    lock.release();
    throw error;
  }
}

/** What settings.json's `machines` holds that is refused (the store keeps the good entries only). */
function refusedMachines(path: string): string[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
  return raw && typeof raw === 'object' ? storedMachines((raw as Record<string, unknown>).machines).refused : [];
}
