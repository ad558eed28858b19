/**
 * Keystroke echo through the WebSocket transport: a client in the bench process types one
 * character (`input`, typed: true) into an attached terminal running `cat` in a real instance
 * (a child process) and times until an output frame brings that character back (the terminal's
 * echo). Baseline, interleaved: the same keystroke written to `cat` on bare node-pty.
 */
import { BarePty } from '../lib/bare-pty.js';
import { HostProcess } from '../lib/host.js';
import { sleep } from '../lib/procs.js';
import type { Figure } from '../lib/types.js';
import { BenchWsClient, waitForText } from '../lib/ws-client.js';

/** Characters that nothing else prints here (cat echoes them and keeps the line until Enter). */
const keys = 'abcdefghijklmnopqrstuvwxyz';
/** Ctrl-U (the tty's line kill, untimed) every this many keystrokes, so cat's pending line stays short. */
const lineLength = 50;

export const keystrokeFigure: Figure = {
  id: 'keystroke',
  title: 'Keystroke echo over WebSocket',
  rows: [
    {
      name: 'keystroke.websocket.echo',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 5 },
      description:
        'one typed character from a WebSocket client to `cat` in the host process until its echo arrives in an output frame; baseline: the same on bare node-pty',
    },
  ],
  async run(opts) {
    const iterations = opts.pick(200, 20);
    const warmup = opts.pick(10, 3);
    let host: HostProcess | null = null;
    let client: BenchWsClient | null = null;
    let bare: BarePty | null = null;
    try {
      host = await HostProcess.start(opts.home, opts.root);
      client = await BenchWsClient.connect(host.info.origin, host.info.login);
      const ws = client;
      const terminal = await ws.call<{ id: string }>('create', { shell: 'bash', cwd: opts.home, title: 'bench keystroke' });
      const { attachmentId } = await ws.call<{ attachmentId: string }>('attach', { id: terminal.id });
      // At the prompt, then `cat` in the foreground (the marker is printed by the shell before cat starts).
      const ready = waitForText(ws, attachmentId, 'BENCH-CAT-END', 10_000);
      ws.type(attachmentId, `printf 'BENCH%sEND\\n' -CAT-; cat\r`);
      await ready;
      await sleep(100);
      bare = new BarePty('cat', [], opts.home);
      await bare.writeAndExpect('z', 'z');

      const viaWs: number[] = [];
      const floor: number[] = [];
      let typed = 0;
      for (let i = 0; i < warmup + iterations; i++) {
        const key = keys[i % keys.length]!;
        if (typed > 0 && typed % lineLength === 0) {
          // The kernel erases the pending line (its echo is backspaces, no letters); cat prints nothing.
          ws.type(attachmentId, '\x15');
          bare.write('\x15');
          await sleep(30);
        }
        typed++;
        const echoed = waitForText(ws, attachmentId, key, 5000);
        let t0 = performance.now();
        ws.type(attachmentId, key);
        await echoed;
        const wsMs = performance.now() - t0;
        t0 = performance.now();
        await bare.writeAndExpect(key, key);
        const bareMs = performance.now() - t0;
        if (i < warmup) continue;
        viaWs.push(wsMs);
        floor.push(bareMs);
      }
      return [{ row: 'keystroke.websocket.echo', samples: viaWs, baselines: [{ name: 'bare node-pty, cat', samples: floor }] }];
    } finally {
      await client?.close();
      await host?.stop();
      await bare?.close();
    }
  },
};
