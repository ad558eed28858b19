/**
 * The floor under the flood figure: a bare Node process that runs bash in node-pty and sends
 * what one turn of its loop read to one WebSocket client on loopback as a binary UTF-8 frame
 * (the host's output frames are binary UTF-8 too; a frame per read was slower). No emulator,
 * no history, no markers, no PTY thread, no flow control. What the host costs beyond this relay is its own; what this relay
 * costs beyond node-pty read in the bench process is the process hop, the loopback socket and
 * the client, on the same cores as the program writing the stream.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import WebSocket from 'ws';
import { benchEnv } from './engine.js';
import { sleep } from './procs.js';

function relayScript(cols: number, rows: number, cwd: string): string {
  return [
    `const pty = require('node-pty'); const { WebSocketServer } = require('ws');`,
    `const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });`,
    `wss.on('listening', () => process.stdout.write(JSON.stringify({ port: wss.address().port }) + '\\n'));`,
    `wss.on('connection', (ws) => {`,
    `  const proc = pty.spawn('bash', ['--noprofile', '--norc', '-i'], { name: 'xterm-256color', cols: ${cols}, rows: ${rows}, cwd: ${JSON.stringify(cwd)}, env: process.env });`,
    `  let parts = []; const flush = () => { ws.send(Buffer.from(parts.length === 1 ? parts[0] : parts.join(''))); parts = []; };`,
    `  proc.onData((data) => { if (parts.push(data) === 1) setImmediate(flush); });`,
    `  proc.onExit(() => process.exit(0));`,
    `  ws.on('message', (data) => proc.write(String(data)));`,
    `  ws.on('close', () => { try { process.kill(-proc.pid, 'SIGKILL'); } catch {} proc.kill('SIGKILL'); process.exit(0); });`,
    `});`,
  ].join('\n');
}

export class BareWsRelay {
  /** Characters and frames received so far (nothing is retained). */
  received = 0;
  frames = 0;
  private waiter: { needle: string; tail: string; resolve: () => void } | null = null;

  private constructor(
    private readonly child: ChildProcess,
    private readonly ws: WebSocket,
  ) {
    ws.on('message', (raw) => this.onFrame((raw as Buffer).toString('utf8')));
  }

  /** Starts the relay (modules resolved from `root`) and connects to it; resolves at bash's first prompt. */
  static async start(home: string, root: string, cols: number, rows: number): Promise<BareWsRelay> {
    const env = { ...benchEnv(home), TERM: 'xterm-256color', PS1: '$ ' } as Record<string, string>;
    const child = spawn(process.execPath, ['-e', relayScript(cols, rows, home)], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<number>((resolve, reject) => {
      let line = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        line += chunk;
        if (line.includes('\n')) resolve((JSON.parse(line) as { port: number }).port);
      });
      child.once('exit', (code) => reject(new Error(`the bare WebSocket relay exited (${code})`)));
    });
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: false });
    const relay = new BareWsRelay(child, ws);
    const prompt = relay.until('$ ', 10_000);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    await prompt;
    return relay;
  }

  private onFrame(data: string): void {
    this.received += data.length;
    this.frames += 1;
    const waiter = this.waiter;
    if (!waiter) return;
    // Only the seam between frames is joined; a frame is scanned where it lies.
    const seam = waiter.tail + data.slice(0, waiter.needle.length - 1);
    if (seam.includes(waiter.needle) || data.includes(waiter.needle)) {
      this.waiter = null;
      waiter.resolve();
      return;
    }
    const keep = waiter.needle.length - 1;
    waiter.tail = data.length >= keep ? data.slice(-keep) : (waiter.tail + data).slice(-keep);
  }

  /** Resolves when `needle` shows in the output (arm it before the input that causes it). */
  until(needle: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`bare WebSocket relay: no ${JSON.stringify(needle)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = {
        needle,
        tail: '',
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
    });
  }

  type(text: string): void {
    this.ws.send(text);
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => (this.child.exitCode !== null ? resolve() : this.child.once('exit', () => resolve())));
    this.ws.close();
    await Promise.race([exited, sleep(2000)]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}
