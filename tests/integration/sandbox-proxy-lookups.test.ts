/**
 * The proxy's lookups (src/main/sandbox/proxy.ts): getaddrinfo runs on libuv's thread pool,
 * which Tandem's file system calls share, so names that take the resolver's whole timeout must
 * not occupy all of it. A real proxy on a real Unix socket and real clients; the resolver is
 * the one fake (no real resolver can be made slow on demand here). And the proxy's macOS form,
 * a loopback TCP port, run here (no Mac: the Seatbelt profile around it is unit-tested).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { configureSandboxProxy, SandboxProxy } from '../../src/main/sandbox/proxy.js';

afterEach(() => configureSandboxProxy());

it('runs at most two lookups at once; the others wait their turn and are all answered', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-lookups-'));
  let running = 0;
  let most = 0;
  const started: string[] = [];
  const gates: Array<() => void> = [];
  configureSandboxProxy({
    lookup: async (host) => {
      started.push(host);
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
      // No address: each client is answered "could not resolve", nothing is connected.
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    },
  });
  const proxy = SandboxProxy.listen({ agent: 'a', terminalId: 't', domains: [], listen: { path: join(dir, 's') } });
  try {
    const answers = Array.from(
      { length: 6 },
      (_, i) =>
        new Promise<string>((resolve) => {
          const socket = net.connect(join(dir, 's'), () => socket.write(`CONNECT slow-${i}.test:443 HTTP/1.1\r\n\r\n`));
          let text = '';
          socket.on('data', (chunk) => (text += chunk.toString()));
          socket.on('close', () => resolve(text));
        }),
    );
    await expect.poll(() => started.length).toBe(2);
    // The others wait while the first two hang.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(started.length).toBe(2);
    while (started.length < 6 || gates.length > 0) {
      await expect.poll(() => gates.length).toBeGreaterThan(0);
      gates.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const texts = await Promise.all(answers);
    expect(most).toBe(2);
    expect(started.sort()).toEqual(['slow-0.test', 'slow-1.test', 'slow-2.test', 'slow-3.test', 'slow-4.test', 'slow-5.test']);
    for (const text of texts) expect(text).toMatch(/^HTTP\/1\.1 502 .*could not resolve slow-\d\.test \(ENOTFOUND\)/s);
  } finally {
    proxy.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('macOS form: listens on a loopback TCP port only, known once listening, and refuses the machine there too', async () => {
  const proxy = SandboxProxy.listen({ agent: 'a', terminalId: 't', domains: [], listen: { tcp: true } });
  try {
    await proxy.listening();
    const port = proxy.port!;
    expect(port).toBeGreaterThan(0);
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write('CONNECT localhost:22 HTTP/1.1\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 403 .*"code":"forbidden".*localhost:22: it resolves to (127\.0\.0\.1|::1)/s);
    // Not on the machine's other addresses: the local network cannot use it.
    const lan = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;
    if (lan) {
      const refused = await new Promise<string>((resolve) =>
        net
          .connect({ host: lan, port })
          .on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? ''))
          .on('connect', () => resolve('connected')),
      );
      expect(refused).toBe('ECONNREFUSED');
    }
  } finally {
    proxy.close();
  }
});
