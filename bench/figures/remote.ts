/**
 * Remote machines over a real sshd on 127.0.0.1 (tests/support/sshd.ts: root, Debian's
 * openssh-server, a second local user; skipped otherwise): a typed character's echo from `cat`
 * in a remote terminal (the local Dispatcher, the link, ssh, the remote daemon) against the sum
 * of its parts measured in the same run, interleaved: the same keystroke on a local terminal
 * plus one character's round trip through an open `ssh -T host cat`. And the time from killing
 * the ssh process to the link being up again with its session resumed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Dispatcher, type UiClient } from '../../src/main/host/dispatch.js';
import { TerminalHost } from '../../src/main/host/host.js';
import { RemoteMachine } from '../../src/main/remote/machine.js';
import { RemoteMachines } from '../../src/main/remote/machines.js';
import { systemClock } from '../../src/main/clock.js';
import type { EventName, EventPayload } from '../../src/shared/contract.js';
import { requireSsh, startSshd, type Sshd } from '../../tests/support/sshd.js';
import { sleep } from '../lib/procs.js';
import type { Figure } from '../lib/types.js';

const keys = 'abcdefghijklmnopqrstuvwxyz';

/** Output per view, with a waiter for the next frame that holds a text. */
class BenchUi {
  private readonly waiters = new Set<{ id: string; text: string; resolve: () => void }>();
  dispatcher!: Dispatcher;
  readonly client: UiClient = {
    id: `bench-${process.pid}`,
    send: <K extends EventName>(event: K, payload: EventPayload<K>) => {
      if (event !== 'output') return;
      const { attachmentId, seq, data } = payload as EventPayload<'output'>;
      for (const waiter of [...this.waiters]) {
        if (waiter.id === attachmentId && data.includes(waiter.text)) {
          this.waiters.delete(waiter);
          waiter.resolve();
        }
      }
      void this.dispatcher.call('ack', { attachmentId, seq }).catch(() => undefined);
    },
  };
  next(id: string, text: string, ms = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = { id, text, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => (this.waiters.delete(waiter), reject(new Error(`no ${JSON.stringify(text)} within ${ms} ms`))), ms);
      this.waiters.add(waiter);
    });
  }
}

/** `ssh -T host cat`: one character out and back through an open ssh session. */
class SshCat {
  private readonly child: ChildProcess;
  private waiting: { text: string; resolve: () => void } | null = null;
  constructor(sshd: Sshd) {
    this.child = spawn(sshd.ssh[0]!, [...sshd.ssh.slice(1), '-T', sshd.destination, 'exec cat'], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.child.stdout!.on('data', (chunk: Buffer) => {
      if (this.waiting && chunk.toString().includes(this.waiting.text)) {
        const { resolve } = this.waiting;
        this.waiting = null;
        resolve();
      }
    });
  }
  roundTrip(key: string, ms = 30_000): Promise<number> {
    return new Promise((resolve, reject) => {
      const t0 = performance.now();
      const timer = setTimeout(() => ((this.waiting = null), reject(new Error(`ssh cat: no ${JSON.stringify(key)} within ${ms} ms`))), ms);
      this.waiting = { text: key, resolve: () => (clearTimeout(timer), resolve(performance.now() - t0)) };
      this.child.stdin!.write(key);
    });
  }
  close(): void {
    this.child.kill('SIGTERM');
  }
}

export const remoteFigure: Figure = {
  id: 'remote',
  title: 'Remote machines over ssh',
  rows: [
    {
      name: 'remote.keystroke.echo',
      unit: 'ms',
      target: { metric: 'over', op: '<=', value: 1 },
      description:
        'one typed character into `cat` on a remote terminal (link over ssh to 127.0.0.1) until its echo frame; baseline: the same keystroke on a local terminal plus one character through an open `ssh -T host cat`, interleaved',
    },
    {
      name: 'remote.flood',
      unit: 'MiB/s',
      target: { metric: 'ratio', op: '>=', value: 0.8 },
      description:
        '`cat` of a file of printable lines on a remote terminal until its last line reaches the view (acknowledged as applied); baseline: `ssh -T host cat` of the same file',
    },
    {
      name: 'remote.reconnect',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 3000 },
      description: 'ssh process killed until the link is up again with its session resumed (backoff 250 ms + ssh + hello)',
    },
  ],
  async run(opts) {
    const ssh = requireSsh();
    if (ssh.skip)
      return ['remote.keystroke.echo', 'remote.flood', 'remote.reconnect'].map((row) => ({ row, status: 'skipped' as const, note: ssh.reason ?? undefined }));
    const iterations = opts.pick(200, 20);
    const warmup = opts.pick(10, 3);
    const reconnects = opts.pick(20, 3);
    const sshd = await startSshd('tandemrembench');
    const host = new TerminalHost({ env: { ...process.env, HOME: opts.home } });
    const machines = new RemoteMachines();
    const machine = new RemoteMachine({
      name: 'bench',
      destination: sshd.destination,
      ssh: sshd.ssh,
      remoteCommand: sshd.remoteTandem,
      clock: systemClock,
      version: host.version,
    });
    machines.add(machine);
    const ui = new BenchUi();
    ui.dispatcher = new Dispatcher(host, ui.client, { remote: machines });
    let cat: SshCat | null = null;
    try {
      machines.start();
      for (let i = 0; i < 600 && machine.status !== 'connected'; i++) await sleep(100);
      if (machine.status !== 'connected') throw new Error(`the link did not come up: ${machine.problem ?? machine.status}`);
      const open = async (args: { machine?: string }) => {
        const view = (await ui.dispatcher.call('create', { ...args, shell: 'bash', cwd: undefined })) as { id: string };
        const { attachmentId } = (await ui.dispatcher.call('attach', { id: view.id })) as { attachmentId: string };
        const ready = ui.next(attachmentId, 'BENCH-CAT-END', 60_000);
        await ui.dispatcher.call('input', { attachmentId, data: `printf 'BENCH%sEND\\n' -CAT-; cat\r`, typed: true });
        await ready;
        return attachmentId;
      };
      opts.log('remote: link up; opening a remote and a local terminal');
      const remoteView = await open({ machine: 'bench' });
      const localView = await open({});
      await sleep(200);
      cat = new SshCat(sshd);
      await cat.roundTrip('z');
      const type = async (attachmentId: string, key: string) => {
        const t0 = performance.now();
        const echoed = ui.next(attachmentId, key);
        await ui.dispatcher.call('input', { attachmentId, data: key, typed: true });
        await echoed;
        return performance.now() - t0;
      };
      opts.log('remote: keystrokes');
      const remote: number[] = [];
      const parts: number[] = [];
      for (let i = 0; i < warmup + iterations; i++) {
        const key = keys[i % keys.length]!;
        if (i > 0 && i % 50 === 0) {
          for (const view of [remoteView, localView]) await ui.dispatcher.call('input', { attachmentId: view, data: '\x15', typed: true });
          await sleep(30);
        }
        const r = await type(remoteView, key);
        const l = await type(localView, key);
        const s = await cat.roundTrip(key);
        if (i >= warmup) {
          remote.push(r);
          parts.push(l + s);
        }
      }
      // Flood: a file of printable lines on the remote, cat in the remote terminal vs through plain ssh.
      const mib = opts.pick(32, 8);
      const file = `/tmp/tandem-bench-flood-${process.pid}.txt`;
      sshd.run(`yes 'tandem remote flood line 0123456789 abcdefghijklmnopqrstuvwxyz' | head -c ${mib * 1024 * 1024} > ${file}`);
      for (const view of [remoteView, localView]) await ui.dispatcher.call('input', { attachmentId: view, data: '\x03', typed: true });
      await sleep(300);
      opts.log('remote: flood');
      const flood: number[] = [];
      const plain: number[] = [];
      const local: number[] = [];
      for (let i = 0; i < opts.pick(5, 2); i++) {
        const t0 = performance.now();
        const done = ui.next(remoteView, `FLOOD-${i}-END`, 300_000);
        await ui.dispatcher.call('input', { attachmentId: remoteView, data: `cat ${file}; echo FLOOD-${i}-E''ND\r`, typed: true });
        await done;
        flood.push(mib / ((performance.now() - t0) / 1000));
        const p0 = performance.now();
        await new Promise<void>((resolve, reject) => {
          const child = spawn(sshd.ssh[0]!, [...sshd.ssh.slice(1), '-T', sshd.destination, `cat ${file}`], { stdio: ['ignore', 'pipe', 'ignore'] });
          child.stdout!.on('data', () => undefined);
          child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ssh cat exited ${code}`))));
        });
        plain.push(mib / ((performance.now() - p0) / 1000));
        // The same file on a local terminal: what the engine itself costs, without the link.
        const l0 = performance.now();
        const localDone = ui.next(localView, `FLOOD-${i}-END`, 300_000);
        await ui.dispatcher.call('input', { attachmentId: localView, data: `cat ${file}; echo FLOOD-${i}-E''ND\r`, typed: true });
        await localDone;
        local.push(mib / ((performance.now() - l0) / 1000));
      }
      sshd.run(`rm -f ${file}`);
      await ui.dispatcher.call('input', { attachmentId: remoteView, data: 'cat\r', typed: true });
      await sleep(300);
      opts.log('remote: reconnects');
      const reconnect: number[] = [];
      for (let i = 0; i < reconnects; i++) {
        // The machine keeps its last 16 ssh processes: a new one is a new last entry, not a longer list.
        const before = machine.spawned.at(-1);
        const t0 = performance.now();
        machine.process!.kill('SIGKILL');
        while (machine.spawned.at(-1) === before || machine.status !== 'connected') {
          if (performance.now() - t0 > 60_000) throw new Error(`no reconnect within 60 s: ${machine.status} ${machine.problem ?? ''}`);
          await sleep(5);
        }
        reconnect.push(performance.now() - t0);
        // The resumed view answers again.
        await type(remoteView, 'q');
      }
      return [
        { row: 'remote.keystroke.echo', samples: remote, baselines: [{ name: 'local keystroke + ssh cat round trip', samples: parts }] },
        {
          row: 'remote.flood',
          samples: flood,
          baselines: [
            { name: 'ssh -T host cat', samples: plain },
            { name: 'the same cat on a local terminal', samples: local },
          ],
          note: `${mib} MiB; the plain ssh run includes its connection setup`,
        },
        {
          row: 'remote.reconnect',
          samples: reconnect,
          note: `p95 ${[...reconnect].sort((a, b) => a - b)[Math.min(reconnect.length - 1, Math.floor(reconnect.length * 0.95))]!.toFixed(0)} ms`,
        },
      ];
    } finally {
      cat?.close();
      ui.dispatcher.dispose();
      machines.stop();
      await host.shutdown();
      await sshd.stop();
    }
  },
};
