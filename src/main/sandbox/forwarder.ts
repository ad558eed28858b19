/**
 * The way out of a confined terminal with the network on (Linux): resources/sandbox/forward.pl,
 * started from outside once bubblewrap's init runs, enters the sandbox's network namespace,
 * listens on the loopback port the proxy variables name, and relays each connection to the
 * terminal's proxy (proxy.ts) on its Unix socket. It lives outside the sandbox's pid namespace,
 * so nothing inside can see, signal or replace it; it is a perl start, not a runtime's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { resourcesDir } from '../resources.js';

export interface ForwarderOptions {
  /** bubblewrap's init: a process in the sandbox's network namespace. */
  init: number;
  /** The loopback port inside. */
  port: number;
  /** The proxy's Unix socket on the host. */
  socket: string;
  /** The command before its arguments (default `perl forward.pl`). */
  helper?: readonly string[];
}

export class NetForwarder {
  /** null once it listens; else why it could not (it has ended then). */
  readonly ready: Promise<string | null>;
  private readonly child: ChildProcess | null = null;

  constructor(opts: ForwarderOptions) {
    let namespace: number;
    try {
      namespace = statSync(`/proc/${opts.init}/ns/net`).ino;
    } catch {
      this.ready = Promise.resolve('the sandbox ended before its network could be set up');
      return;
    }
    const [command, ...args] = opts.helper ?? ['perl', join(resourcesDir(), 'sandbox', 'forward.pl')];
    const child = spawn(command!, [...args, process.arch, String(opts.init), String(namespace), String(opts.port), opts.socket], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    this.child = child;
    child.stdin!.on('error', () => {});
    this.ready = new Promise((resolve) => {
      const lines = createInterface({ input: child.stdout! });
      lines.once('line', (line) => resolve(line === 'ready' ? null : line));
      child.once('error', (error) => resolve(`the forwarder could not be started (${error.message}; is perl installed?)`));
      child.once('exit', () => resolve('the forwarder ended before it listened'));
    });
  }

  /** Ends the relay and every connection through it. */
  close(): void {
    if (!this.child) return;
    this.child.stdin!.destroy();
    this.child.kill('SIGKILL');
  }
}
