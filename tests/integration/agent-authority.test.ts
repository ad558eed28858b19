import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { until } from '../support/until.js';

// Authority bound to the token (class 7): agents paired from the UI side, bridges as agents run them.
const cli = resolve(__dirname, '../../bin/tandem.js');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(): Promise<{ f: AgentFixture; home: string }> {
  const home = mkdtempSync(join(tmpdir(), 'tandem-authority-'));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const f = await startAgentFixture({ tandemHome: home });
  cleanups.push(() => f.close());
  return { f, home };
}

async function bridge(home: string, name: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', '--name', name],
    env: { PATH: process.env.PATH ?? '', HOME: home, TANDEM_HOME: home },
    stderr: 'pipe',
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
  return { ...(result.isError ? { isError: true } : {}), ...(result.structuredContent as Record<string, unknown>) };
}

describe('authority follows the token, not the display name', () => {
  it('an Allow-once claim of a paired name is flagged, shows as another name, and inherits none of its terminals', async () => {
    const { f, home } = await setup();
    const token = f.layer.pairAgent({ name: 'claude-code' }).token;
    const paired = await f.client(token);
    expect(await f.call(paired, 'terminal_list')).toEqual({ terminals: [] });
    const mine = await f.host.create({ title: 'person', shell: 'bash' });
    f.host.handToAgent(mine.id, 'claude-code');

    const impostor = await bridge(home, 'claude-code');
    expect(await call(impostor, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    const [card] = f.layer.state().pairings;
    expect(card).toMatchObject({ name: 'claude-code', nameInUse: true });
    f.layer.answerPairing({ requestId: card!.id, decision: 'once' });

    expect(await call(impostor, 'terminal_list')).toEqual({ terminals: [] });
    expect(await call(impostor, 'terminal_send', { id: mine.id, text: 'echo stolen' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });
    expect(f.layer.state().allowedOnce).toEqual([expect.objectContaining({ name: 'claude-code (2)', connected: true })]);
    expect(f.host.get(mine.id).meta).toMatchObject({ handedTo: 'claude-code', control: 'agent' });
    // The one it was handed to still drives it.
    expect(await f.call(paired, 'terminal_send', { id: mine.id, text: 'echo still-mine' })).toMatchObject({ status: 'done', output: 'still-mine' });
    const opened = await call(impostor, 'terminal_open', { title: 'impostor' });
    expect(opened).toMatchObject({ agent: 'claude-code (2)' });
    expect(await f.call(paired, 'terminal_send', { id: opened.id, text: 'pwd' })).toMatchObject({ isError: true, error: { code: 'forbidden' } });

    // Allow-once agents are listed and revocable: revoked, it is asked about again.
    f.layer.revokeAllowedOnce({ id: f.layer.state().allowedOnce[0]!.id });
    // Its session ends with the token (the call in flight reads that as a lost connection).
    expect(await call(impostor, 'terminal_list')).toMatchObject({ isError: true, error: { code: expect.stringMatching(/^(not_running|pairing_pending)$/) } });
    expect(await call(impostor, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    expect(f.layer.state().allowedOnce).toEqual([]);
    // Handing to a name no agent holds is refused rather than waiting for whoever claims it.
    expect(() => f.host.handToAgent(mine.id, 'nobody-yet')).toThrow(/No agent named/);
  }, 90_000);

  it('withdraws an agent’s questions when its last session disconnects: approving afterwards runs nothing', async () => {
    const { f } = await setup();
    const token = f.layer.pairAgent({ name: 'leaver' }).token;
    const client = await f.client(token);
    // Inside the agent's project: a confined open elsewhere would ask first.
    const dir = mkdtempSync(join(f.project, 'leaver-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const canary = join(dir, 'canary');
    const { id } = (await f.call(client, 'terminal_open', { title: 'leaver', cwd: dir })) as { id: string };
    expect(await f.call(client, 'terminal_send', { id, text: `touch ${canary}`, waitMs: 200 })).toMatchObject({ status: 'awaiting_approval' });
    const handoff = client.callTool({ name: 'terminal_handoff', arguments: { id, message: 'log in please', waitMs: 30_000 } }).catch(() => 'gone');
    await until(() => f.layer.state().handoffs.length === 1, 'the handoff request');
    const [approval] = f.layer.state().approvals;
    expect(approval).toMatchObject({ agent: 'leaver', terminalId: id });

    await client.close();
    await handoff;
    await until(() => f.layer.state().approvals.length === 0 && f.layer.state().handoffs.length === 0, 'the questions to be withdrawn');
    expect(() => f.layer.answerApproval({ requestId: approval!.id, decision: 'approve' })).toThrow(/No pending approval/);
    // Instead of a guessed sleep: a line run in the shell itself after the answer settles once
    // the shell ran everything typed before it, so a touch let through would have run by then.
    expect(await f.host.get(id).session.send({ text: 'true', waitMs: 55_000 })).toMatchObject({ status: 'done' });
    expect(existsSync(canary)).toBe(false);
    expect(f.host.get(id).meta.control).toBe('agent');
  });
});

describe('pairing requests', () => {
  it('a denied claim stays denied, across a restart of its bridge, until the person lifts it', async () => {
    const { f, home } = await setup();
    const first = await bridge(home, 'gemini-cli');
    expect(await call(first, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    f.layer.answerPairing({ requestId: f.layer.state().pairings[0]!.id, decision: 'deny' });
    expect(await call(first, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_denied' } });
    expect(await call(first, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_denied' } });
    // A new process of the same claim (another pid) is not asked about either.
    const restarted = await bridge(home, 'gemini-cli');
    expect(await call(restarted, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_denied' } });
    expect(f.layer.state().pairings).toEqual([]);
    const [denial] = f.layer.state().deniedClaims;
    expect(denial).toMatchObject({ name: 'gemini-cli', exe: process.execPath, cwd: process.cwd() });

    f.layer.liftPairingDenial({ id: denial!.id });
    expect(await call(restarted, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    expect(f.layer.state().pairings).toEqual([expect.objectContaining({ name: 'gemini-cli', nameInUse: false })]);
  });

  // The flood and replacement attacks (another uid, rotating claims, Deny all's pause) are in pairing-attacks.test.ts.
  it('refuses a pairing request over TCP where the bridge channel (which proves who asks) listens', async () => {
    const { f } = await setup();
    const response = await fetch(`${f.url}/pair`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'flood-0', pid: 4242, exe: '/usr/bin/python3', cwd: '/tmp' }),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: 'forbidden', message: expect.stringContaining('bridge channel') } });
    expect(f.layer.state().pairings).toEqual([]);
  });
});
