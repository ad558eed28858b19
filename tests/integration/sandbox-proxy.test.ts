/**
 * Network on means through a proxy (issue 24): a confined terminal always has its own network
 * namespace, and "network on" is Tandem's proxy on a Unix socket of the host, reached through
 * a forwarder that listens on the sandbox's own loopback from outside. Real bubblewrap, real bash in a real PTY,
 * the official MCP client, curl and Python as the clients, and real servers on the host that
 * count what reaches them.
 *
 * The one seam: the proxy refuses this machine's own addresses, and the only non-loopback
 * address this test can listen on is one of them. So the "host of the network" test tells the
 * proxy (configureSandboxProxy) that this one address is not the machine's; every other test
 * runs with the machine's real addresses, and one proves that same address is refused then.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { networkInterfaces } from 'node:os';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { readStat, scanProcesses } from '../../src/main/pty/proc.js';
import { configureSandboxProxy, proxyRefusals } from '../../src/main/sandbox/proxy.js';
import { operations } from '../../src/shared/contract.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { hasCommand } from './helpers.js';
import { describeSandbox, needed } from './sandbox-helpers.js';

type Result = Record<string, unknown> & { status?: string; exitCode?: number | null; output?: string };

/** A non-loopback IPv4 address of this machine, where a test server can stand in for a host of the network. */
const lanAddress = Object.values(networkInterfaces())
  .flatMap((list) => list ?? [])
  .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;
if (!lanAddress) console.warn('sandbox-proxy: this machine has no non-loopback IPv4 address; the successful connection through the proxy is not tested here.');

const curl = hasCommand('curl');
const python = hasCommand('python3');

interface Counting {
  server: HttpServer;
  port: number;
  paths: string[];
}

async function countingServer(host: string, body: string): Promise<Counting> {
  const paths: string[] = [];
  const server = createHttpServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as { port: number }).port, paths };
}

describeSandbox('network on: through the proxy only', () => {
  let f: AgentFixture;
  let client: Client;
  let canary: Counting;
  let remote: Counting | undefined;
  const agent = 'netted';

  const policy = (network: boolean, networkDomains?: string[]) =>
    f.layer.setAgentPolicy({ name: agent, policy: 'always', sandbox: 'workspace-write', network, ...(networkDomains ? { networkDomains } : {}) });
  const open = async () => (await f.call(client, 'terminal_open', { title: 'net' })) as Result & { id: string; pid: number };
  const send = (id: string, text: string) => f.call(client, 'terminal_send', { id, text, waitMs: 40_000 }) as Promise<Result>;
  /** Through the proxy whatever NO_PROXY says: HTTP status, then the body. */
  const viaProxy = (id: string, url: string, extra = '') =>
    send(id, `curl -sS --max-time 20 --noproxy '' -x "$HTTP_PROXY" ${extra} -w ' %{http_code}' '${url}'`);

  beforeAll(async () => {
    f = await startAgentFixture({ defaultSandbox: 'workspace-write' });
    client = await f.client(f.layer.pairAgent({ name: agent }).token);
    canary = await countingServer('127.0.0.1', 'canary-reached');
    if (lanAddress) remote = await countingServer(lanAddress, 'hello-from-the-network');
  });
  afterAll(async () => {
    configureSandboxProxy();
    canary.server.close();
    remote?.server.close();
    await f.close();
  });
  afterEach(async () => {
    configureSandboxProxy();
    await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
  });

  it.runIf(needed(curl && python) && lanAddress !== undefined)(
    'reaches a host of the network through HTTP_PROXY, CONNECT, SOCKS5 and Python; never directly',
    async () => {
      const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));
      configureSandboxProxy({ ownAddresses: () => own.filter((address) => address !== lanAddress) });
      policy(true, []);
      const t = await open();
      expect(t.sandbox).toEqual({ mode: 'workspace-write', network: true });
      const base = `http://${lanAddress}:${remote!.port}`;
      expect(await send(t.id, `curl -sS --max-time 20 ${base}/plain`)).toMatchObject({ exitCode: 0, output: 'hello-from-the-network' });
      expect(await send(t.id, `curl -sS --max-time 20 --proxytunnel ${base}/tunnel`)).toMatchObject({ exitCode: 0, output: 'hello-from-the-network' });
      expect(await send(t.id, `curl -sS --max-time 20 -x "$ALL_PROXY" ${base}/socks`)).toMatchObject({ exitCode: 0, output: 'hello-from-the-network' });
      expect(await send(t.id, `python3 -c "import urllib.request; print(urllib.request.urlopen('${base}/python').read().decode())"`)).toMatchObject({
        exitCode: 0,
        output: 'hello-from-the-network',
      });
      // Without the proxy there is no route: its own network namespace has only its own loopback.
      const direct = await send(t.id, `curl -sS --max-time 20 --noproxy '*' ${base}/direct`);
      expect(direct.exitCode, direct.output).not.toBe(0);
      expect(remote!.paths).toEqual(['/plain', '/tunnel', '/socks', '/python']);
      // read-only: its /tmp is read-only too, and the proxy socket in it still connects.
      await f.call(client, 'terminal_close', { id: t.id });
      f.layer.setAgentPolicy({ name: agent, policy: 'always', sandbox: 'read-only', network: true });
      const ro = await open();
      expect(ro.sandbox).toEqual({ mode: 'read-only', network: true });
      expect(await send(ro.id, `touch /tmp/x; curl -sS --max-time 20 ${base}/read-only`)).toMatchObject({
        exitCode: 0,
        output: expect.stringMatching(/Read-only file system[\s\S]*hello-from-the-network$/),
      });
      expect(remote!.paths).toEqual(['/plain', '/tunnel', '/socks', '/python', '/read-only']);
    },
  );

  it.runIf(needed(curl))(
    'refuses this machine through the proxy (by address and by name) and has no route to it directly: nothing reaches Tandem’s door or the canary',
    async () => {
      policy(true, []);
      const before = proxyRefusals().length;
      const t = await open();
      const door = new URL(f.url).port;
      const targets = [
        `http://127.0.0.1:${canary.port}/ip`,
        `http://localhost:${canary.port}/name`,
        `http://127.1:${canary.port}/short`,
        `http://2130706433:${canary.port}/decimal`,
        `http://0.0.0.0:${canary.port}/any`,
        `http://[::ffff:127.0.0.1]:${canary.port}/mapped`,
        `http://[::1]:${canary.port}/v6`,
        `http://169.254.169.254/latest/meta-data/`,
        ...(lanAddress ? [`http://${lanAddress}:${canary.port}/own`] : []),
        `http://127.0.0.1:${door}/pair`,
      ];
      for (const url of targets) {
        const r = await viaProxy(t.id, url);
        expect(r.output, url).toMatch(/"code":"forbidden".*refused the connection.* 403$/s);
      }
      // CONNECT and SOCKS5 with a name the resolver sends to loopback.
      expect((await viaProxy(t.id, `http://localhost:${canary.port}/tunnel`, '--proxytunnel')).exitCode).not.toBe(0);
      expect((await send(t.id, `curl -sS --max-time 20 --noproxy '' -x "$ALL_PROXY" http://localhost:${canary.port}/socks`)).exitCode).not.toBe(0);
      expect((await send(t.id, `curl -sS --max-time 20 --noproxy '' -x "$ALL_PROXY" http://127.0.0.1:${door}/mcp`)).exitCode).not.toBe(0);
      // SOCKS4 is refused at once (curl's 97), not left waiting for a head (28, timed out).
      expect((await send(t.id, `curl -sS --max-time 20 --noproxy '' -x socks4a://127.0.0.1:3128 http://localhost:${canary.port}/socks4`)).exitCode).toBe(97);
      // Directly: the sandbox's loopback is its own, so the door and the canary are not there.
      for (const port of [canary.port, door]) {
        await expect(send(t.id, `curl -sS --max-time 20 --noproxy '*' http://127.0.0.1:${port}/direct`)).resolves.toMatchObject({
          status: 'done',
          exitCode: 7,
        });
        expect((await send(t.id, `echo hi > /dev/tcp/127.0.0.1/${port}`)).exitCode).not.toBe(0);
      }
      expect((await send(t.id, `curl -sS --max-time 20 --noproxy '*' -X POST http://127.0.0.1:${door}/pair`)).exitCode).toBe(7);
      expect(canary.paths).toEqual([]);
      expect(f.layer.state().pairings).toEqual([]);
      // Each refusal is recorded for the person's panel, with the agent and the reason.
      const recorded = proxyRefusals().slice(before);
      expect(recorded.length).toBeGreaterThanOrEqual(targets.length + 3);
      expect(recorded.every((entry) => entry.agent === agent && entry.terminalId === t.id)).toBe(true);
      expect(recorded.find((entry) => entry.host === 'localhost')).toMatchObject({
        reason: 'loopback',
        address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/),
      });
      expect(recorded.find((entry) => entry.host === '169.254.169.254')).toMatchObject({ reason: 'link-local' });
      if (lanAddress) expect(recorded.find((entry) => entry.host === lanAddress)).toMatchObject({ reason: 'own-address' });
      // Unconfined, the same request reaches the canary: the assertions above can fail.
      await f.call(client, 'terminal_close', { id: t.id });
      f.layer.setAgentPolicy({ name: agent, policy: 'always', sandbox: 'off' });
      const plain = await open();
      expect(await send(plain.id, `curl -sS --max-time 20 --noproxy '*' http://127.0.0.1:${canary.port}/unconfined`)).toMatchObject({
        exitCode: 0,
        output: 'canary-reached',
      });
      expect(canary.paths).toEqual(['/unconfined']);
      canary.paths.length = 0;
    },
  );

  it.runIf(needed(python))('cannot connect to an abstract Unix socket of the host, network on or off', async () => {
    const name = `tandem-test-${process.pid}-${Date.now()}`;
    // Node 20 cannot listen on an abstract name (libuv takes the path up to its NUL): Python does.
    const server = spawn(
      'python3',
      [
        '-u',
        '-c',
        `import socket\ns = socket.socket(socket.AF_UNIX)\ns.bind('\\0${name}')\ns.listen()\nprint('ready')\nwhile True:\n    c, _ = s.accept()\n    print('connection')\n    c.close()`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    server.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await expect.poll(() => out).toContain('ready');
    const seen = () => out.split('\n').filter((line) => line === 'connection');
    const connect = `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0${name}'); print('connected')"`;
    try {
      for (const network of [true, false]) {
        policy(network);
        const t = await open();
        const r = await send(t.id, connect);
        expect(r, `network ${network}`).toMatchObject({ status: 'done' });
        expect(r.exitCode).not.toBe(0);
        expect(r.output).toContain('ConnectionRefusedError');
        await f.call(client, 'terminal_close', { id: t.id });
      }
      expect(seen()).toEqual([]);
      f.layer.setAgentPolicy({ name: agent, policy: 'always', sandbox: 'off' });
      const plain = await open();
      expect(await send(plain.id, connect)).toMatchObject({ exitCode: 0, output: 'connected' });
      await expect.poll(() => seen().length).toBe(1);
    } finally {
      server.kill();
    }
  });

  it.runIf(needed(curl))('the domain list refuses an unlisted host and an address literal, before any lookup', async () => {
    policy(true, ['registry.example.org', '*.pypi.example']);
    expect(f.layer.state().paired.find((entry) => entry.name === agent)).toMatchObject({ networkDomains: ['registry.example.org', '*.pypi.example'] });
    const before = proxyRefusals().length;
    const t = await open();
    for (const url of [
      'http://elsewhere.example.net/',
      `http://${lanAddress ?? '192.0.2.1'}/`,
      'http://pypi.example/',
      'http://registry.example.org.evil.example/',
    ]) {
      const r = await viaProxy(t.id, url);
      expect(r.output, url).toMatch(/not in this agent's network domain list \(registry\.example\.org, \*\.pypi\.example\).* 403$/s);
    }
    expect((await viaProxy(t.id, 'https://elsewhere.example.net/')).exitCode).not.toBe(0);
    const recorded = proxyRefusals().slice(before);
    expect(recorded.map((entry) => entry.reason)).toEqual(['domain', 'domain', 'domain', 'domain', 'domain']);
    expect(recorded[0]).toMatchObject({ agent, host: 'elsewhere.example.net', port: 80 });
    // A listed name passes the list and is then looked up (here it has no address: not found, not refused).
    const listed = await viaProxy(t.id, 'http://files.pypi.example/');
    expect(listed.output).toMatch(/"code":"not_found".*could not resolve files\.pypi\.example.* 502$/s);
    expect(proxyRefusals().length).toBe(before + 5);
    // The contract takes host names and `*.` patterns only.
    const args = (networkDomains: string[]) => operations.setAgentPolicy.args.safeParse({ name: agent, policy: 'always', networkDomains }).success;
    expect(args(['Registry.NPMJS.org', '*.pypi.org'])).toBe(true);
    for (const bad of [['not a domain'], ['*'], ['http://x.org'], ['x.org:443'], ['*.*.org']]) expect(args(bad), bad[0]).toBe(false);
  });

  it.runIf(needed(curl))('holds at most the per-agent bound of connections open', async () => {
    configureSandboxProxy({ connectionsPerAgent: 2 });
    policy(true, []);
    const t = await open();
    const r = await send(
      t.id,
      `exec 3<>/dev/tcp/127.0.0.1/3128 4<>/dev/tcp/127.0.0.1/3128; sleep 0.5; curl -sS --max-time 20 --noproxy '' -x "$HTTP_PROXY" -w ' %{http_code}' http://elsewhere.example.net/; exec 3>&- 4>&-`,
    );
    expect(r.output).toMatch(/"code":"capacity".*2 connections open.* 503$/s);
    // A flood past the bound: the first few are told why, the rest are closed at once, and
    // once they are gone the agent is served again.
    const flood = await send(
      t.id,
      `for i in $(seq 40); do exec {fd}<>/dev/tcp/127.0.0.1/3128; done; sleep 1; curl -s --max-time 20 --noproxy '' -x "$HTTP_PROXY" -o /dev/null -w '%{http_code}' http://elsewhere.example.net/; echo " $?"`,
    );
    expect(flood.output).toMatch(/^000 (52|56)$/);
    await f.call(client, 'terminal_close', { id: t.id });
    const again = await open();
    expect((await viaProxy(again.id, 'http://nothing.invalid/')).output).toMatch(/"code":"not_found".*could not resolve nothing\.invalid.* 502$/s);
  });

  it('the forwarder listens in the sandbox from outside: nothing inside can see or signal it, and it ends with the terminal, its proxy socket too', async () => {
    policy(true, []);
    const t = await open();
    // Other suites may run confined terminals too: this one's forwarder names this sandbox's init.
    const init = readStat(t.pid)!.ppid;
    const cmdline = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      } catch {
        return '';
      }
    };
    const isForwarder = (pid: number) => cmdline(pid).includes('forward.pl') && cmdline(pid).includes(`\0${init}\0`);
    const forwarders = scanProcesses().filter((p) => isForwarder(p.pid));
    expect(forwarders.length, 'one forwarder for the terminal').toBe(1);
    const forwarder = forwarders[0]!;
    // Tandem's child, in the sandbox's network namespace, outside its pid namespace.
    expect(forwarder.ppid).toBe(process.pid);
    expect(readlinkSync(`/proc/${forwarder.pid}/ns/net`)).toBe(readlinkSync(`/proc/${init}/ns/net`));
    expect(readlinkSync(`/proc/${forwarder.pid}/ns/pid`)).not.toBe(readlinkSync(`/proc/${init}/ns/pid`));
    expect((await send(t.id, `kill -9 ${forwarder.pid}; echo " $?"; jobs -p | wc -l`)).output).toMatch(/No such process.* 1\n0$/s);
    expect(isForwarder(forwarder.pid)).toBe(true);
    // The port is taken: nothing inside can listen there in its place.
    expect((await send(t.id, `python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 3128))" 2>&1 | tail -1`)).output).toMatch(/in use/i);
    const socket = join(f.stateDir, 'sandbox', 'run', t.id, 'proxy.sock');
    expect(existsSync(socket)).toBe(true);
    expect(await f.call(client, 'terminal_close', { id: t.id })).toEqual({ closed: true, orphans: [] });
    await expect.poll(() => isForwarder(forwarder.pid)).toBe(false);
    expect(existsSync(socket)).toBe(false);
  });

  it('network off: no proxy variables, no proxy socket, no route', async () => {
    policy(false);
    const t = await open();
    expect(t.sandbox).toEqual({ mode: 'workspace-write', network: false });
    expect(await send(t.id, 'env | grep -ci proxy; ls -A /tmp/.tandem-proxy.sock')).toMatchObject({ output: expect.stringMatching(/^0\n.*No such file/s) });
    const direct = await send(t.id, `echo hi > /dev/tcp/${lanAddress ?? '192.0.2.1'}/${remote?.port ?? 80}`);
    expect(direct.exitCode).not.toBe(0);
    expect(direct.output).toMatch(/unreachable|refused/i);
    expect(remote?.paths ?? []).not.toContain('/off');
  });
});
