import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { checkHost, checkOrigin, checkRequest, isLoopbackName, normalizeOrigin, parseHostHeader } from '../../src/main/web/origin.js';
import { contentSecurityPolicy, resolveStaticPath } from '../../src/main/web/static.js';
import { isRefusal, login, openSocket, rawRequest, startTestServer, TestClient, type TestServer, tokenOf, waitUntil } from './web-helpers.js';
import { decodeServerMessage } from '../../src/shared/frames.js';

const agentToken = 'agent-token-for-the-test-0123456789abcdef';

describe('Host and Origin rules (origin.ts)', () => {
  it('accepts loopback names and addresses with any port', () => {
    for (const host of ['localhost', 'LOCALHOST:8080', '127.0.0.1', '127.0.0.1:41234', '127.1.2.3:1', '[::1]', '[::1]:9000', '[0:0:0:0:0:0:0:1]:80']) {
      expect(checkHost(host), host).toMatchObject({ ok: true });
    }
  });

  it('refuses other names, malformed hosts and look-alikes', () => {
    for (const host of [
      'evil.example',
      'evil.example:80',
      '127.0.0.1.evil.example',
      'localhost.evil.example',
      '10.0.0.1',
      '0.0.0.0',
      '128.0.0.1',
      '[::2]',
      '[::ffff:127.0.0.1]',
      '0x7f.0.0.1',
      '2130706433',
      '127.000.0.1',
      'user@localhost',
      'localhost:99999',
      'localhost:',
      '',
    ]) {
      expect(checkHost(host).ok, host).toBe(false);
    }
    expect(checkHost(undefined)).toMatchObject({ ok: false, status: 400 });
    expect(checkHost('evil.example')).toMatchObject({ ok: false, status: 403 });
    expect(parseHostHeader('[::1]:80')).toEqual({ name: '[::1]', port: 80 });
    expect(isLoopbackName('localhost')).toBe(true);
  });

  it('wants Origin absent, equal to http://<Host>, or allowed', () => {
    expect(checkOrigin(undefined, 'localhost:1')).toMatchObject({ ok: true });
    expect(checkOrigin('http://localhost:1', 'localhost:1')).toMatchObject({ ok: true });
    expect(checkOrigin('http://LOCALHOST:1', 'localhost:1')).toMatchObject({ ok: true });
    expect(checkOrigin('http://localhost:2', 'localhost:1')).toMatchObject({ ok: false, status: 403 });
    expect(checkOrigin('https://localhost:1', 'localhost:1')).toMatchObject({ ok: false });
    expect(checkOrigin('null', 'localhost:1')).toMatchObject({ ok: false });
    expect(checkOrigin('http://evil.example', 'localhost:1')).toMatchObject({ ok: false });
    expect(checkOrigin('http://dev.example:5173', 'localhost:1', ['http://dev.example:5173'])).toMatchObject({ ok: true });
    expect(checkRequest({ host: 'evil.example', origin: 'http://evil.example' })).toMatchObject({ ok: false, status: 403 });
    expect(normalizeOrigin('http://dev.example:5173/')).toBe('http://dev.example:5173');
    expect(normalizeOrigin('http://dev.example/path')).toBeNull();
    expect(normalizeOrigin('file:///tmp')).toBeNull();
  });

  it('resolves static paths only inside the root', () => {
    const root = '/srv/ui';
    expect(resolveStaticPath(root, '/')).toBe('/srv/ui/index.html');
    expect(resolveStaticPath(root, '/assets/a.js')).toBe('/srv/ui/assets/a.js');
    for (const path of [
      '/../x',
      '/%2e%2e/x',
      '/assets/..%2f..%2fx',
      '/assets/%2e%2e/%2e%2e/x',
      '/a%5c..%5c..%5cx',
      '/.hidden',
      '/assets//a.js',
      '/%00',
      '/%E0%A4%A',
    ]) {
      expect(resolveStaticPath(root, path), path).toBeNull();
    }
  });

  it('sends the renderer meta CSP as a header, with the page’s WebSocket and frame-ancestors added', () => {
    const html = readFileSync(resolve(import.meta.dirname, '../../src/renderer/index.html'), 'utf8');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1];
    expect(meta).toBeTruthy();
    const parse = (policy: string) =>
      new Map(
        policy
          .split(';')
          .map((d) => d.trim())
          .filter(Boolean)
          .map((d) => [d.split(/\s+/)[0]!, d.split(/\s+/).slice(1).join(' ')]),
      );
    const header = parse(contentSecurityPolicy('127.0.0.1:4000'));
    for (const [name, value] of parse(meta!)) {
      if (name === 'connect-src') expect(header.get(name)).toBe(`${value} ws://127.0.0.1:4000`);
      else expect(header.get(name), name).toBe(value);
    }
    expect(header.get('frame-ancestors')).toBe("'none'");
  });
});

describe('tandem serve: HTTP, login and WebSocket refusals', () => {
  let t: TestServer;
  let port: number;

  beforeAll(async () => {
    t = await startTestServer({ isAgentToken: (secret) => secret === agentToken, allowOrigins: ['http://allowed.example:3000'] });
    port = t.server.port;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('serves the built UI with content types and security headers, and nothing else', async () => {
    const index = await rawRequest(port, { path: '/', headers: { Host: `127.0.0.1:${port}` } });
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['referrer-policy']).toBe('no-referrer');
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    expect(index.headers['content-security-policy']).toContain(`connect-src 'self' ws://127.0.0.1:${port}`);
    expect(index.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(index.body).toContain('Tandem fixture');

    const js = await rawRequest(port, { path: '/assets/app.js' });
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await rawRequest(port, { path: '/assets/style.css' })).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await rawRequest(port, { path: '/index.html?x=1' })).status).toBe(200);

    // No listings, no dot files, no way out of the renderer directory.
    for (const path of [
      '/assets',
      '/assets/',
      '/.hidden',
      '/missing.js',
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/assets/%2e%2e/%2e%2e/secret.txt',
      '/..%5csecret.txt',
      '/%2e%2e%2fsecret.txt',
    ]) {
      const res = await rawRequest(port, { path });
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.body).not.toContain('TOP-SECRET');
      expect(res.body).not.toContain('app.js');
    }
    expect((await rawRequest(port, { method: 'POST', path: '/' })).status).toBe(405);
    expect((await rawRequest(port, { method: 'HEAD', path: '/' })).status).toBe(200);
  });

  it('accepts any loopback Host and port (ssh -L) and refuses other hosts', async () => {
    expect((await rawRequest(port, { headers: { Host: 'localhost:9999' } })).status).toBe(200);
    expect((await rawRequest(port, { headers: { Host: '[::1]:1234' } })).status).toBe(200);
    expect((await rawRequest(port, { headers: { Host: '127.0.0.2' } })).status).toBe(200);
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1.nip.io:${port}`]) {
      const res = await rawRequest(port, { headers: { Host: host } });
      expect(res.status, host).toBe(403);
      expect(res.body).not.toContain('Tandem fixture');
    }
    const foreign = await rawRequest(port, { headers: { Origin: 'http://evil.example' } });
    expect(foreign.status).toBe(403);
  });

  it('trades a printed login token for a session secret once (issue 23: a link read back from a log gives nothing)', async () => {
    const url = t.server.loginUrl();
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/#login=[A-Za-z0-9_-]{43}$`));
    const token = tokenOf(url);
    const first = await login(port, token, { Origin: `http://127.0.0.1:${port}` });
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const second = await login(port, token);
    expect(second.status).toBe(401);
    expect(second.secret).toBeNull();

    const check = await rawRequest(port, { path: '/session', headers: { 'X-Tandem-Session': first.secret! } });
    expect(check.status).toBe(204);
    expect((await rawRequest(port, { path: '/session', headers: { 'X-Tandem-Session': 'x'.repeat(43) } })).status).toBe(401);
  });

  it('refuses a wrong token, a foreign Origin, a non-JSON or oversized login', async () => {
    const token = tokenOf(t.server.loginUrl());
    expect((await login(port, 'A'.repeat(43))).status).toBe(401);
    expect((await login(port, '')).status).toBe(401);
    const foreign = await login(port, token, { Origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.secret).toBeNull();
    const otherPort = await login(port, token, { Origin: `http://127.0.0.1:${port + 1}` });
    expect(otherPort.status).toBe(403);
    const form = await rawRequest(port, {
      method: 'POST',
      path: '/session',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `login=${token}`,
    });
    expect(form.status).toBe(415);
    const big = await rawRequest(port, {
      method: 'POST',
      path: '/session',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ login: token, pad: 'x'.repeat(10_000) }),
    });
    expect(big.status).toBe(413);
    const notJson = await rawRequest(port, { method: 'POST', path: '/session', headers: { 'Content-Type': 'application/json' }, body: '{login' });
    expect(notJson.status).toBe(400);
  });

  it('lets only --allow-origin pages read /session across origins', async () => {
    const token = tokenOf(t.server.loginUrl());
    const preflight = await rawRequest(port, {
      method: 'OPTIONS',
      path: '/session',
      headers: { Origin: 'http://allowed.example:3000', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://allowed.example:3000');
    const allowed = await login(port, token, { Origin: 'http://allowed.example:3000' });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe('http://allowed.example:3000');
    const same = await login(port, token, { Origin: `http://127.0.0.1:${port}` });
    expect(same.headers['access-control-allow-origin']).toBeUndefined();
    expect((await rawRequest(port, { method: 'OPTIONS', path: '/session', headers: { Origin: 'http://evil.example' } })).status).toBe(403);
  });

  it('refuses a WebSocket without a secret, with a wrong one, or with a login token instead of a session', async () => {
    const none = await openSocket(port, {});
    expect(isRefusal(none) && none.status).toBe(401);
    const wrong = await openSocket(port, { secret: 'B'.repeat(43) });
    expect(isRefusal(wrong) && wrong.status).toBe(401);
    const loginToken = await openSocket(port, { secret: tokenOf(t.server.loginUrl()) });
    expect(isRefusal(loginToken) && loginToken.status).toBe(401);
    // A valid secret without the protocol itself.
    const { secret } = await login(port, tokenOf(t.server.loginUrl()));
    const noProtocol = await openSocket(port, { protocols: [`tandem.auth.${secret}`] });
    expect(isRefusal(noProtocol) && noProtocol.status).toBe(400);
    // Plain HTTP on /ws and other upgrade paths.
    expect((await rawRequest(port, { path: '/ws' })).status).toBe(426);
  });

  it('refuses a foreign Origin on the WebSocket, and accepts same-origin and --allow-origin pages', async () => {
    const { secret } = await login(port, tokenOf(t.server.loginUrl()));
    const foreign = await openSocket(port, { secret, origin: 'http://evil.example' });
    expect(isRefusal(foreign) && foreign.status).toBe(403);
    const same = await openSocket(port, { secret, origin: `http://127.0.0.1:${port}` });
    expect(isRefusal(same)).toBe(false);
    expect((same as WebSocket).protocol).toBe('tandem.v1');
    (same as WebSocket).close();
    const allowed = await openSocket(port, { secret, origin: 'http://allowed.example:3000' });
    expect(isRefusal(allowed)).toBe(false);
    (allowed as WebSocket).close();
  });

  it('refuses a non-loopback Host on the WebSocket upgrade', async () => {
    const { secret } = await login(port, tokenOf(t.server.loginUrl()));
    const response = await new Promise<string>((resolvePromise, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          [
            'GET /ws HTTP/1.1',
            'Host: evil.example',
            'Upgrade: websocket',
            'Connection: Upgrade',
            'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
            'Sec-WebSocket-Version: 13',
            `Sec-WebSocket-Protocol: tandem.v1, tandem.auth.${secret}`,
            '',
            '',
          ].join('\r\n'),
        );
      });
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolvePromise(data));
      socket.on('error', reject);
    });
    expect(response).toMatch(/^HTTP\/1\.1 403 /);
    expect(response).not.toMatch(/101 Switching/);
  });

  it('refuses an agent token on the UI transport with a clear error', async () => {
    const refused = await openSocket(port, { secret: agentToken });
    expect(isRefusal(refused) && refused.status).toBe(403);
    expect((refused as { body: string }).body).toMatch(/Agent tokens are not accepted/);
    const bearer = await openSocket(port, { headers: { Authorization: `Bearer ${agentToken}` } });
    expect(isRefusal(bearer) && bearer.status).toBe(403);
  });

  it('mounts routes for the agent layer behind the same Host and Origin checks', async () => {
    const seen: string[] = [];
    const unmount = t.server.route('/mcp', (req, res, url) => {
      seen.push(`${req.method} ${url.pathname}${url.search}`);
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('mcp here');
    });
    try {
      expect((await rawRequest(port, { path: '/mcp' })).body).toBe('mcp here');
      expect((await rawRequest(port, { method: 'POST', path: '/mcp/sub?x=1' })).body).toBe('mcp here');
      expect((await rawRequest(port, { path: '/mcpx' })).status).toBe(404);
      expect((await rawRequest(port, { path: '/mcp', headers: { Host: 'evil.example' } })).status).toBe(403);
      expect((await rawRequest(port, { path: '/mcp', headers: { Origin: 'http://evil.example' } })).status).toBe(403);
      expect(seen).toEqual(['GET /mcp', 'POST /mcp/sub?x=1']);
      expect(() => t.server.route('/ws', () => undefined)).toThrow();
      // The agent layer refuses UI credentials on /mcp with this.
      const { secret } = await login(port, tokenOf(t.server.loginUrl()));
      expect(t.server.isUiCredential(secret!)).toBe(true);
      expect(t.server.isUiCredential(tokenOf(t.server.loginUrl()))).toBe(true);
      expect(t.server.isUiCredential(agentToken)).toBe(false);
    } finally {
      unmount();
    }
    expect((await rawRequest(port, { path: '/mcp' })).status).toBe(404);
  });

  it('answers a route that throws with 500 and the internal code, not invalid_argument', async () => {
    const unmount = t.server.route('/mcp', () => {
      throw new Error('the route broke');
    });
    try {
      const answer = await rawRequest(port, { path: '/mcp' });
      expect(answer.status).toBe(500);
      expect(JSON.parse(answer.body)).toEqual({ error: { code: 'internal', message: 'Tandem could not answer: the route broke' } });
    } finally {
      unmount();
    }
  });

  it('mints single-use login links addressed like the asking tab', async () => {
    const { secret } = await login(port, tokenOf(t.server.loginUrl()));
    const client = await TestClient.connect(port, secret!);
    const { url } = await client.call('mintLink', {});
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/#login=[A-Za-z0-9_-]{43}$`));
    const minted = tokenOf(url);
    expect((await login(port, minted)).status).toBe(200);
    expect((await login(port, minted)).status).toBe(401);
    client.close();

    // A tab reached through a tunnel (another Host port) gets links for that port.
    const tunneled = await TestClient.connect(port, secret!, { headers: { Host: 'localhost:8080' } });
    expect((await tunneled.call('mintLink', {})).url).toMatch(/^http:\/\/localhost:8080\/#login=/);
    tunneled.close();
  });
});

describe('tandem serve: the contract over the WebSocket, against a real host and bash', () => {
  let t: TestServer;
  let port: number;
  let secret: string;

  beforeAll(async () => {
    t = await startTestServer();
    port = t.server.port;
    secret = (await login(port, tokenOf(t.server.loginUrl()))).secret!;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('round-trips environment, create, attach, input, resize and close', async () => {
    const client = await TestClient.connect(port, secret);
    const env = await client.call('environment', {});
    expect(env.shells.map((s: { name: string }) => s.name)).toContain('bash');

    const info = await client.call('create', { shell: 'bash', cols: 100, rows: 30, title: 'web test' });
    expect(info).toMatchObject({ title: 'web test', shell: 'bash', origin: 'user', cols: 100, rows: 30 });
    await client.waitFor(
      () => client.events('roster').some((r) => (r as { terminals: Array<{ id: string }> }).terminals.some((x) => x.id === info.id)),
      30_000,
      'roster',
    );

    const attached = await client.call('attach', { id: info.id });
    expect(typeof attached.snapshot).toBe('string');
    expect(attached.writable).toBe(true);
    expect(attached.info.id).toBe(info.id);
    const attachmentId: string = attached.attachmentId;

    await client.call('input', { attachmentId, data: 'echo hi-$((40+2))\r', typed: true });
    await client.waitForOutput(attachmentId, 'hi-42');
    // The roster goes out again when the command ends: the UI shows its exit.
    type Listed = { id: string; lastCommand: { command: string | null; exitCode: number | null; finishedAt: string } | null };
    const lastOf = () =>
      client
        .events('roster')
        .map((r) => (r as { terminals: Listed[] }).terminals.find((x) => x.id === info.id)?.lastCommand)
        .filter(Boolean)
        .at(-1);
    await client.waitFor(() => lastOf()?.command != null, 30_000, 'roster with lastCommand');
    expect(lastOf()).toMatchObject({ command: 'echo hi-$((40+2))', exitCode: 0 });
    expect(Date.parse(lastOf()!.finishedAt)).toBeGreaterThan(Date.now() - 60_000);
    // Frames are numbered from 1 after the snapshot, without gaps.
    const seqs = client
      .events('output')
      .filter((p) => (p as { attachmentId: string }).attachmentId === attachmentId)
      .map((p) => (p as { seq: number }).seq);
    expect(seqs[0]).toBe(1);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));

    await client.call('resize', { attachmentId, cols: 90, rows: 25 });
    const listed = await client.call('list', {});
    expect(listed.terminals.find((x: { id: string }) => x.id === info.id)).toMatchObject({ cols: 90, rows: 25 });

    const closed = await client.call('close', { id: info.id });
    expect(closed).toEqual({ closed: true, orphans: [] });
    expect((await client.call('list', {})).terminals).toEqual([]);
    const gone = await client.callRaw('input', { attachmentId, data: 'x', typed: true });
    expect(gone).toMatchObject({ ok: false, error: { code: 'not_found' } });
    client.close();
  });

  it('answers invalid JSON and schema violations with typed errors and keeps the connection', async () => {
    const client = await TestClient.connect(port, secret);
    const errorsBefore = () => client.messages.filter((m) => m.type === 'result' && !m.ok);
    client.send('this is not json');
    const notJson = await client.waitFor(() => errorsBefore()[0]);
    expect(notJson).toMatchObject({ type: 'result', id: null, ok: false, error: { code: 'invalid_argument' } });

    client.send({ type: 'call', id: 7, op: 'create', args: { cols: 'wide' } });
    const bad = await client.waitFor(() => client.messages.find((m) => m.type === 'result' && m.id === 7));
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_argument' } });
    expect((bad as { error: { message: string } }).error.message).toMatch(/^cols: /);

    client.send({ type: 'call', id: 8, op: 'noSuchOp', args: {} });
    expect(await client.waitFor(() => client.messages.find((m) => m.type === 'result' && m.id === 8))).toMatchObject({
      ok: false,
      error: { code: 'invalid_argument' },
    });
    client.send({ type: 'call', id: 'nine', op: 'list', args: {} });
    client.send({ type: 'nonsense' });
    client.send('null');
    client.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    await client.waitFor(() => errorsBefore().filter((m) => m.id === null).length >= 5, 30_000, 'five id-less errors');
    for (const message of errorsBefore()) expect(message).toMatchObject({ ok: false, error: { code: 'invalid_argument' } });

    expect(client.closed).toBeNull();
    expect((await client.call('environment', {})).platform).toBe(process.platform);
    client.close();
  });

  it('closes the connection with 1009 and a reason on an oversized frame', async () => {
    const client = await TestClient.connect(port, secret);
    client.send(JSON.stringify({ type: 'call', id: 1, op: 'list', args: { pad: 'x'.repeat(1_100_000) } }));
    const closed = await client.waitForClose();
    expect(closed.code).toBe(1009);
    expect(closed.reason).toMatch(/larger than 1024 KiB/);
  });

  it('answers a cursor-position request exactly once with a browser-like client attached', async () => {
    const client = await TestClient.connect(port, secret);
    const info = await client.call('create', { shell: 'bash', cols: 80, rows: 24 });
    const { attachmentId } = await client.call('attach', { id: info.id });
    // A browser-like client applies frames in its own emulator but never forwards the
    // emulator's protocol replies: the host is the only answerer.
    await client.call('input', {
      attachmentId,
      data: `printf '\\033[6n'; read -rsd R x; echo "got:\${#x}"; read -t 1 -rsd R y; echo "second:\${#y}:end"\r`,
      typed: true,
    });
    const text = await client.waitForOutput(attachmentId, /second:\d+:end/, 30_000);
    expect(text).toMatch(/got:[1-9]\d*/);
    expect(text).toMatch(/second:0:end/);
    await client.call('close', { id: info.id });
    client.close();
  });

  it('restores the screen after a disconnect, and detaching never stops the shell', async () => {
    const first = await TestClient.connect(port, secret);
    const info = await first.call('create', { shell: 'bash', cols: 80, rows: 24 });
    const { attachmentId } = await first.call('attach', { id: info.id });
    await first.call('input', { attachmentId, data: 'echo before-$((6*7))-disconnect\r', typed: true });
    await first.waitForOutput(attachmentId, 'before-42-disconnect');
    first.close();
    await first.waitForClose();

    const second = await TestClient.connect(port, secret);
    const listed = await second.call('list', {});
    expect(listed.terminals.map((x: { id: string }) => x.id)).toContain(info.id);
    expect(process.kill(info.pid, 0)).toBe(true);
    const again = await second.call('attach', { id: info.id });
    expect(again.snapshot).toContain('before-42-disconnect');
    expect(again.writable).toBe(true);
    await second.call('input', { attachmentId: again.attachmentId, data: 'echo after-$((7*7))\r', typed: true });
    await second.waitForOutput(again.attachmentId, 'after-49');
    await second.call('close', { id: info.id });
    second.close();
  });

  it('leaves no orphan view when the client leaves while an attach is running', async () => {
    const owner = await TestClient.connect(port, secret);
    const info = await owner.call('create', { shell: 'bash', cols: 80, rows: 24 });
    const own = await owner.call('attach', { id: info.id });
    // Hold attaches (as a busy emulator would) until the clients that asked are gone: each
    // client leaves once the host has its attach under way, and the attaches finish after.
    const attach = t.host.attach.bind(t.host);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const started: Array<Promise<unknown>> = [];
    t.host.attach = (...args: Parameters<typeof attach>) => {
      const running = released.then(() => attach(...args));
      started.push(running.catch(() => undefined));
      return running;
    };
    try {
      for (let i = 0; i < 3; i++) {
        const leaving = await TestClient.connect(port, secret);
        leaving.send({ type: 'call', id: 1, op: 'attach', args: { id: info.id } });
        await waitUntil(() => started.length === i + 1, 30_000, 'the host to start the attach');
        leaving.ws.terminate();
      }
      await waitUntil(() => t.server.connections === 1, 30_000, 'the leaving clients to be gone');
      release();
      await Promise.all(started);
      // The views exist now; the transport detaches each once its attach settles.
      await waitUntil(() => t.host.get(info.id).attachments.size === 1, 30_000, 'the late views to be detached');
    } finally {
      t.host.attach = attach;
    }
    expect([...t.host.get(info.id).attachments.keys()]).toEqual([own.attachmentId]);
    // The remaining view still holds input.
    await owner.call('input', { attachmentId: own.attachmentId, data: 'echo still-$((3*3))\r', typed: true });
    await owner.waitForOutput(own.attachmentId, 'still-9');
    await owner.call('close', { id: info.id });
    owner.close();
  });

  it("refuses to act on another client's view", async () => {
    const owner = await TestClient.connect(port, secret);
    const info = await owner.call('create', { shell: 'bash', cols: 80, rows: 24 });
    const view = await owner.call('attach', { id: info.id });
    const other = await TestClient.connect(port, secret);
    for (const [op, args] of [
      ['input', { attachmentId: view.attachmentId, data: 'echo hijack\r', typed: true }],
      ['ack', { attachmentId: view.attachmentId, seq: 1 }],
      ['resize', { attachmentId: view.attachmentId, cols: 40, rows: 10 }],
    ] as const) {
      const result = await other.callRaw(op, args as never);
      expect(result).toMatchObject({ ok: false, error: { code: 'not_found' } });
    }
    await other.call('detach', { attachmentId: view.attachmentId });
    await owner.call('input', { attachmentId: view.attachmentId, data: 'echo still-mine\r', typed: true });
    await owner.waitForOutput(view.attachmentId, 'still-mine');
    await owner.call('close', { id: info.id });
    owner.close();
    other.close();
  });

  // Frames the host emits while `attach` runs (output the snapshot did not cover) carry the new
  // attachment's id, and the transport orders them after the attach reply (EventGate).
  it("delivers a new attachment's first frames after its attach reply, under its own id", async () => {
    const writer = await TestClient.connect(port, secret);
    const info = await writer.call('create', { shell: 'bash', cols: 80, rows: 24 });
    const first = await writer.call('attach', { id: info.id });
    await writer.call('input', { attachmentId: first.attachmentId, data: 'for i in $(seq 1 100000); do echo line-$i; done\r', typed: true });
    await writer.waitForOutput(first.attachmentId, 'line-3000');
    const viewer = await TestClient.connect(port, secret);
    const order: string[] = [];
    viewer.ws.on('message', (data, isBinary) => {
      const message = decodeServerMessage(isBinary ? (data as Buffer) : String(data)) as {
        type: string;
        id?: number;
        event?: string;
        payload?: { attachmentId?: string };
      };
      if (message.type === 'result') order.push(`result:${message.id}`);
      else if (message.event === 'output') order.push(`output:${message.payload?.attachmentId}`);
    });
    const second = await viewer.call('attach', { id: info.id });
    await viewer.waitFor(() => order.filter((entry) => entry.startsWith('output')).length >= 3, 30_000, 'three frames');
    const resultAt = order.indexOf('result:1');
    expect(resultAt).toBeGreaterThanOrEqual(0);
    expect(order.slice(0, resultAt).filter((entry) => entry.startsWith('output'))).toEqual([]);
    // Every frame names the attachment it belongs to.
    expect(order.filter((entry) => entry.startsWith('output')).every((entry) => entry === `output:${second.attachmentId}`)).toBe(true);
    await writer.call('close', { id: info.id });
    writer.close();
    viewer.close();
  });

  it('pauses the PTY for a follower that never acknowledges, drops it after the stall timeout, and keeps the terminal', async () => {
    const slow = await TestClient.connect(port, secret, { autoAck: false });
    const info = await slow.call('create', { shell: 'bash', cols: 80, rows: 24 });
    const { attachmentId } = await slow.call('attach', { id: info.id });
    await slow.call('input', { attachmentId, data: 'yes flood-line\r', typed: true });
    // The PTY pauses once the only follower is ~1 MiB behind: output stops growing.
    const terminal = t.host.get(info.id);
    const paused = vi.spyOn(terminal.session, 'pause');
    await slow.waitFor(() => (slow.output.get(attachmentId)?.length ?? 0) > 1024 * 1024, 30_000, '1 MiB of output');
    await waitUntil(() => paused.mock.calls.length > 0, 30_000, 'the PTY to pause');
    // What was read before the pause took effect is still on its way: the PTY's sync (private;
    // a look, it changes nothing) delivers it to the session, the host sends all of it to the
    // view, and the view receives every frame sent.
    await (terminal.session as unknown as { pty: { sync(): Promise<void> } }).pty.sync();
    const server = terminal.attachments.get(attachmentId)!;
    await waitUntil(() => server.fromOffset === terminal.ops.streamOffset, 30_000, 'the host to send what the session has');
    await slow.waitFor(() => slow.lastSeq.get(attachmentId) === server.lastSeq, 30_000, 'the frames sent before the pause');
    const pausedAt = slow.output.get(attachmentId)!.length;
    expect(pausedAt).toBeLessThan(4 * 1024 * 1024);

    // Nothing more arrives until the stall timeout drops the view (the window is the host's own
    // timer, not a guessed sleep: a loaded machine only makes it longer).
    const dropped = await slow.waitFor(
      () => slow.events('attachmentClosed').find((p) => (p as { attachmentId: string }).attachmentId === attachmentId),
      60_000,
      'attachmentClosed',
    );
    expect(slow.output.get(attachmentId)!.length).toBe(pausedAt);
    expect(dropped).toMatchObject({ attachmentId, error: { code: 'capacity' } });
    expect(slow.closed).toBeNull();

    // The host's state survived: a new view attaches, interrupts the flood and runs a command.
    const fresh = await TestClient.connect(port, secret);
    const again = await fresh.call('attach', { id: info.id });
    await fresh.call('input', { attachmentId: again.attachmentId, data: '\x03', typed: true });
    // Typed at the prompt, once the flood is over (not while yes still runs).
    await waitUntil(() => terminal.session.status === 'idle', 30_000, 'the flood to end');
    await fresh.call('input', { attachmentId: again.attachmentId, data: 'echo ok-$((5*5))\r', typed: true });
    await fresh.waitForOutput(again.attachmentId, 'ok-25', 30_000);
    await fresh.call('close', { id: info.id });
    fresh.close();
    slow.close();
  });
});

describe('tandem serve: clients that stop reading', () => {
  it('closes a socket whose unsent output passes maxBufferedBytes, and keeps the terminal', async () => {
    const t = await startTestServer({ maxBufferedBytes: 64 * 1024 });
    try {
      const port = t.server.port;
      const secret = (await login(port, tokenOf(t.server.loginUrl()))).secret!;
      const stuck = await TestClient.connect(port, secret, { autoAck: false });
      const info = await stuck.call('create', { shell: 'bash', cols: 80, rows: 24 });
      const { attachmentId } = await stuck.call('attach', { id: info.id });
      await stuck.call('input', { attachmentId, data: 'yes stuck-line\r', typed: true });
      await stuck.waitForOutput(attachmentId, 'stuck-line');
      // Stop reading the socket altogether, but keep acknowledging everything (a broken
      // client): the host's flow control sees no reason to pause, so the server's send
      // buffer grows past the bound.
      stuck.ws.pause();
      const acking = setInterval(() => stuck.send({ type: 'call', id: 0, op: 'ack', args: { attachmentId, seq: 1e9 } }), 10);
      try {
        await waitUntil(() => t.server.connections === 0, 30_000, 'the server to drop the socket');
      } finally {
        clearInterval(acking);
      }
      stuck.ws.resume();
      const closed = await stuck.waitForClose(30_000);
      expect([1013, 1006]).toContain(closed.code);
      expect(t.host.list().map((x) => x.id)).toEqual([info.id]);
      expect(t.host.get(info.id).attachments.size).toBe(0);
    } finally {
      await t.stop();
    }
  });

  it('drops a peer that stops answering pings', async () => {
    // A peer gets one heartbeat to answer; the test process is that peer, so the heartbeat leaves
    // room for a loaded machine to answer in time.
    const t = await startTestServer({ heartbeatMs: 500 });
    try {
      const port = t.server.port;
      const secret = (await login(port, tokenOf(t.server.loginUrl()))).secret!;
      const quiet = await TestClient.connect(port, secret);
      // Kept over three heartbeats it answered (counted, not slept).
      let pings = 0;
      quiet.ws.on('ping', () => (pings += 1));
      await waitUntil(() => pings >= 3, 30_000, 'three pings');
      expect(t.server.connections).toBe(1);
      quiet.ws.pause();
      await waitUntil(() => t.server.connections === 0, 30_000, 'the server to drop the silent peer');
    } finally {
      await t.stop();
    }
  });
});
