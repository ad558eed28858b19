/**
 * The remote machine's side of `tandem host --stdio`: the per-user daemon (the same host as
 * `tandem serve`, without a browser UI: agents pair with it through its own discovery, bridge
 * and tokens) listening on a Unix socket in a 0700 directory of the state directory, and the
 * relay that starts or finds it and pipes the ssh session's stdin/stdout to that socket. The
 * relay holds nothing: when ssh drops, the daemon's terminals keep running.
 */
import { spawn } from 'node:child_process';
import { closeSync, lstatSync, mkdirSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { stateDir } from '../state-dir.js';
import { systemClock } from '../clock.js';
import { LinkServer, type LinkServerOptions } from './server.js';

/** The default idle lifetime: a daemon with no link for this long stops (and closes its terminals). */
export const defaultIdleMinutes = 24 * 60;

export interface LinkPaths {
  dir: string;
  socket: string;
  log: string;
}

/** `<state>/link`, 0700 and this user's, or a sentence saying why it cannot be used. */
export function linkPaths(env: NodeJS.ProcessEnv): LinkPaths {
  const home = env.HOME ?? env.USERPROFILE ?? '';
  const dir = join(stateDir({ platform: process.platform, env, home }), 'link');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.() ?? -1;
  // The socket is the daemon's only door: whoever can reach it drives this user's terminals.
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw new Error(`${dir} must be a directory of this user that nobody else can enter (mode 0700); Tandem will not listen or connect there.`);
  }
  const socket = join(dir, 'host.sock');
  if (Buffer.byteLength(socket) > 103) throw new Error(`The link socket path ${socket} is too long for a Unix socket; set TANDEM_HOME to a shorter directory.`);
  return { dir, socket, log: join(dir, 'daemon.log') };
}

/** What the daemon needs of the host it serves (src/main/runtime.ts's Runtime is one). */
export interface DaemonRuntime {
  host: LinkServerOptions['host'];
  dispatch: { agents?: LinkServerOptions['agents'] };
  stop(): Promise<void>;
}

export interface DaemonOptions {
  env: NodeJS.ProcessEnv;
  idleMinutes: number;
  start: () => Promise<DaemonRuntime>;
  log: (line: string) => void;
}

/** Runs the daemon until it has been idle for its lifetime; resolves with its exit code. */
export async function runDaemon(opts: DaemonOptions): Promise<number> {
  const paths = linkPaths(opts.env);
  const runtime = await opts.start();
  const server = createServer();
  let link: LinkServer | null = null;
  const stopped = new Promise<number>((resolveStop) => {
    const stop = (why: string) => {
      opts.log(`tandem host: ${why}; stopping.`);
      link?.close();
      server.close();
      try {
        unlinkSync(paths.socket);
      } catch {
        // already gone
      }
      runtime.stop().then(
        () => resolveStop(0),
        () => resolveStop(1),
      );
    };
    link = new LinkServer({
      host: runtime.host,
      agents: runtime.dispatch.agents,
      clock: systemClock,
      version: runtime.host.version,
      idleMs: opts.idleMinutes * 60_000,
      onIdle: () => stop(`no link for ${opts.idleMinutes} minutes`),
      log: opts.log,
    });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  });
  await listenReplacingStale(server, paths.socket);
  server.on('connection', (socket: Socket) => link!.accept(socket));
  opts.log(`tandem host: listening on ${paths.socket} (pid ${process.pid}).`);
  return await stopped;
}

/** A socket file nobody answers on is a dead daemon's: remove it and listen. */
async function listenReplacingStale(server: Server, path: string): Promise<void> {
  const listen = () =>
    new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolveListen();
      });
    });
  try {
    await listen();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    if (await answers(path)) throw new Error('Another tandem host daemon already listens on this machine.');
    unlinkSync(path);
    await listen();
  }
}

function answers(path: string): Promise<boolean> {
  return new Promise((resolveAnswers) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolveAnswers(true);
    });
    socket.once('error', () => resolveAnswers(false));
  });
}

export interface RelayOptions {
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  err: (line: string) => void;
  /** How to start the daemon (this same `tandem`, `host --daemon`). */
  daemonCommand: { file: string; args: string[] };
  /** How long to wait for a daemon being started (default 30 s). */
  startWaitMs?: number;
}

/** `tandem host --stdio`: connects stdin/stdout to this user's daemon, starting it if none runs. */
export async function runRelay(opts: RelayOptions): Promise<number> {
  let paths: LinkPaths;
  try {
    paths = linkPaths(opts.env);
  } catch (error) {
    opts.err(`tandem host: ${(error as Error).message}`);
    return 1;
  }
  let socket = await tryConnect(paths.socket);
  if (!socket) {
    const logFd = openSync(paths.log, 'w', 0o600);
    const child = spawn(opts.daemonCommand.file, opts.daemonCommand.args, { detached: true, stdio: ['ignore', logFd, logFd], env: opts.env });
    closeSync(logFd);
    let exited = false;
    child.on('exit', () => {
      exited = true;
    });
    child.on('error', () => {
      exited = true;
    });
    child.unref();
    const deadline = Date.now() + (opts.startWaitMs ?? 30_000);
    while (!socket && !exited && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      socket = await tryConnect(paths.socket);
    }
    if (!socket) {
      const said = lastLine(paths.log);
      opts.err(`tandem host: the host daemon did not start${said ? `: ${said}` : ''} (log: ${paths.log}).`);
      return 1;
    }
  }
  const conn = socket;
  return await new Promise<number>((resolveRelay) => {
    conn.on('data', (chunk: Buffer) => {
      // Backpressure: stdout (ssh's channel) full holds the daemon's socket.
      if (!opts.stdout.write(chunk)) {
        conn.pause();
        opts.stdout.once('drain', () => conn.resume());
      }
    });
    opts.stdin.on('data', (chunk: Buffer) => {
      if (!conn.write(chunk)) {
        opts.stdin.pause();
        conn.once('drain', () => opts.stdin.resume());
      }
    });
    opts.stdin.on('end', () => conn.end());
    conn.on('error', () => undefined);
    conn.on('close', () => resolveRelay(0));
  });
}

function tryConnect(path: string): Promise<Socket | null> {
  return new Promise((resolveConnect) => {
    const socket = connect(path);
    socket.once('connect', () => resolveConnect(socket));
    socket.once('error', () => resolveConnect(null));
  });
}

function lastLine(path: string): string {
  try {
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    return (lines[lines.length - 1] ?? '').slice(0, 300);
  } catch {
    return '';
  }
}
