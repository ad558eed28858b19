import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settlingFetch } from '../../src/main/agent/bridge/settling-fetch.js';

// A real loopback server: JSON replies, an empty 204, and an event stream that stays open
// until the client goes away (as the MCP GET channel does).
let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/json') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (req.url === '/empty') return res.writeHead(204).end();
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      return;
    }
    if (req.url === '/short-stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return res.end('data: only\n\n');
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('settlingFetch', () => {
  it('leaves no listener on a long-lived signal after hundreds of requests', async () => {
    const lifetime = new AbortController();
    const fetchOnce = settlingFetch();
    let most = 0;
    // Node's own fetch leaves one listener per request here until a garbage collection.
    for (let i = 0; i < 300; i++) {
      const response = await fetchOnce(`${base}/json`, { method: 'POST', body: '{}', signal: lifetime.signal });
      expect(await response.json()).toEqual({ ok: true });
      most = Math.max(most, abortListeners(lifetime.signal));
    }
    // Each request is unlinked once its body is read: nothing accumulates between collections.
    expect(most).toBe(0);
    expect(abortListeners(lifetime.signal)).toBe(0);
  });

  it('keeps status and headers, and handles bodiless replies', async () => {
    const lifetime = new AbortController();
    const response = await settlingFetch()(`${base}/empty`, { signal: lifetime.signal });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    const missing = await settlingFetch()(`${base}/nope`, { signal: lifetime.signal });
    expect(missing.status).toBe(404);
    expect(abortListeners(lifetime.signal)).toBe(0);
  });

  it('keeps an open event stream abortable by the long-lived signal, and unlinks it when aborted', async () => {
    const lifetime = new AbortController();
    const response = await settlingFetch()(`${base}/stream`, { signal: lifetime.signal });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: one\n\n');
    expect(abortListeners(lifetime.signal)).toBe(1);
    const next = reader.read();
    lifetime.abort(new Error('closing'));
    // Closing the transport still ends the stream (the host sees the agent go away).
    await expect(next).rejects.toThrow();
    expect(abortListeners(lifetime.signal)).toBe(0);
  });

  it('unlinks an event stream that ends by itself, and one the reader cancels', async () => {
    const lifetime = new AbortController();
    const ended = await settlingFetch()(`${base}/short-stream`, { signal: lifetime.signal });
    expect(await ended.text()).toBe('data: only\n\n');
    expect(abortListeners(lifetime.signal)).toBe(0);
    const open = await settlingFetch()(`${base}/stream`, { signal: lifetime.signal });
    expect(abortListeners(lifetime.signal)).toBe(1);
    await open.body!.cancel();
    expect(abortListeners(lifetime.signal)).toBe(0);
  });

  it('unlinks after a failed request, and refuses at once on an aborted signal', async () => {
    const lifetime = new AbortController();
    await expect(settlingFetch()('http://127.0.0.1:1/', { signal: lifetime.signal })).rejects.toThrow();
    expect(abortListeners(lifetime.signal)).toBe(0);
    lifetime.abort(new Error('gone'));
    await expect(settlingFetch()(`${base}/json`, { signal: lifetime.signal })).rejects.toThrow();
  });
});
