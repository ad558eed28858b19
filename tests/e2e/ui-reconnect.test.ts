import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { chromiumAvailable, chromiumRequired, launchChromium, screenshotPath, skipReason } from './helpers/browser';
import { dropUiConnections } from './helpers/in-process';
import { useUiFixture } from './helpers/ui-fixture';
import { activeTerminalId, openTerminal, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { missingBuild, projectRoot, serveEnv, testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

/** Words that claim the terminals still run: never on screen before Tandem has answered again. */
const claimsRunning = /terminals? (keep|kept|still) run/i;

async function notice(page: Page): Promise<string> {
  return (await page.locator('.connection-notice').textContent())?.trim() ?? '';
}

/** The connection drops (the terminals stay on the host): the page says so, reconnects and re-attaches. */
describe.skipIf(!runUi)('Tandem UI: a dropped connection', () => {
  const ui = useUiFixture({ width: 1000, height: 640 });

  it('says it lost the connection without claiming anything, then that the terminals kept running, and restores the screen', async () => {
    await ui.page.goto(testUrl(ui.serve.loginUrl));
    await ui.page.getByRole('button', { name: /^New terminal \(/ }).click();
    const id = await activeTerminalId(ui.page);
    await waitForPrompt(ui.page, id);
    await typeLine(ui.page, 'echo before-drop');
    await waitForScreen(ui.page, id, /^before-drop$/m);

    // Output produced while the page is away must show up after it re-attaches.
    await ui.serve.host.get(id).session.write('sleep 0.5; echo while-away\r');
    // Every notice the page shows while it reconnects, however briefly (the reconnect is quick).
    await ui.page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seenNotices: string[] }).seenNotices = seen;
      new MutationObserver(() => {
        const state = document.querySelector('[data-connection]')?.getAttribute('data-connection');
        const text = document.querySelector('.connection-notice')?.textContent?.trim();
        if (state === 'reconnecting' && text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    dropUiConnections(ui.serve.server);
    await ui.page.locator('[data-connection="reconnecting"]').waitFor();
    await ui.page.screenshot({ path: screenshotPath('ui-reconnecting') });
    await ui.page.locator('[data-connection="connected"]').waitFor();
    // Until Tandem answers, a dropped network and a dead Tandem look the same.
    const seen = await ui.page.evaluate(() => (window as unknown as { seenNotices: string[] }).seenNotices);
    expect(seen.length).toBeGreaterThan(0);
    for (const text of seen) expect(text).not.toMatch(claimsRunning);
    await ui.page.locator('.connection-notice', { hasText: 'Reconnected; your terminals kept running.' }).waitFor();
    await ui.page.screenshot({ path: screenshotPath('ui-reconnected-kept') });
    await waitForScreen(ui.page, id, /^while-away$/m);

    await typeLine(ui.page, 'echo after-drop');
    await waitForScreen(ui.page, id, /^after-drop$/m);
  });
});

/** A free loopback port, so the restarted Tandem answers where the page looks. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

interface Served {
  child: ChildProcess;
  loginUrl: string;
  exited: Promise<void>;
}

/** The real `tandem serve` on a fixed port and state directory, as a person starts it again after a crash. */
async function serveOn(port: number, home: string): Promise<Served> {
  const child = spawn(process.execPath, [join(projectRoot, 'bin/tandem.js'), 'serve', '--port', String(port)], {
    cwd: projectRoot,
    env: serveEnv(home),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
  const loginUrl = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /http:\/\/127\.0\.0\.1:\d+\/#login=\S+/.exec(line);
      if (match) done(match[0]);
    });
    void exited.then(() => fail(new Error(`tandem serve exited before printing its link: ${stderr}`)));
  });
  return { child, loginUrl, exited };
}

/** Tandem itself goes away: the page must not say the terminals run, and after a restart says they ended. */
describe.skipIf(!runUi || missingBuild() !== null)('Tandem UI: Tandem stops or crashes and starts again', () => {
  let browser: Browser;
  let home: string;
  const running = new Set<Served>();
  const homes: string[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
  });
  // A state directory per case: a Tandem stopped by one case brings its tabs back as transcripts
  // ("From the last session") in the next run on the same directory, which the next case would
  // count among the terminals that ended.
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'tandem-ui-restart-'));
    homes.push(home);
  });
  afterAll(async () => {
    await browser?.close();
    for (const served of running) {
      served.child.kill('SIGKILL');
      await served.exited;
    }
    for (const dir of homes) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  async function start(port: number): Promise<Served> {
    const served = await serveOn(port, home);
    running.add(served);
    void served.exited.then(() => running.delete(served));
    return served;
  }

  async function pageWithTerminals(served: Served, count: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1000, height: 640 } });
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    page.on('pageerror', (error) => console.error('page error:', error));
    await page.goto(testUrl(served.loginUrl));
    for (let i = 0; i < count; i++) await waitForPrompt(page, await openTerminal(page));
    return page;
  }

  it('a crash (SIGKILL): "not reachable" while it is down, then "restarted" with the old tabs gone', async () => {
    const port = await freePort();
    const first = await start(port);
    const page = await pageWithTerminals(first, 2);
    expect(await page.locator('[role="tab"][data-terminal-id]').count()).toBe(2);

    first.child.kill('SIGKILL');
    await first.exited;
    await page.locator('.connection-notice[data-host="unreachable"]').waitFor();
    expect(await notice(page)).toBe('Tandem is not reachable; retrying.');
    expect(await page.locator('body').innerText()).not.toMatch(claimsRunning);
    await page.screenshot({ path: screenshotPath('ui-host-unreachable') });

    const second = await start(port);
    await page.locator('.connection-notice[data-host="restarted"]').waitFor();
    expect(await notice(page)).toBe('Tandem restarted: the 2 terminals of its previous run ended with it.');
    // The tabs of terminals that no longer exist are gone, and nothing claims they run.
    expect(await page.locator('[role="tab"][data-terminal-id]').count()).toBe(0);
    expect(await page.locator('body').innerText()).not.toMatch(claimsRunning);
    await page.locator('[data-connection="login_required"]').waitFor();
    await page.screenshot({ path: screenshotPath('ui-host-restarted-after-crash') });

    // The new link logs the same page in to the new Tandem, which starts empty.
    await page.goto(testUrl(second.loginUrl));
    await page.locator('[data-connection="connected"]').waitFor();
    expect(await page.locator('[role="tab"][data-terminal-id]').count()).toBe(0);
    await page.context().close();
    second.child.kill('SIGTERM');
    await second.exited;
  }, 120_000);

  it('a clean stop (SIGTERM): "stopped and closed its terminals" at once, then "restarted"', async () => {
    const port = await freePort();
    const first = await start(port);
    const page = await pageWithTerminals(first, 1);

    first.child.kill('SIGTERM');
    await first.exited;
    await page.locator('.connection-notice[data-host="stopped"]').waitFor();
    expect(await notice(page)).toBe('Tandem stopped and closed its 1 terminal; waiting for it to start again.');
    expect(await page.locator('[role="tab"][data-terminal-id]').count()).toBe(0);
    expect(await page.locator('body').innerText()).not.toMatch(claimsRunning);
    await page.screenshot({ path: screenshotPath('ui-host-stopped') });

    const second = await start(port);
    await page.locator('.connection-notice[data-host="restarted"]').waitFor();
    expect(await notice(page)).toBe('Tandem restarted: the 1 terminal of its previous run ended with it.');
    await page.screenshot({ path: screenshotPath('ui-host-restarted-after-stop') });
    await page.context().close();
    second.child.kill('SIGTERM');
    await second.exited;
  }, 120_000);
  /**
   * After a crash another user's program takes the port: one that accepts any WebSocket and says
   * every session is fine, or one that answers 401 naming a made-up run. Neither can prove it is
   * the run that logged the page in, so the page never says its terminals run and never sends it
   * its session secret.
   */
  for (const mode of ['accepts any WebSocket', 'answers 401 with a made-up instance id'] as const) {
    it(`a squatter on the dead Tandem's port that ${mode}: no "kept running", and the secret never reaches it`, async () => {
      const port = await freePort();
      const first = await start(port);
      const page = await pageWithTerminals(first, 1);
      const secret = await page.evaluate(() => sessionStorage.getItem('tandem.session'));
      expect(secret).toMatch(/^[A-Za-z0-9_-]{16,}$/);
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { seenNotices: string[] }).seenNotices = seen;
        new MutationObserver(() => {
          const text = document.querySelector('.connection-notice')?.textContent?.trim();
          if (text && seen.at(-1) !== text) seen.push(text);
        }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      });

      first.child.kill('SIGKILL');
      await first.exited;
      // Everything the squatter is sent: request lines, headers, bodies, WebSocket messages.
      const received: string[] = [];
      const record = (req: IncomingMessage) => received.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
      const squat = createHttpServer((req, res) => {
        record(req);
        req.setEncoding('utf8').on('data', (chunk: string) => received.push(chunk));
        req.on('end', () => {
          if (mode === 'answers 401 with a made-up instance id') {
            res
              .writeHead(401, { 'Content-Type': 'application/json', 'X-Tandem-Instance': 'made-up-run' })
              .end(JSON.stringify({ error: { code: 'forbidden', message: 'x' }, instance: 'made-up-run' }));
          } else if (req.url === '/session' && req.headers['x-tandem-challenge']) {
            // It tries: a "proof" it cannot compute.
            res.writeHead(200, { 'Content-Type': 'application/json', 'X-Tandem-Instance': 'made-up-run' }).end(JSON.stringify({ proof: 'A'.repeat(43) }));
          } else {
            res.writeHead(204, { 'X-Tandem-Instance': 'made-up-run' }).end();
          }
        });
      });
      const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => [...protocols][0] ?? false });
      let upgrades = 0;
      squat.on('upgrade', (req, socket, head) => {
        upgrades++;
        record(req);
        if (mode === 'answers 401 with a made-up instance id')
          return void socket.end('HTTP/1.1 401 Unauthorized\r\nX-Tandem-Instance: made-up-run\r\nContent-Length: 0\r\n\r\n');
        wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (data) => received.push(String(data))));
      });
      await new Promise<void>((done) => squat.listen(port, '127.0.0.1', () => done()));
      try {
        await page.locator('.connection-notice[data-host="restarted"]').waitFor();
        await page.locator('[data-connection="login_required"]').waitFor();
        await page.screenshot({ path: screenshotPath(`ui-squatter-${mode === 'accepts any WebSocket' ? 'ws' : '401'}`) });
        expect(await notice(page)).toBe('Tandem restarted: the 1 terminal of its previous run ended with it.');
        const seen = await page.evaluate(() => (window as unknown as { seenNotices: string[] }).seenNotices);
        for (const text of seen) expect(text).not.toMatch(claimsRunning);
        expect(await page.locator('body').innerText()).not.toMatch(claimsRunning);
        // The page asked (a challenge, its session id) and got no proof: it never sent its secret.
        expect(received.join('\n')).not.toContain(secret!);
        expect(received.some((line) => line.includes('x-tandem-challenge'))).toBe(true);
        expect(upgrades).toBe(0);
      } finally {
        wss.close();
        squat.closeAllConnections();
        await new Promise<void>((done) => squat.close(() => done()));
        await page.context().close();
      }
    }, 120_000);
  }
});
