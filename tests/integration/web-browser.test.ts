/**
 * The browser side of `tandem serve` in a real Chromium (playwright-core): the login fragment
 * traded for a per-tab session secret, the fragment removed from the address bar, no token
 * in any request or Referer, the WebSocket allowed by the page's CSP, the contract round
 * trip through the page's own client (src/renderer/src/api), a reload restoring the session,
 * single-use minted links, reconnect, and "log in again" after a restart.
 * Skipped when no Chromium is installed (TANDEM_CHROMIUM or /usr/bin/chromium).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebServer } from '../../src/main/web/server.js';
import { chromium as chromiumBrowser, chromiumPath, runs } from '../support/capabilities.js';
import { startTestServer, type TestServer, tokenOf } from './web-helpers.js';

const root = resolve(import.meta.dirname, '../..');
// TANDEM_CHROMIUM makes the browser required: a missing one then fails instead of skipping.
const inBrowser = runs('the browser tests of tandem serve', chromiumBrowser);

/** Builds the page's API client (src/renderer/src/api) into one script, as the renderer build would. */
async function buildClientBundle(outDir: string): Promise<void> {
  const entry = join(outDir, 'entry.ts');
  writeFileSync(entry, `import { connect } from ${JSON.stringify(join(root, 'src/renderer/src/api/index.ts'))};\n(window as any).tandemApi = { connect };\n`);
  await build({
    configFile: false,
    logLevel: 'silent',
    root: outDir,
    build: {
      outDir: join(outDir, 'assets'),
      emptyOutDir: false,
      minify: false,
      lib: { entry, formats: ['iife'], name: 'tandemApiBundle', fileName: () => 'api.js' },
    },
  });
}

type Logged = { url: string; referer: string | undefined };

declare global {
  interface Window {
    tandemApi: { connect: typeof import('../../src/renderer/src/api/index.js').connect };
    t: {
      api?: import('../../src/renderer/src/api/index.js').TandemConnection;
      reconnects: number;
      statuses: string[];
      output: string;
    };
  }
}

describe.runIf(inBrowser)('tandem serve in a browser', () => {
  let t: TestServer;
  let browser: Browser;
  let bundleDir = '';
  const requests: Logged[] = [];
  let port = 0;

  beforeAll(async () => {
    bundleDir = mkdtempSync(join(tmpdir(), 'tandem-bundle-'));
    await buildClientBundle(bundleDir);
    // The page carries the renderer's real meta CSP, so the WebSocket must pass both policies.
    const meta = /<meta\s+http-equiv="Content-Security-Policy"[\s\S]*?\/>/.exec(readFileSync(join(root, 'src/renderer/index.html'), 'utf8'))![0];
    t = await startTestServer({}, {});
    writeFileSync(
      join(t.rendererDir, 'index.html'),
      `<!doctype html><html><head><meta charset="UTF-8">${meta}<title>Tandem</title></head><body><a id="out" href="https://example.invalid/">out</a><script src="./assets/api.js"></script></body></html>`,
    );
    writeFileSync(join(t.rendererDir, 'assets', 'api.js'), readFileSync(join(bundleDir, 'assets', 'api.js')));
    port = t.server.port;
    (t.server as unknown as { http: { prependListener(event: 'request' | 'upgrade', listener: (req: IncomingMessage) => void): void } }).http.prependListener(
      'request',
      (req) => {
        requests.push({ url: req.url ?? '', referer: req.headers.referer });
      },
    );
    (t.server as unknown as { http: { prependListener(event: 'request' | 'upgrade', listener: (req: IncomingMessage) => void): void } }).http.prependListener(
      'upgrade',
      (req) => {
        requests.push({ url: req.url ?? '', referer: req.headers.referer });
      },
    );
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
  });

  async function connectPage(page: Page): Promise<void> {
    await page.evaluate(async () => {
      window.t = { reconnects: 0, statuses: [], output: '' };
      window.t.api = await window.tandemApi.connect({
        onReconnect: () => {
          window.t.reconnects += 1;
        },
        onStatus: (status) => {
          window.t.statuses.push(status);
        },
      });
    });
  }

  it('logs in from the fragment, drops it from the address bar, and runs the contract over the WebSocket', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const browserRequests: Logged[] = [];
    page.on('request', (request) => {
      void request.allHeaders().then((headers) => browserRequests.push({ url: request.url().replace(/#.*$/, ''), referer: headers.referer }));
    });
    const token = tokenOf(t.server.loginUrl());
    await page.goto(t.server.loginUrl());
    const historyBefore = await page.evaluate(() => history.length);
    await connectPage(page);

    // Replaced, not pushed: no history entry keeps the token.
    expect(page.url()).toBe(`http://127.0.0.1:${port}/`);
    expect(await page.evaluate(() => history.length)).toBe(historyBefore);
    const stored = await page.evaluate(() => sessionStorage.getItem('tandem.session'));
    expect(stored).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await page.evaluate(() => window.t.api!.transport)).toBe('websocket');

    const result = await page.evaluate(async () => {
      const api = window.t.api!;
      const info = await api.call('create', { shell: 'bash', cols: 80, rows: 24 });
      const { attachmentId } = await api.call('attach', { id: info.id });
      const seen = new Promise<void>((done) => {
        api.on('output', (frame) => {
          if (frame.attachmentId !== attachmentId) return;
          window.t.output += frame.data;
          void api.call('ack', { attachmentId, seq: frame.seq });
          if (window.t.output.includes('browser-42')) done();
        });
      });
      await api.call('input', { attachmentId, data: 'echo browser-$((6*7))\r', typed: true });
      await seen;
      return { id: info.id };
    });
    expect(await page.evaluate(() => window.t.output)).toContain('browser-42');

    // A reload keeps the session (sessionStorage) and the terminals (the host).
    await page.goto(`http://127.0.0.1:${port}/`);
    await connectPage(page);
    const listed = await page.evaluate(async () => (await window.t.api!.call('list', {})).terminals.map((x) => x.id));
    expect(listed).toContain(result.id);
    await page.evaluate(async (id) => window.t.api!.call('close', { id }), result.id);

    // Following a link out of the page sends no Referer; the token never left the page.
    const outgoing = page.waitForRequest((request) => request.url().startsWith('https://example.invalid/'));
    await page.evaluate(() => document.querySelector('a')!.click());
    expect((await (await outgoing).allHeaders()).referer).toBeUndefined();
    for (const entry of [...requests, ...browserRequests]) {
      expect(entry.url).not.toContain(token);
      expect(entry.referer ?? '').not.toContain(token);
    }
    expect(requests.some((entry) => entry.url === '/session')).toBe(true);
    expect(requests.some((entry) => entry.url === '/ws')).toBe(true);

    await context.close();
  });

  it('needs a login in a new tab, and mints single-use links for one', async () => {
    const context = await browser.newContext();
    const first = await context.newPage();
    await first.goto(t.server.loginUrl());
    await connectPage(first);
    const link = await first.evaluate(async () => (await window.t.api!.call('mintLink', {})).url);
    expect(link).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/#login=`));

    const bare = await context.newPage();
    await bare.goto(`http://127.0.0.1:${port}/`);
    await expect(connectPage(bare)).rejects.toThrow(/not logged in/);

    const second = await context.newPage();
    await second.goto(link);
    await connectPage(second);
    expect(await second.evaluate(async () => (await window.t.api!.call('environment', {})).platform)).toBe(process.platform);

    const third = await context.newPage();
    await third.goto(link);
    await expect(connectPage(third)).rejects.toThrow(/not valid/);
    expect(third.url()).toBe(`http://127.0.0.1:${port}/`);
    await context.close();
  });

  it('reconnects after a dropped connection, and asks for a login after a restart', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(t.server.loginUrl());
    await connectPage(page);

    const wss = (t.server as unknown as { wss: { clients: Set<{ terminate(): void }> } }).wss;
    for (const client of wss.clients) client.terminate();
    await page.waitForFunction(() => window.t.reconnects === 1, undefined, { timeout: 10_000 });
    expect(await page.evaluate(() => window.t.statuses)).toEqual(['connecting', 'connected', 'reconnecting', 'connected']);
    expect(await page.evaluate(async () => Array.isArray((await window.t.api!.call('list', {})).terminals))).toBe(true);

    // A restarted server on the same port knows none of the old sessions.
    await t.server.close();
    t.server = await WebServer.start({ host: t.host, rendererDir: t.rendererDir, port, heartbeatMs: 0 });
    await page.waitForFunction(() => window.t.statuses.includes('login_required'), undefined, { timeout: 15_000 });
    expect(await page.evaluate(() => sessionStorage.getItem('tandem.session'))).toBeNull();
    await context.close();
  });
});
