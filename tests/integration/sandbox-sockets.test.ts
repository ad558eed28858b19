/**
 * Path sockets of the machine outside the workspace (a database's under /run or /var/tmp, a
 * service's anywhere else, as LXD keeps its root-equivalent one under /var/lib) are hidden from
 * a confined terminal, with the network on or off (issue 24): real bubblewrap, the
 * official MCP client, and a real Unix socket server on the host that must see no connection.
 */
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { hasCommand } from './helpers.js';
import { describeSandbox, needed } from './sandbox-helpers.js';

type Result = Record<string, unknown> & { status?: string; exitCode?: number | null; output?: string };

describeSandbox('path sockets outside the workspace', () => {
  let f: AgentFixture;
  let client: Client;
  let server: Server;
  let other: Server;
  const seen: string[] = [];
  const socketPath = `/var/tmp/tandem-test-${process.pid}.sock`;
  // Outside the roots a scan looks in (found because the kernel lists it as bound): under
  // /var/lib where root can write there (CI), else beside the checkout.
  const serviceDir = mkdtempSync(writable('/var/lib') ? '/var/lib/tandem-test-' : join(process.cwd(), '.tandem-test-'));
  const servicePath = join(serviceDir, 'unix.socket');
  const connectTo = (path: string) => `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${path}'); print('connected')"`;
  const connect = connectTo(socketPath);

  beforeAll(async () => {
    f = await startAgentFixture({ defaultSandbox: 'workspace-write' });
    client = await f.client(f.layer.pairAgent({ name: 'plumber' }).token);
    rmSync(socketPath, { force: true });
    server = createServer((socket) => {
      seen.push('connection');
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    other = createServer((socket) => {
      seen.push('service connection');
      socket.destroy();
    });
    await new Promise<void>((resolve) => other.listen(servicePath, resolve));
  });
  afterAll(async () => {
    server.close();
    other.close();
    rmSync(socketPath, { force: true });
    rmSync(serviceDir, { recursive: true, force: true });
    await f.close();
  });

  it.runIf(needed(hasCommand('python3')))('refuses them with the network on and off; unconfined the same connect goes through', async () => {
    for (const network of [false, true]) {
      f.layer.setAgentPolicy({ name: 'plumber', policy: 'always', sandbox: 'workspace-write', network });
      const t = (await f.call(client, 'terminal_open', { title: 'sock' })) as Result & { id: string };
      for (const text of [connect, connectTo(servicePath)]) {
        const r = (await f.call(client, 'terminal_send', { id: t.id, text })) as Result;
        expect(r, `network ${network}: ${text}`).toMatchObject({ status: 'done' });
        expect(r.exitCode).not.toBe(0);
        expect(r.output).not.toContain('connected');
      }
      await f.call(client, 'terminal_close', { id: t.id });
    }
    expect(seen).toEqual([]);
    // The test can fail: unconfined, the socket is there.
    f.layer.setAgentPolicy({ name: 'plumber', policy: 'always', sandbox: 'off' });
    const plain = (await f.call(client, 'terminal_open', { title: 'plain' })) as Result & { id: string };
    expect(await f.call(client, 'terminal_send', { id: plain.id, text: connect })).toMatchObject({ exitCode: 0, output: 'connected' });
    expect(await f.call(client, 'terminal_send', { id: plain.id, text: connectTo(servicePath) })).toMatchObject({ exitCode: 0, output: 'connected' });
    await expect.poll(() => seen.length).toBe(2);
  });
});

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
