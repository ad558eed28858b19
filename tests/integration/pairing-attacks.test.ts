import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { maxQueuedBeforePeer } from '../../src/main/agent/mcp/mcp-socket.js';
import { maxPendingPerProcess, maxPendingPerUid } from '../../src/main/agent/pairing/pairing.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { procfs, runs } from '../support/capabilities.js';
import { until } from '../support/until.js';

// Issue 23, attacks 2 and 9: pairing is bound to who asks. A process of another uid cannot pair
// or touch a waiting request; a flood of the person's own uid cannot push a waiting one out;
// "Deny all" pauses new requests. Through the real bridge (`tandem mcp`, the official MCP SDK
// client) and raw connections, as a hostile local process would come.
const cli = resolve(__dirname, '../../bin/tandem.js');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(opts: { bridgeSocket?: boolean } = {}): Promise<{ f: AgentFixture; home: string }> {
  const home = mkdtempSync(join(tmpdir(), 'tandem-pair-attack-'));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const f = await startAgentFixture({ tandemHome: home, ...opts });
  cleanups.push(() => f.close());
  return { f, home };
}

async function bridge(home: string, name: string): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', '--name', name],
    env: { PATH: process.env.PATH ?? '', HOME: home, TANDEM_HOME: home },
    stderr: 'pipe',
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, pid: transport.pid! };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
  return { ...(result.isError ? { isError: true } : {}), ...(result.structuredContent as Record<string, unknown>) };
}

/** The hostile process: node builtins only (it runs as another user, who cannot read this checkout's modules). */
const attackerSource = `
import { connect } from 'node:net';
const [socketPath, url, claimJson, requestId] = process.argv.slice(2);
const claim = JSON.parse(claimJson);
const results = {};
results.socket = await new Promise((resolve) => {
  const s = connect(socketPath);
  let text = '';
  s.on('error', (e) => resolve({ error: e.code }));
  s.on('connect', () => s.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tandem/pair', params: claim }) + '\\n'));
  s.on('data', (d) => (text += d));
  s.on('close', () => resolve({ text }));
  setTimeout(() => { s.destroy(); resolve({ text, open: true }); }, 1500);
});
const post = await fetch(url + '/pair', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(claim) });
results.post = { status: post.status, body: await post.text() };
const poll = await fetch(url + '/pair/' + requestId);
results.poll = { status: poll.status, body: await poll.text() };
process.stdout.write(JSON.stringify(results));
`;

const asRoot = procfs.present && process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');

/** A user that is not the person: created if absent (useradd), as the issue's reproduction used `nobody`. */
function attackerUser(): { uid: number; gid: number } {
  const name = 'tandem-attacker';
  if (spawnSync('id', ['-u', name]).status !== 0) execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  return { uid: Number(execFileSync('id', ['-u', name]).toString()), gid: Number(execFileSync('id', ['-g', name]).toString()) };
}

/** Runs the attack as another uid (setpriv), from a directory that user can read. */
type Attack = Record<string, { error?: string; text?: string; status?: number; body?: string }>;

async function attackAsOtherUser(args: { socketPath: string; url: string; claim: object; requestId: string }): Promise<Attack> {
  const user = attackerUser();
  const dir = mkdtempSync(join(tmpdir(), 'tandem-attacker-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755);
  const script = join(dir, 'attack.mjs');
  writeFileSync(script, attackerSource, { mode: 0o644 });
  // Not spawnSync: the host runs in this process and must answer the attacker meanwhile.
  const child = spawn(
    'setpriv',
    [
      `--reuid=${user.uid}`,
      `--regid=${user.gid}`,
      '--clear-groups',
      process.execPath,
      script,
      args.socketPath,
      args.url,
      JSON.stringify(args.claim),
      args.requestId,
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code).toBe(0);
  return JSON.parse(out) as Attack;
}

describe.runIf(asRoot)('another user cannot pair or touch the person’s request', () => {
  it('over the bridge channel: no connection, /pair over TCP refused, the card unchanged, and no token for the attacker', async () => {
    const { f, home } = await setup();
    const legit = await bridge(home, 'codex');
    expect(await call(legit.client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    const [card] = f.layer.state().pairings;
    // Verified facts, from the kernel: the bridge's own process, uid and executable.
    expect(card!.verified).toEqual({ uid: process.getuid!(), pid: legit.pid, exe: process.execPath, by: 'kernel', via: 'unix-socket' });
    const before = JSON.stringify(f.layer.state().pairings);

    const claim = { name: card!.name, pid: card!.pid, exe: card!.exe, cwd: card!.cwd };
    const results = await attackAsOtherUser({ socketPath: f.bridgeChannel!.path, url: f.url, claim, requestId: card!.id });
    expect(results.socket).toEqual({ error: 'EACCES' });
    expect(results.post!.status).toBe(403);
    expect(JSON.parse(results.post!.body!)).toMatchObject({ error: { code: 'forbidden' } });
    expect(results.poll!.status).toBe(403);
    expect(JSON.stringify(results)).not.toMatch(/tdm_/);
    expect(JSON.stringify(f.layer.state().pairings)).toBe(before);

    // The person allows the card they saw: the token goes to the bridge that asked, and only to it.
    f.layer.answerPairing({ requestId: card!.id, decision: 'once' });
    expect(await call(legit.client, 'terminal_list')).toEqual({ terminals: [] });
    const after = await attackAsOtherUser({ socketPath: f.bridgeChannel!.path, url: f.url, claim, requestId: card!.id });
    expect(after.poll!.status).toBe(403);
    expect(JSON.stringify(after)).not.toMatch(/tdm_/);
    expect(f.layer.state().pairings).toEqual([]);
  }, 120_000);

  it('over TCP where the host has no channel: the kernel’s TCP table names the other uid, refused, the card unchanged', async () => {
    const { f, home } = await setup({ bridgeSocket: false });
    const legit = await bridge(home, 'codex');
    expect(await call(legit.client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    const [card] = f.layer.state().pairings;
    expect(card!.verified).toEqual({ uid: process.getuid!(), pid: legit.pid, exe: process.execPath, by: 'kernel', via: 'tcp' });
    const before = JSON.stringify(f.layer.state().pairings);
    const claim = { name: card!.name, pid: card!.pid, exe: card!.exe, cwd: card!.cwd };
    const results = await attackAsOtherUser({ socketPath: join(home, 'none.sock'), url: f.url, claim, requestId: card!.id });
    expect(results.post!.status).toBe(403);
    expect(JSON.parse(results.post!.body!).error.message).toMatch(/uid/);
    expect(results.poll!.status).toBe(403);
    expect(JSON.stringify(f.layer.state().pairings)).toBe(before);
    f.layer.answerPairing({ requestId: card!.id, decision: 'once' });
    expect(await call(legit.client, 'terminal_list')).toEqual({ terminals: [] });
    const after = await attackAsOtherUser({ socketPath: join(home, 'none.sock'), url: f.url, claim, requestId: card!.id });
    expect(after.poll!.status).toBe(403);
    expect(JSON.stringify(after)).not.toMatch(/tdm_/);
  }, 120_000);
});

/** Flooding processes of the person's own uid: each opens `perProcess` connections with rotating claims and prints each refusal. */
const floodSource = `
import { connect } from 'node:net';
const [socketPath, tag, count, legitJson] = process.argv.slice(2);
const legit = JSON.parse(legitJson);
const keep = [];
for (let n = 0; n < Number(count); n++) {
  const s = connect(socketPath);
  keep.push(s);
  // Every fifth one claims exactly what the real agent claims.
  const claim = n % 5 === 0 ? legit : { name: 'flood-' + tag + '-' + n, pid: 40000 + n, exe: '/usr/bin/flood' + n, cwd: '/tmp/flood' + n };
  let text = '';
  s.on('connect', () => s.write(JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tandem/pair', params: claim }) + '\\n'));
  s.on('data', (d) => {
    text += d;
    if (text.endsWith('\\n')) process.stdout.write(text);
  });
  s.on('error', () => process.stdout.write(JSON.stringify({ error: { data: { code: 'socket' } } }) + '\\n'));
}
// One connection also rotates its claim 200 times: it only ever replaces its own request.
const rot = connect(socketPath);
keep.push(rot);
rot.on('connect', () => {
  for (let n = 0; n < 200; n++) rot.write(JSON.stringify({ jsonrpc: '2.0', id: 'r' + n, method: 'tandem/pair', params: { name: 'rot-' + tag + '-' + n, pid: 50000 + n, exe: '/usr/bin/rot' + n, cwd: '/tmp/rot' } }) + '\\n');
});
rot.on('data', (d) => process.stdout.write(d));
setInterval(() => undefined, 1000);
`;

describe.runIf(runs('a flood of the person’s own uid (the kernel names each peer through /proc)', procfs))('a flood of the person’s own uid', () => {
  // Its cleanup used to outlive the hook's 120 s (1 run in 3 here, unloaded): the channel's close
  // waited on refused connections that `end()` had only half-closed while their flood processes
  // (SIGKILLed, not awaited) still held them; close() now ends every connection itself (mcp-socket.ts).
  // It was skipped (issue 22): refusals + waiting cards came to 201 in most runs and 204 or 205 in
  // others. Each process opens 40 connections and a rotating one, 205 in all, and none was counted
  // twice: a rotating connection refused at the door (hellos or pairing connections at their
  // bound) had its one line, one admitted as a pairing connection was closed without a word once
  // its fifth request queued while the kernel was asked who it is. Now that connection is told
  // why (capacity) and nothing it sends after its last line is asked: every connection ends with
  // one line or holds one card. The failure message lists the lines by kind.
  it('200 requests with rotating claims from several processes never push out the waiting one; Deny all then pauses new requests, visibly', async () => {
    const { f, home } = await setup();
    const legit = await bridge(home, 'codex');
    expect(await call(legit.client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    const [card] = f.layer.state().pairings;
    const legitCard = JSON.stringify(card);
    const claim = { name: card!.name, pid: card!.pid, exe: card!.exe, cwd: card!.cwd };

    const dir = mkdtempSync(join(tmpdir(), 'tandem-flood-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'flood.mjs'), floodSource);
    const lines: string[] = [];
    const floodProcesses = 5;
    const connectionsPerProcess = 40;
    const floods = Array.from({ length: floodProcesses }, (_, tag) => {
      const child = spawn(
        process.execPath,
        [join(dir, 'flood.mjs'), f.bridgeChannel!.path, String(tag), String(connectionsPerProcess), JSON.stringify(claim)],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let buffer = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        const parts = buffer.split('\n');
        buffer = parts.pop()!;
        lines.push(...parts.filter(Boolean));
      });
      cleanups.push(() => void child.kill('SIGKILL'));
      return child;
    });
    expect(floods).toHaveLength(5);
    // Every one of the 205 connections is either refused (a line) or holds a waiting card.
    const floodCards = () => f.layer.state().pairings.filter((request) => request.id !== card!.id);
    const parsed = () => lines.map((line) => JSON.parse(line) as { id?: unknown; error?: { data?: { code?: string } } });
    // The rotating connection's lines (ids "r…") are its own replacements (results), or its refusal.
    const refusals = () => parsed().filter((reply) => reply.error !== undefined).length;
    // 205 connections (each process's rotating one too): each ends refused (one error line, then closed) or holds one card.
    await until(() => refusals() + floodCards().length === floodProcesses * (connectionsPerProcess + 1), 'every flood request answered or waiting').catch(
      (error: Error) => {
        const kinds = new Map<string, number>();
        for (const line of lines)
          kinds.set(
            line.replace(/"id":("[^"]*"|\d+|null)/, '"id":_').replace(/"requestId":"[^"]*"/, ''),
            (kinds.get(line.replace(/"id":("[^"]*"|\d+|null)/, '"id":_').replace(/"requestId":"[^"]*"/, '')) ?? 0) + 1,
          );
        throw new Error(
          `${error.message}: ${refusals()} refused, ${floodCards().length} waiting, ${lines.length} lines: ${[...kinds].map(([line, n]) => `${n}× ${line}`).join(' | ')}`,
        );
      },
    );

    expect(JSON.stringify(f.layer.state().pairings.find((request) => request.id === card!.id))).toBe(legitCard);
    expect(f.layer.state().pairings.length).toBeLessThanOrEqual(maxPendingPerUid);
    for (const reply of parsed()) if (reply.error) expect(reply.error.data?.code).toBe('capacity');
    // No flood process holds more than its share.
    const perProcess = new Map<number | null, number>();
    for (const request of floodCards()) perProcess.set(request.verified!.pid, (perProcess.get(request.verified!.pid) ?? 0) + 1);
    for (const count of perProcess.values()) expect(count).toBeLessThanOrEqual(maxPendingPerProcess);
    // The real agent's card is the one the person allows, and the token reaches that bridge.
    f.layer.answerPairing({ requestId: card!.id, decision: 'once' });
    expect(await call(legit.client, 'terminal_list')).toEqual({ terminals: [] });

    f.layer.denyAllPairings();
    await until(() => f.layer.state().pairings.length === 0, 'the flood denied');
    const paused = f.layer.state().pairingsPausedUntil;
    expect(paused).toEqual(expect.any(String));
    expect(Date.parse(paused!)).toBeGreaterThan(Date.now());
    const late = await bridge(home, 'gemini');
    const refused = await call(late.client, 'terminal_list');
    expect(refused).toMatchObject({ isError: true, error: { code: 'pairing_denied', message: expect.stringMatching(/denied all pairing requests/) } });
    expect(f.layer.state().pairings).toEqual([]);
    // A raw request is refused the same way while paused.
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(f.bridgeChannel!.path);
      let text = '';
      socket.on('connect', () =>
        socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tandem/pair', params: { name: 'later', pid: 1, exe: '/x', cwd: '/tmp' } })}\n`),
      );
      socket.on('data', (chunk) => (text += chunk));
      socket.on('close', () => resolve(text));
    });
    expect(JSON.parse(raw)).toMatchObject({ error: { data: { code: 'pairing_denied' } } });
    expect(f.layer.state().pairings).toEqual([]);
  }, 180_000);

  it('a pairing connection with no valid request is closed, so idle connections cannot hold the places', async () => {
    const { f, home } = await setup();
    const replies = await Promise.all(
      Array.from(
        { length: 70 },
        (_, n) =>
          new Promise<string>((resolve) => {
            const socket = connect(f.bridgeChannel!.path);
            let text = '';
            socket.on('connect', () => socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tandem/pair', params: { name: 'no-pid' } })}\n`));
            socket.on('data', (chunk) => (text += chunk));
            socket.on('close', () => resolve(text));
          }),
      ),
    );
    // Each is answered and closed: invalid_argument, or capacity while 32 connections were still starting.
    for (const reply of replies)
      expect(reply, reply).toMatch(/^\{"jsonrpc":"2.0","id":(\d+|null),"error":\{[^\n]*"code":"(invalid_argument|capacity)"\}\}\}\n$/);
    expect(f.layer.state().pairings).toEqual([]);
    // A real bridge still gets its card.
    const legit = await bridge(home, 'codex');
    expect(await call(legit.client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    expect(f.layer.state().pairings).toEqual([expect.objectContaining({ name: 'codex', verified: expect.objectContaining({ pid: legit.pid }) })]);
  }, 120_000);

  it('requests piled on one connection before the kernel named its sender get one answer (capacity), and no card', async () => {
    const { f } = await setup();
    // Five requests in one write arrive in one read, while the lookup of who sent them is under way.
    const pile = Array.from(
      { length: maxQueuedBeforePeer + 1 },
      (_, n) =>
        `${JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tandem/pair', params: { name: `pile-${n}`, pid: 1000 + n, exe: '/usr/bin/pile', cwd: '/tmp' } })}\n`,
    ).join('');
    const heard = await new Promise<string>((resolve) => {
      const socket = connect(f.bridgeChannel!.path);
      let text = '';
      socket.on('connect', () => socket.write(pile));
      socket.on('data', (chunk) => (text += chunk));
      socket.on('close', () => resolve(text));
    });
    // It used to be closed without a word, so a flood's connections were not all answered (issue 22).
    expect(heard).toMatch(/^\{"jsonrpc":"2.0","id":4,"error":\{[^\n]*"code":"capacity"\}\}\}\n$/);
    expect(f.layer.state().pairings).toEqual([]);
  });

  it('a second connection with the same claim gets a card of its own; only the first connection’s bridge gets the first card’s token', async () => {
    const { f, home } = await setup();
    const legit = await bridge(home, 'codex');
    expect(await call(legit.client, 'terminal_list')).toMatchObject({ isError: true, error: { code: 'pairing_pending' } });
    const [card] = f.layer.state().pairings;
    const claim = { name: card!.name, pid: card!.pid, exe: card!.exe, cwd: card!.cwd };
    const squatter = connect(f.bridgeChannel!.path);
    cleanups.push(() => void squatter.destroy());
    let heard = '';
    squatter.on('data', (chunk) => (heard += chunk));
    squatter.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tandem/pair', params: claim })}\n`);
    await until(() => f.layer.state().pairings.length === 2, 'the second card');
    const second = f.layer.state().pairings.find((request) => request.id !== card!.id)!;
    // Same claims, but the kernel tells them apart.
    expect(second.verified!.pid).toBe(process.pid);
    expect(card!.verified!.pid).toBe(legit.pid);
    f.layer.answerPairing({ requestId: card!.id, decision: 'once' });
    expect(await call(legit.client, 'terminal_list')).toEqual({ terminals: [] });
    expect(heard).toBe('');
    f.layer.answerPairing({ requestId: second.id, decision: 'deny' });
    await until(() => heard.includes('\n'), 'the squatter’s answer');
    expect(JSON.parse(heard)).toMatchObject({ result: { state: 'denied' } });
    expect(readFileSync(join(home, 'instance.json'), 'utf8')).not.toMatch(/tdm_/);
  }, 120_000);
});
