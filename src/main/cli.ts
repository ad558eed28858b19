/**
 * The `tandem` command (bin/tandem.js loads the built copy of this file, out/main/cli.js).
 * Plain Node: it must never import electron.
 *
 *   tandem serve [--port N] [--allow-origin URL]... [--trust-local-agents [--agent-sandbox MODE]]
 *   tandem mcp            (the stdio bridge for agents; the agent layer provides it)
 *   tandem host --stdio   (the remote end of `tandem serve --machine`: src/main/remote)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runBridge } from './agent/bridge/bridge.js';
import { InstanceConflictError } from './host/instance.js';
import type { BridgeCommand } from './launch/bridge-command.js';
import { bridgeCommand } from './launch/bridge-command.js';
import { which } from './shells/resolve.js';
import { type Runtime, startRuntime } from './runtime.js';
import { SANDBOX_MODES, type SandboxMode } from './sandbox/types.js';
import { normalizeOrigin } from './web/origin.js';
import { defaultIdleMinutes, runDaemon, runRelay } from './remote/daemon.js';
import { machineNamePattern } from './remote/machine.js';
import type { RemoteMachines } from './remote/machines.js';
import { startRemoteMachines } from './remote/setup.js';

export interface ServeOptions {
  port: number;
  allowOrigins: string[];
  /** For the agent layer: allow every local pairing request and skip approvals. */
  trustLocalAgents: boolean;
  /** The sandbox of trusted agents' terminals (`--agent-sandbox`); off unless given. */
  agentSandbox?: SandboxMode;
  /** Remote machines (`--machine NAME=DESTINATION`): their terminals join this one's. */
  machines?: Array<{ name: string; destination: string }>;
}

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
  /** Whether `out` is a terminal: only then does serve print a login link after the first (SIGUSR2). */
  outIsTerminal?: boolean;
}

const usage = `Usage:
  tandem serve [--port N] [--allow-origin URL]... [--trust-local-agents [--agent-sandbox MODE]] [--machine NAME=DESTINATION]...
      Runs Tandem headless and serves its UI to a browser on 127.0.0.1.
      --port N               listen on port N (default: a free port)
      --allow-origin URL     also accept requests from pages at this origin (repeatable)
      --trust-local-agents   allow every local agent's pairing request, without approvals
      --agent-sandbox MODE   confine trusted agents' terminals: off (default), workspace-write, read-only
      --machine NAME=DEST    also show a remote machine's terminals: runs \`ssh -T DEST tandem host --stdio\`
                             (repeatable; DEST as you would type it to ssh)
  tandem host --stdio [--idle-timeout MINUTES]
      The remote end of --machine: starts or finds this user's host daemon and links it to stdin/stdout.
      --idle-timeout MIN     the daemon stops after MIN minutes with no link (default ${defaultIdleMinutes})
  tandem mcp [--name NAME]
      The stdio bridge for coding agents (MCP): configure your agent to start it.
      --name NAME            the name Tandem shows for this agent (default: the client's own)`;

/** Where the built files live: this file is out/main/cli.js in a build. */
function buildPaths(): { root: string; rendererDir: string } {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = resolve(here, '..', '..');
  return { root, rendererDir: join(root, 'out', 'renderer') };
}

export function parseServeArgs(args: string[]): ServeOptions {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      'allow-origin': { type: 'string', multiple: true },
      'trust-local-agents': { type: 'boolean' },
      'agent-sandbox': { type: 'string' },
      machine: { type: 'string', multiple: true },
    },
    strict: true,
    allowPositionals: false,
  });
  let port = 0;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^[0-9]+$/.test(values.port) || port > 65535) throw new Error(`--port ${values.port} is not a port number (0-65535).`);
  }
  const allowOrigins = (values['allow-origin'] ?? []).map((origin) => {
    const normalized = normalizeOrigin(origin);
    if (!normalized) throw new Error(`--allow-origin ${origin} is not an origin such as http://localhost:5173.`);
    return normalized;
  });
  const mode = values['agent-sandbox'];
  if (mode !== undefined && !(SANDBOX_MODES as readonly string[]).includes(mode))
    throw new Error(`--agent-sandbox ${mode} is not one of ${SANDBOX_MODES.join(', ')}.`);
  const machines = (values.machine ?? []).map(parseMachine);
  const names = new Set<string>();
  for (const { name } of machines) {
    if (names.has(name)) throw new Error(`--machine ${name} is given twice.`);
    names.add(name);
  }
  return {
    port,
    allowOrigins,
    trustLocalAgents: values['trust-local-agents'] ?? false,
    agentSandbox: mode as SandboxMode | undefined,
    ...(machines.length > 0 ? { machines } : {}),
  };
}

/** `NAME=DESTINATION`; a destination is one ssh argument, never an option (it must not start with `-`). */
export function parseMachine(spec: string): { name: string; destination: string } {
  const at = spec.indexOf('=');
  const name = at > 0 ? spec.slice(0, at) : '';
  const destination = at > 0 ? spec.slice(at + 1) : '';
  if (!machineNamePattern.test(name) || name === 'local')
    throw new Error(`--machine ${spec}: the name must be 1-32 letters, digits, '.', '_' or '-' (not "local"), as in --machine dev=me@devbox.`);
  if (!destination || destination.startsWith('-') || /\s/.test(destination))
    throw new Error(`--machine ${spec}: the destination must be an ssh destination such as me@devbox or a Host of ~/.ssh/config.`);
  return { name, destination };
}

/**
 * The remote machines of a serve: `TANDEM_SSH` (the ssh command and options, split at spaces)
 * and `TANDEM_REMOTE_COMMAND` (what runs there) change how they are reached, for tests.
 */
export function startMachines(machines: Array<{ name: string; destination: string }>, io: CliIo, version: string): RemoteMachines {
  // Not kept in any settings: startServe's runtime keeps the app's machines (src/main/remote/setup.ts).
  return startRemoteMachines({ env: io.env, version, log: io.err, given: machines, settings: null });
}

/** Builds the UI when out/renderer is missing and the sources are here; false when it cannot. */
function ensureRenderer(root: string, rendererDir: string, io: CliIo): boolean {
  if (existsSync(join(rendererDir, 'index.html'))) return true;
  const canBuild = existsSync(join(root, 'electron.vite.config.ts')) && existsSync(join(root, 'node_modules', '.bin', 'electron-vite'));
  if (!canBuild) {
    io.err(`The Tandem UI is not built (${rendererDir} is missing); run \`npm run build\` in ${root}.`);
    return false;
  }
  io.err('Building the Tandem UI (npx electron-vite build)…');
  const result = spawnSync('npx', ['electron-vite', 'build'], { cwd: root, stdio: ['ignore', 2, 2], shell: process.platform === 'win32' });
  if (result.status !== 0 || !existsSync(join(rendererDir, 'index.html'))) {
    io.err(`Building the UI failed; run \`npm run build\` in ${root} and try again.`);
    return false;
  }
  return true;
}

/** Starts `tandem serve`: the shared runtime with the browser UI. Throws InstanceConflictError. */
export function startServe(opts: ServeOptions, io: CliIo, rendererDir = buildPaths().rendererDir): Promise<Runtime> {
  return startRuntime({
    bridge: serveBridge(io.env),
    env: io.env,
    port: opts.port,
    allowOrigins: opts.allowOrigins,
    trustLocalAgents: opts.trustLocalAgents,
    agentSandbox: opts.agentSandbox,
    rendererDir,
    // The given machines beside the ones the person added in the app (kept in the settings).
    machines: opts.machines ?? [],
    log: io.err,
  });
}

/** `tandem mcp` when `tandem` on PATH is this copy, else node with this copy's absolute path. */
function serveBridge(env: NodeJS.ProcessEnv): BridgeCommand {
  const binScript = join(buildPaths().root, 'bin', 'tandem.js');
  const real = (path: string | null) => {
    try {
      return path ? realpathSync(path) : null;
    } catch {
      return null;
    }
  };
  const onPath = real(which('tandem', env.PATH ?? ''));
  return bridgeCommand({
    platform: process.platform,
    electron: false,
    packaged: false,
    execPath: process.execPath,
    binScript,
    appImage: undefined,
    nodeOnPath: null,
    tandemOnPath: onPath !== null && onPath === real(binScript),
  });
}

async function serve(args: string[], io: CliIo): Promise<number> {
  let opts: ServeOptions;
  try {
    opts = parseServeArgs(args);
  } catch (error) {
    io.err(`tandem serve: ${(error as Error).message}`);
    io.err(usage);
    return 2;
  }
  const { root, rendererDir } = buildPaths();
  if (!ensureRenderer(root, rendererDir, io)) return 1;
  // The stop signals are ours before anything is published: instance.json (and the ready line)
  // appear before the lines below run, and a SIGTERM that came first killed the process with
  // Node's default action, dropping a bridge mid-hello without the shutdown line (issue 22).
  let signalled: NodeJS.Signals | null = null;
  let onStopSignal: (signal: NodeJS.Signals) => void = (signal) => {
    // A second one while starting: stop waiting (the lock is released with the process).
    if (signalled) process.exit(130);
    signalled = signal;
  };
  const stopSignal = (signal: NodeJS.Signals) => onStopSignal(signal);
  const stopSignals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of stopSignals) process.on(signal, stopSignal);
  let running: Runtime;
  try {
    running = await startServe(opts, io, rendererDir);
  } catch (error) {
    for (const signal of stopSignals) process.off(signal, stopSignal);
    if (error instanceof InstanceConflictError) {
      io.err(error.message);
      return 1;
    }
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      io.err(`Port ${opts.port} is in use; choose another with --port, or omit it for a free port.`);
      return 1;
    }
    io.err(`tandem serve could not start: ${(error as Error).message}`);
    return 1;
  }
  // A bug in one request must not take every terminal down with the process.
  process.on('unhandledRejection', (reason) => io.err(`tandem: unexpected error (kept running): ${(reason as Error)?.stack ?? String(reason)}`));
  io.out(`Tandem is running. Open this link in your browser (it logs you in once, within 10 minutes):`);
  io.out(`  ${running.server.loginUrl()}`);
  io.out(
    `Through an SSH tunnel (ssh -L 8080:127.0.0.1:${running.server.port} host), use the same link with your local port. Ctrl+C stops Tandem and closes its terminals.`,
  );
  io.out(`Another link: "open in another tab" in Tandem, or kill -USR2 ${process.pid} (logs every browser out and prints a new link here).`);
  // A spent link is worthless, so what serve printed may sit in a log. A fresh one goes only to a
  // terminal: a file or pipe (nohup.out, a journal) is where an agent could read it and log in
  // first. Not SIGUSR1: Node starts its inspector on that one.
  const onNewLink = () => {
    running.server.auth.revokeAll();
    if (io.outIsTerminal) {
      io.out('Every browser was logged out. A new login link (once, within 10 minutes):');
      io.out(`  ${running.server.loginUrl()}`);
    } else {
      io.err('Every browser was logged out. No new link is printed: the output of tandem serve is not a terminal; restart it in one.');
    }
  };
  if (process.platform !== 'win32') process.on('SIGUSR2', onNewLink);

  return await new Promise<number>((resolveExit) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        // A second signal: stop waiting for the teardown.
        running.lock.release();
        resolveExit(130);
        return;
      }
      stopping = true;
      io.err(`${signal}: closing Tandem's terminals…`);
      running.stop().then(
        () => resolveExit(0),
        (error: unknown) => {
          io.err(`Shutdown failed: ${(error as Error).message}`);
          running.lock.release();
          resolveExit(1);
        },
      );
    };
    onStopSignal = onSignal;
    // A signal during the start stops now that there is something to stop.
    if (signalled) onSignal(signalled);
  });
}

async function mcp(args: string[], io: CliIo): Promise<number> {
  let name: string | undefined;
  try {
    const { values } = parseArgs({ args, options: { name: { type: 'string' } }, strict: true, allowPositionals: false });
    name = values.name;
  } catch (error) {
    io.err(`tandem mcp: ${(error as Error).message}`);
    io.err(usage);
    return 2;
  }
  // stdout carries MCP: everything for people goes to stderr.
  await runBridge({ name, env: io.env });
  return 0;
}

/**
 * `tandem host --stdio`: stdout carries only the link (src/main/remote/frame.ts), so every
 * word for people goes to stderr, which ssh shows on the local side.
 */
async function host(args: string[], io: CliIo): Promise<number> {
  let values: { stdio?: boolean; daemon?: boolean; 'idle-timeout'?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: { stdio: { type: 'boolean' }, daemon: { type: 'boolean' }, 'idle-timeout': { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    io.err(`tandem host: ${(error as Error).message}`);
    io.err(usage);
    return 2;
  }
  const idle = values['idle-timeout'] ?? String(defaultIdleMinutes);
  if (!/^[0-9]{1,6}$/.test(idle) || Number(idle) < 1) {
    io.err(`tandem host: --idle-timeout ${idle} is not a number of minutes (1 or more).`);
    return 2;
  }
  if (values.daemon) {
    process.on('unhandledRejection', (reason) => io.err(`tandem host: unexpected error (kept running): ${(reason as Error)?.stack ?? String(reason)}`));
    try {
      return await runDaemon({
        env: io.env,
        idleMinutes: Number(idle),
        log: io.err,
        // The remote end reaches no machines of its own.
        start: () =>
          startRuntime({ bridge: serveBridge(io.env), env: io.env, port: 0, allowOrigins: [], trustLocalAgents: false, rendererDir: null, machines: false }),
      });
    } catch (error) {
      io.err(`tandem host: ${(error as Error).message}`);
      return 1;
    }
  }
  if (!values.stdio) {
    io.err('tandem host: say --stdio (it is started by tandem serve --machine on another computer, through ssh).');
    return 2;
  }
  const script = process.argv[1] ?? join(buildPaths().root, 'bin', 'tandem.js');
  return await runRelay({
    env: io.env,
    stdin: process.stdin,
    stdout: process.stdout,
    err: io.err,
    daemonCommand: { file: process.execPath, args: [script, 'host', '--daemon', '--idle-timeout', idle] },
  });
}

/** Runs the CLI and returns its exit code. */
export async function main(argv: string[], io: CliIo = defaultIo()): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return await serve(rest, io);
    case 'mcp':
      return await mcp(rest, io);
    case 'host':
      return await host(rest, io);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.out(usage);
      return command === undefined ? 2 : 0;
    default:
      io.err(`tandem: unknown command "${command}".`);
      io.err(usage);
      return 2;
  }
}

function defaultIo(): CliIo {
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    outIsTerminal: process.stdout.isTTY === true,
  };
}
