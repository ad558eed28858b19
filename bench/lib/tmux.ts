/**
 * The tmux baseline: what an agent driving a terminal through tmux does per command. One
 * detached server on a private socket (`-L tandem-bench-<pid>`), `send-keys`, then
 * `capture-pane` polled until the command's output line shows. The server is killed on close.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { which } from '../../src/main/shells/resolve.js';
import { benchEnv } from './engine.js';

function run(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('tmux', args, { env, timeout: 10_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

/** The private socket's label and path (`tmux -L <label>`). */
export function tmuxSocketLabel(): string {
  return `tandem-bench-${process.pid}`;
}

export function tmuxSocketPath(): string {
  return join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${process.getuid?.() ?? 0}`, tmuxSocketLabel());
}

export function tmuxAvailable(): boolean {
  return which('tmux') !== null;
}

export class TmuxLoop {
  private readonly socket = tmuxSocketLabel();
  private counter = 0;
  private alive = false;

  private constructor(private readonly env: NodeJS.ProcessEnv) {}

  static async start(home: string): Promise<TmuxLoop> {
    const env = { ...benchEnv(home), TMUX: undefined, PS1: '$ ' };
    const loop = new TmuxLoop(env);
    loop.alive = true;
    try {
      await run(['-L', loop.socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'bench', '-x', '160', '-y', '50', 'bash --noprofile --norc -i'], env);
      // The first prompt, then one untimed command so the pane is in its steady state.
      await loop.roundTrip();
    } catch (error) {
      await loop.close();
      throw error;
    }
    return loop;
  }

  private tmux(...args: string[]): Promise<string> {
    return run(['-L', this.socket, ...args], this.env);
  }

  /** `echo hi-N` through send-keys, polling capture-pane until the line `hi-N` is on screen. */
  async roundTrip(): Promise<void> {
    const token = `hi-${++this.counter}`;
    await this.tmux('send-keys', '-t', 'bench', `echo ${token}`, 'Enter');
    const deadline = performance.now() + 10_000;
    for (;;) {
      const screen = await this.tmux('capture-pane', '-p', '-t', 'bench');
      if (screen.split('\n').some((line) => line.trimEnd() === token)) return;
      if (performance.now() > deadline) throw new Error(`tmux: "${token}" did not show within 10 s`);
    }
  }

  async close(): Promise<void> {
    if (!this.alive) return;
    this.alive = false;
    await this.tmux('kill-server').catch(() => undefined);
    // tmux leaves the socket file of a killed server behind; it is ours alone.
    rmSync(tmuxSocketPath(), { force: true });
  }
}

/** The tmux baseline when tmux is installed and starts; otherwise null, with the reason in `notes`. */
export async function startTmuxBaseline(home: string, notes: string[]): Promise<TmuxLoop | null> {
  if (!tmuxAvailable()) {
    notes.push('tmux is not installed: no tmux baseline');
    return null;
  }
  try {
    return await TmuxLoop.start(home);
  } catch (error) {
    notes.push(`tmux baseline failed to start: ${(error as Error).message}`);
    return null;
  }
}
