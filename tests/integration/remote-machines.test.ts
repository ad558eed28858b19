/**
 * Remote machines end to end (issue 30): a real OpenSSH server on 127.0.0.1 (tests/support/sshd.ts)
 * for a second local user whose ~/.bashrc prints junk, that user's real `tandem host --stdio`
 * (this checkout's built CLI) and daemon with real bash in real PTYs, and this side's
 * `RemoteMachines` behind a real Dispatcher, as `tandem serve --machine` wires them.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AgentsState, EventName, EventPayload, OpResult, TerminalView } from '../../src/shared/contract.js';
import type { FrameMark } from '../../src/shared/command-marks.js';
import { Dispatcher, type UiClient } from '../../src/main/host/dispatch.js';
import { TerminalHost } from '../../src/main/host/host.js';
import { RemoteMachine } from '../../src/main/remote/machine.js';
import { RemoteMachines } from '../../src/main/remote/machines.js';
import { systemClock } from '../../src/main/clock.js';
import { connectRemoteAgent } from '../support/remote-agent.js';
import { bashrcJunk, requireSsh, type Sshd, startSshd } from '../support/sshd.js';
import { until, waitFor } from '../support/until.js';
import { startAgentFixture } from './agent-helpers.js';
import { exitOf, login, TestClient, tokenOf } from './web-helpers.js';

const ssh = requireSsh();

/** A UI client that applies every frame in order (failing on a gap or a repeat) and acknowledges it. */
class TestUi {
  readonly rosters: TerminalView[][] = [];
  readonly frames = new Map<string, Array<{ seq: number; data: string; marks?: FrameMark[] }>>();
  readonly closed: Array<{ attachmentId: string; message: string }> = [];
  readonly errors: string[] = [];
  dispatcher!: Dispatcher;
  readonly client: UiClient = {
    id: `test-${Math.random().toString(36).slice(2)}`,
    send: <K extends EventName>(event: K, payload: EventPayload<K>) => {
      if (event === 'roster') this.rosters.push((payload as EventPayload<'roster'>).terminals);
      if (event === 'attachmentClosed') {
        const p = payload as EventPayload<'attachmentClosed'>;
        this.closed.push({ attachmentId: p.attachmentId, message: p.error.message });
      }
      if (event === 'output') {
        const { attachmentId, seq, data, marks } = payload as EventPayload<'output'>;
        const list = this.frames.get(attachmentId) ?? [];
        const last = list.length > 0 ? list[list.length - 1]!.seq : 0;
        if (seq !== last + 1) this.errors.push(`frame ${seq} after ${last}`);
        list.push({ seq, data, marks });
        this.frames.set(attachmentId, list);
        void this.dispatcher.call('ack', { attachmentId, seq }).catch((error: Error) => this.errors.push(`ack: ${error.message}`));
      }
    },
  };
  text(attachmentId: string): string {
    return (this.frames.get(attachmentId) ?? []).map((f) => f.data).join('');
  }
  /** Every command mark the view was sent, with the text of its frame from the mark on. */
  marks(attachmentId: string): Array<FrameMark & { after: string }> {
    return (this.frames.get(attachmentId) ?? []).flatMap((f) => (f.marks ?? []).map((mark) => ({ ...mark, after: f.data.slice(mark.at) })));
  }
  roster(): TerminalView[] {
    return this.rosters[this.rosters.length - 1] ?? [];
  }
  terminal(id: string): TerminalView | undefined {
    return this.roster().find((t) => t.id === id);
  }
}

describe.skipIf(ssh.skip)(`remote machines over a real sshd${ssh.reason ? ` (skipped: ${ssh.reason})` : ''}`, () => {
  let sshd: Sshd;
  let host: TerminalHost;
  let machines: RemoteMachines;
  let box: RemoteMachine;
  let ui: TestUi;
  const log: string[] = [];

  beforeAll(async () => {
    sshd = await startSshd('tandemremote');
    host = new TerminalHost();
    machines = new RemoteMachines();
    box = new RemoteMachine({
      name: 'box',
      destination: sshd.destination,
      ssh: sshd.ssh,
      remoteCommand: sshd.remoteTandem,
      clock: systemClock,
      version: host.version,
      log: (line) => log.push(line),
    });
    machines.add(box);
    ui = new TestUi();
    ui.dispatcher = new Dispatcher(host, ui.client, { remote: machines });
    machines.start();
    await until(() => box.status === 'connected', 'the link to box', 60_000).catch((error: Error) => {
      throw new Error(`${error.message}: ${box.status} ${box.problem ?? ''} ${log.join(' / ')}`);
    });
  }, 120_000);

  afterAll(async () => {
    ui?.dispatcher.dispose();
    machines?.stop();
    await host?.shutdown();
    await sshd?.stop();
  });

  test('the rc file junk before the link is skipped and reported, and the link works', async () => {
    expect(box.junkSeen).toContain('Welcome to the test box');
    expect(log.join('\n')).toContain(bashrcJunk.slice(0, 20));
    const env = (await box.call('environment', {})) as { home: string };
    expect(env.home).toBe(sshd.home);
    // The remote daemon is the other user's, with its socket in a 0700 directory of its state.
    expect(sshd.daemonPid()).not.toBeNull();
  });

  test('a remote terminal in the roster runs commands with exit codes and cwd from the remote readiness; a read waits for input', async () => {
    const local = await host.create({ shell: 'bash' });
    const view = (await ui.dispatcher.call('create', { machine: 'box', shell: 'bash', title: 'remote bash' })) as TerminalView;
    // A roster sent between the reply and the remote's own roster event (here a local rename pushes
    // one at once) still lists the new terminal: a UI that selected its tab must not see it leave.
    const afterReply = ui.rosters.length;
    host.rename(local.id, 'local neighbour');
    await until(() => ui.roster().some((t) => t.title === 'local neighbour'), 'the rename in a roster');
    expect(ui.rosters.slice(afterReply).every((roster) => roster.some((t) => t.id === view.id))).toBe(true);
    await host.close(local.id);
    expect(view.machine).toBe('box');
    expect(view.id.startsWith('box:')).toBe(true);
    await until(() => ui.terminal(view.id)?.status === 'idle', 'the remote shell at its prompt', 60_000);
    expect(ui.terminal(view.id)!.machineLink).toBe('connected');
    const listed = (await ui.dispatcher.call('list', {})) as { terminals: TerminalView[] };
    expect(listed.terminals.find((t) => t.id === view.id)?.machine).toBe('box');

    const attached = (await ui.dispatcher.call('attach', { id: view.id, cols: 100, rows: 30 })) as { attachmentId: string; info: TerminalView };
    expect(attached.info.machine).toBe('box');
    const id = attached.attachmentId;
    await ui.dispatcher.call('input', { attachmentId: id, data: 'cd /tmp && (exit 3)\r', typed: true });
    await until(() => ui.terminal(view.id)?.lastCommand?.exitCode === 3, 'exit code 3 in the roster');
    expect(ui.terminal(view.id)!.cwd).toBe('/tmp');
    // The remote host's command marks reach this machine's views with its frames (the marks ruler, Ctrl+Up).
    await until(() => ui.marks(id).some((m) => m.kind === 'end' && m.exitCode === 3), "the failed command's end mark");
    const failed = ui.marks(id).find((m) => m.kind === 'end' && m.exitCode === 3)!;
    expect(failed.status).toBe('failure');
    expect(ui.marks(id).some((m) => m.kind === 'start' && m.id === failed.id)).toBe(true);
    await ui.dispatcher.call('input', { attachmentId: id, data: 'whoami\r', typed: true });
    await until(() => ui.terminal(view.id)?.lastCommand?.command === 'whoami' && ui.terminal(view.id)?.status === 'idle', 'whoami finished');
    expect(ui.terminal(view.id)!.lastCommand!.exitCode).toBe(0);
    expect(ui.text(id)).toContain(sshd.user);

    await ui.dispatcher.call('input', { attachmentId: id, data: 'read -p "name? " answer\r', typed: true });
    await until(() => ui.terminal(view.id)?.status === 'waiting_input', 'the read waiting for input');
    await ui.dispatcher.call('input', { attachmentId: id, data: 'x\r', typed: true });
    await until(() => ui.terminal(view.id)?.status === 'idle', 'the read answered');
    expect(ui.errors).toEqual([]);
    await ui.dispatcher.call('detach', { attachmentId: id });
    await ui.dispatcher.call('close', { id: view.id });
    await until(() => !ui.terminal(view.id), 'the closed terminal gone from the roster');
  }, 120_000);

  test('killing ssh mid-stream: the roster says reconnecting, and the view resumes with nothing lost or doubled', async () => {
    const view = (await ui.dispatcher.call('create', { machine: 'box', shell: 'bash' })) as TerminalView;
    await until(() => ui.terminal(view.id)?.status === 'idle', 'the remote shell at its prompt', 60_000);
    const { attachmentId: id } = (await ui.dispatcher.call('attach', { id: view.id })) as { attachmentId: string };
    const count = 4000;
    await ui.dispatcher.call('input', {
      attachmentId: id,
      data: `for i in $(seq 1 ${count}); do echo "n=$i"; if [ $((i % 100)) = 0 ]; then sleep 0.05; fi; done; echo count-"done"\r`,
      typed: true,
    });
    await until(() => /n=300\r/.test(ui.text(id)), 'the count under way');
    const sshBefore = box.spawned.at(-1);
    const statuses: string[] = [];
    const off = machines.onChange(() => statuses.push(ui.terminal(view.id)?.machineLink ?? '-'));
    box.process!.kill('SIGKILL');
    await until(() => box.status === 'reconnecting', 'the machine reconnecting');
    await until(() => ui.terminal(view.id)?.machineLink === 'reconnecting', 'the roster saying reconnecting');
    await until(() => box.status === 'connected', 'the link back', 60_000);
    await until(() => ui.text(id).includes('count-done'), 'the count finished', 60_000);
    off();
    expect(box.spawned.at(-1)).not.toBe(sshBefore); // a new ssh (the list keeps the last 16)
    expect(statuses).toContain('reconnecting');
    expect(ui.terminal(view.id)!.machineLink).toBe('connected');
    const seen = [...ui.text(id).matchAll(/^n=([0-9]+)\r?$/gm)].map((m) => Number(m[1]));
    expect(seen.length).toBe(count);
    expect(seen).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    // Resumed, not restarted from a snapshot: no frame resets the view.
    expect((ui.frames.get(id) ?? []).some((f) => f.data.startsWith('\x1bc'))).toBe(false);
    expect(ui.errors).toEqual([]);
    await ui.dispatcher.call('detach', { attachmentId: id });
    await ui.dispatcher.call('close', { id: view.id });
  }, 180_000);

  test('the link mints no token or login link and changes no setting: a pairAgent over it is refused and writes no token', async () => {
    const agentsFile = join(sshd.home, '.config', 'Tandem', 'agents.json');
    const before = existsSync(agentsFile) ? readFileSync(agentsFile, 'utf8') : null;
    for (const [op, args] of [
      ['pairAgent', { name: 'sneaky' }],
      ['mintLink', {}],
      ['getSettings', {}],
      ['setSettings', { theme: 'light' }],
      ['agentSandbox', { name: 'any' }],
      ['removeAgentHome', { name: 'any' }],
    ] as const) {
      const error = (await box.call(op, args).catch((e: unknown) => e)) as { code?: string; message?: string };
      expect(error.code, op).toBe('forbidden');
    }
    const after = existsSync(agentsFile) ? readFileSync(agentsFile, 'utf8') : null;
    expect(after).toBe(before);
    if (after) expect(after).not.toContain('sneaky');
  });

  test('a machine without Tandem gets one sentence naming the install command', async () => {
    const none = new RemoteMachine({
      name: 'bare',
      destination: sshd.destination,
      ssh: sshd.ssh,
      remoteCommand: 'tandem host --stdio',
      clock: systemClock,
      version: host.version,
    });
    none.start();
    try {
      await until(() => none.status === 'failed', 'the machine failing', 60_000);
      expect(none.problem).toBe('Tandem is not installed on bare; install it there with: npm install -g tandem-terminal');
      const error = (await none.call('list', {}).catch((e: unknown) => e)) as { code?: string; message?: string };
      expect(error.code).toBe('not_running');
      expect(error.message).toContain('npm install -g tandem-terminal');
    } finally {
      none.stop();
    }
  }, 90_000);

  test('tandem serve --machine shows the remote terminals to a browser client and runs input on them', async () => {
    const base = mkdtempSync(join(tmpdir(), 'tandem-serve-machine-'));
    mkdirSync(join(base, 'home'));
    const env = {
      ...process.env,
      TANDEM_HOME: join(base, 'state'),
      HOME: join(base, 'home'),
      SHELL: '/bin/bash',
      TANDEM_SSH: sshd.ssh.join(' '),
      TANDEM_REMOTE_COMMAND: sshd.remoteTandem,
    };
    const child = spawn(process.execPath, [resolve(__dirname, '../../bin/tandem.js'), 'serve', '--machine', `box2=${sshd.destination}`], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let client: TestClient | null = null;
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const match = /(http:\/\/127\.0\.0\.1:\d+\/#login=[A-Za-z0-9_-]+)/.exec(line);
          if (match) resolveUrl(match[1]!);
        });
        child.once('exit', (code) => reject(new Error(`tandem serve exited with ${code}: ${stderr}`)));
      });
      const port = Number(new URL(url).port);
      const { secret } = await login(port, tokenOf(url));
      client = await TestClient.connect(port, secret!);
      // The machine connects in the background; a create waits for its link.
      const view = await client.call('create', { machine: 'box2', shell: 'bash' });
      expect(view.machine).toBe('box2');
      await client.waitFor(
        () =>
          (client!.events('roster') as Array<{ terminals: TerminalView[] }>).some((r) =>
            r.terminals.some((t) => t.id === view.id && t.status === 'idle' && t.machine === 'box2'),
          ),
        60_000,
        'the remote terminal idle in the roster',
      );
      const { attachmentId } = await client.call('attach', { id: view.id });
      await client.call('input', { attachmentId, data: 'echo remote-$((6*7)) $(whoami)\r', typed: true });
      await client.waitForOutput(attachmentId, `remote-42 ${sshd.user}`, 60_000);
      expect(stderr).toContain('skipped');
      await client.call('close', { id: view.id });
    } finally {
      client?.close();
      child.kill('SIGTERM');
      await exitOf(child, 30_000).catch(() => child.kill('SIGKILL'));
      rmSync(base, { recursive: true, force: true });
    }
  }, 120_000);
  test('an agent on the machine pairs with its own host there, and its approval is answered here; the command runs there', async () => {
    const { local, panels, dispatcher } = await personSide(machines);
    // The agent runs on the machine as its user (this box is 127.0.0.1).
    sshd.run('rm -f ~/proj/approved.txt');
    const agent = await connectRemoteAgent(sshd, 'far-agent');
    const call = agent.call;
    try {
      expect(await call('terminal_list', {})).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
      await until(() => panels.some((p) => p.pairings.some((r) => r.name === 'far-agent@box')), 'the pairing request from box in the local panel', 60_000);
      const request = panels[panels.length - 1]!.pairings.find((r) => r.name === 'far-agent@box')!;
      await dispatcher.call('answerPairing', { requestId: request.id, decision: 'once' });
      await until(async () => !(await call('terminal_list', {})).isError, 'paired on box', 60_000);
      const opened = (await call('terminal_open', { title: 'far build', shell: 'bash' })) as { isError: boolean; id?: string };
      expect(opened.isError, JSON.stringify(opened)).toBe(false);
      // A redirect is never allow-listed: it asks the person, here.
      const line = "printf 'approved-%s\\n' $((40+2)) > approved.txt && cat approved.txt";
      const sending = call('terminal_send', { id: opened.id, text: line, waitMs: 55_000 });
      sending.catch(() => undefined); // awaited below; a failure before then must not go unhandled
      await until(() => panels.some((p) => p.approvals.some((a) => a.agent === 'far-agent@box')), 'the remote approval in the local panel', 60_000);
      const approval = panels[panels.length - 1]!.approvals.find((a) => a.agent === 'far-agent@box')!;
      expect(approval).toMatchObject({ terminalId: `box:${opened.id}`, command: line });
      // Not run before the answer.
      // (The box is this machine: its files are read here, past the rc file's junk.)
      expect(existsSync(join(sshd.home, 'proj', 'approved.txt'))).toBe(false);
      await dispatcher.call('answerApproval', { requestId: approval.id, decision: 'approve' });
      expect(await sending).toMatchObject({ isError: false, status: 'done', exitCode: 0, output: 'approved-42' });
      expect(readFileSync(join(sshd.home, 'proj', 'approved.txt'), 'utf8')).toBe('approved-42\n');
      // The agent's authority stays there: nothing of it was paired here.
      expect(local.layer.state().paired.some((p) => p.name.startsWith('far-agent'))).toBe(false);
      await call('terminal_close', { id: opened.id });

      // Allowed once there, listed here under the machine, and revoked from here: its next call asks again.
      const guest = await waitFor(async () => (await boxState(dispatcher)).allowedOnce?.find((g) => g.name === 'far-agent'), Boolean, 60_000);
      await dispatcher.call('revokeAllowedOnce', { id: guest!.id, machine: 'box' });
      await until(async () => (await call('terminal_list', {})).isError, 'the revoked guest refused', 60_000);
      expect((await boxState(dispatcher)).allowedOnce?.some((g) => g.name === 'far-agent')).toBe(false);
    } finally {
      await agent.close();
      dispatcher.dispose();
      await local.close();
    }
  }, 180_000);

  test("the person sets a remote agent's policy, lifts a denial and revokes it from here; a local agent of the same name is untouched, and a machine named wrong changes nothing", async () => {
    const { local, panels, dispatcher } = await personSide(machines);
    // A local agent named as the remote one: what the person does to the remote one must not land here.
    local.layer.pairAgent({ name: 'far-two' });
    const agentsFile = join(sshd.home, '.config', 'Tandem', 'agents.json');
    const remoteRecord = () =>
      (JSON.parse(readFileSync(agentsFile, 'utf8')) as { agents: Array<{ name: string; settings?: { policy?: string } }> }).agents.find(
        (a) => a.name === 'far-two',
      );
    const localPolicy = () => local.layer.state().paired.find((p) => p.name === 'far-two')?.policy;
    // The box's daemon outlives a run: an earlier run's far-two goes first.
    await box.call('revokeAgent', { name: 'far-two' }).catch(() => undefined);
    const agent = await connectRemoteAgent(sshd, 'far-two');
    const call = agent.call;
    try {
      const pairing = async (): Promise<string> => {
        await until(() => panels.at(-1)?.pairings.some((r) => r.name === 'far-two@box') === true, 'the pairing request from box', 60_000);
        return panels.at(-1)!.pairings.find((r) => r.name === 'far-two@box')!.id;
      };
      expect(await call('terminal_list', {})).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
      // Denied here: the claim is denied there, listed here, and lifted from here.
      await dispatcher.call('answerPairing', { requestId: await pairing(), decision: 'deny' });
      const claim = (await waitFor(async () => (await boxState(dispatcher)).deniedClaims?.find((c) => c.name === 'far-two'), Boolean, 60_000))!;
      expect(await call('terminal_list', {})).toMatchObject({ isError: true, error: { code: 'pairing_denied' } });
      await dispatcher.call('liftPairingDenial', { id: claim.id, machine: 'box' });
      expect(await call('terminal_list', {})).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
      await dispatcher.call('answerPairing', { requestId: await pairing(), decision: 'always' });
      await until(async () => !(await call('terminal_list', {})).isError, 'paired on box', 60_000);

      // Listed here with everything its card shows.
      // Its connection reaches the box's panel a moment after its first call went through: waited for, not assumed.
      const listed = (await waitFor(
        async () => (await boxState(dispatcher)).agents?.find((a) => a.name === 'far-two'),
        (agent) => agent?.connected === true,
        60_000,
      ))!;
      expect(listed).toMatchObject({ policy: 'ask-unless-allowed', connected: true });
      expect(listed.allow).toContain('echo | operands: any');
      const opened = (await call('terminal_open', { title: 'far two', shell: 'bash' })) as { isError: boolean; id?: string };
      expect(opened.isError, JSON.stringify(opened)).toBe(false);
      expect(await call('terminal_send', { id: opened.id, text: 'echo plain-42', waitMs: 55_000 })).toMatchObject({ status: 'done', output: 'plain-42' });

      // A machine named wrong, and a machine named again over the link (the remote has no machines
      // of its own): refused, and neither agent of that name changed.
      for (const [op, args] of [
        ['setAgentPolicy', { name: 'far-two', policy: 'always', machine: 'nowhere' }],
        ['revokeAgent', { name: 'far-two', machine: 'nowhere' }],
      ] as const) {
        const error = (await dispatcher.call(op, args).catch((e: unknown) => e)) as { code?: string };
        expect(error.code, op).toBe('not_found');
      }
      const nested = (await box.call('setAgentPolicy', { name: 'far-two', policy: 'always', machine: 'box' }).catch((e: unknown) => e)) as { code?: string };
      expect(nested.code).toBe('not_found');
      const nestedRevoke = (await box.call('revokeAgent', { name: 'far-two', machine: 'local2' }).catch((e: unknown) => e)) as { code?: string };
      expect(nestedRevoke.code).toBe('not_found');
      expect(remoteRecord()?.settings?.policy ?? 'ask-unless-allowed').toBe('ask-unless-allowed');
      expect(localPolicy()).toBe('ask-unless-allowed');

      // Set from here: applied there (its file, its judge), not here.
      await dispatcher.call('setAgentPolicy', { name: 'far-two', machine: 'box', policy: 'ask', allow: listed.allow, deny: listed.deny });
      expect(remoteRecord()?.settings?.policy).toBe('ask');
      expect(localPolicy()).toBe('ask-unless-allowed');
      await until(async () => (await boxState(dispatcher)).agents?.find((a) => a.name === 'far-two')?.policy === 'ask', 'the new policy in machines', 60_000);
      const asking = call('terminal_send', { id: opened.id, text: 'echo asked-42', waitMs: 55_000 });
      asking.catch(() => undefined); // awaited below
      await until(() => panels.at(-1)?.approvals.some((a) => a.agent === 'far-two@box') === true, 'the approval the new policy asks for', 60_000);
      const approval = panels.at(-1)!.approvals.find((a) => a.agent === 'far-two@box')!;
      await dispatcher.call('answerApproval', { requestId: approval.id, decision: 'reject', reason: 'not now' });
      expect(await asking).toMatchObject({ isError: true, error: { code: 'rejected' } });

      // Revoked from here: its token stops working there; the local agent of that name keeps its own.
      await dispatcher.call('revokeAgent', { name: 'far-two', machine: 'box' });
      expect(remoteRecord()).toBeUndefined();
      expect(local.layer.state().paired.some((p) => p.name === 'far-two')).toBe(true);
      await until(async () => (await call('terminal_list', {})).isError, 'the revoked agent refused', 60_000);
      await until(async () => !(await boxState(dispatcher)).agents?.some((a) => a.name === 'far-two'), 'far-two gone from machines', 60_000);
      // Its terminal stays open there until the person closes it.
      expect(ui.roster().some((t) => t.id === `box:${opened.id}`)).toBe(true);
      await ui.dispatcher.call('close', { id: `box:${opened.id}` });
    } finally {
      await agent.close();
      dispatcher.dispose();
      await local.close();
    }
  }, 240_000);
});

/** The person's side here: a local agent layer and a UI client that sees the agents panel (every agents event kept). */
async function personSide(machines: RemoteMachines) {
  const local = await startAgentFixture();
  const panels: AgentsState[] = [];
  const dispatcher = new Dispatcher(
    local.host,
    { id: `agents-ui-${Math.random().toString(36).slice(2)}`, send: (event, payload) => void (event === 'agents' && panels.push(payload as AgentsState)) },
    { agents: local.layer, remote: machines },
  );
  return { local, panels, dispatcher };
}

/** The `machines` operation's entry for box, as the agents panel reads it. */
async function boxState(dispatcher: Dispatcher): Promise<OpResult<'machines'>['machines'][number]> {
  const { machines: list } = (await dispatcher.call('machines', {})) as OpResult<'machines'>;
  return list.find((m) => m.name === 'box')!;
}
