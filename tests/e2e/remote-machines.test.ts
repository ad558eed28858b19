/**
 * Remote machines in the UI (issue 30): a real OpenSSH server on 127.0.0.1 (tests/support/sshd.ts)
 * for a second local user, that user's real `tandem host --stdio`, and this side's `tandem serve`
 * (in this process, with its machines wired as `tandem serve --machine box=DEST` wires them:
 * cli.ts `startMachines`) in Debian's Chromium. The machine's group carries its name, a terminal
 * opened from the new-terminal menu runs there, and killing the ssh process shows "reconnecting"
 * on the tab, then the view resumes with every line of a count, in order, once. A machine whose
 * Tandem is gone when the link comes back is lost for good, and the page says so and why.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMachines, startServe } from '../../src/main/cli';
import type { Runtime } from '../../src/main/runtime';
import type { RemoteMachines } from '../../src/main/remote/machines';
import { connectRemoteAgent } from '../support/remote-agent';
import { requireSsh, type Sshd, startSshd } from '../support/sshd';
import { chromiumAvailable, chromiumRequired, launchChromium, skipReason } from './helpers/browser';
import { marksOf, screenText, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { missingBuild, projectRoot, serveEnv, testUrl } from './helpers/serve';
import { hostLook, shots } from './helpers/shots';

// Fails (not skips) without sshd when TANDEM_REQUIRE_SSH=1, as the integration tests do.
const ssh = requireSsh();
const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

/** This process's children named `comm` (sshd's listener, started by startSshd here). */
function childrenNamed(comm: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (name === comm && ppid === process.pid) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

describe.skipIf(ssh.skip || !runUi)(`Tandem UI: a remote machine over a real sshd${ssh.reason ? ` (skipped: ${ssh.reason})` : ''}`, () => {
  let sshd: Sshd;
  let serve: Runtime;
  let home: string;
  let machines: RemoteMachines;
  let browser: Browser;
  let page: Page;
  /** What ssh runs on the remote (`sh remote.sh`): the test can make Tandem vanish there. */
  let remoteDir: string;
  let remoteScript: string;

  beforeAll(async () => {
    sshd = await startSshd('tandemremui');
    const missing = missingBuild();
    if (missing) throw new Error(missing);
    home = mkdtempSync(join(tmpdir(), 'tandem-ui-remote-'));
    // What `tandem serve --machine box=DEST` runs (cli.ts serve), with TANDEM_SSH and
    // TANDEM_REMOTE_COMMAND pointing ssh at the test server and its user's `tandem host --stdio`.
    // The remote user reads the script: its own world-readable folder, not the 0700 home.
    remoteDir = mkdtempSync(join(tmpdir(), 'tandem-ui-remote-cmd-'));
    chmodSync(remoteDir, 0o755);
    remoteScript = join(remoteDir, 'remote.sh');
    writeFileSync(remoteScript, `exec ${sshd.remoteTandem}\n`, { mode: 0o644 });
    const env = { ...serveEnv(home), TANDEM_SSH: sshd.ssh.join(' '), TANDEM_REMOTE_COMMAND: `sh ${remoteScript}` };
    const io = { out: () => undefined, err: () => undefined, env };
    serve = await startServe({ port: 0, allowOrigins: [], trustLocalAgents: false }, io, join(projectRoot, 'out/renderer'));
    machines = startMachines([{ name: 'box', destination: sshd.destination }], io, serve.host.version);
    // Read per connection: set before the page connects, as serve does.
    serve.dispatch.remote = machines;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(60_000);
    page = await context.newPage();
    page.on('pageerror', (error) => console.error('page error:', error));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    machines?.stop();
    await serve?.stop();
    if (home) rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    if (remoteDir) rmSync(remoteDir, { recursive: true, force: true });
    await sshd?.stop();
  });

  it("shows the machine's group, opens a terminal there from the menu, and resumes it without loss after ssh is killed", async () => {
    await page.goto(testUrl(serve.server.loginUrl()));
    // The machine's group is there before any of its terminals: its name, connected.
    const chip = page.locator('[data-machine-group="box"]');
    await page.locator('[data-machine-group="box"][data-status="connected"]').waitFor();
    expect((await chip.textContent())?.trim()).toBe('box');

    // A local terminal first: the remote group comes after the local tabs.
    await page.getByRole('button', { name: 'New terminal', exact: true }).click();
    await page.locator('[role="tab"][aria-selected="true"][data-terminal-id]').waitFor();

    await page.getByRole('button', { name: 'Choose a shell' }).click();
    await page.getByRole('menuitem').filter({ hasText: 'box' }).click();
    const remoteTab = page.locator('[role="tab"][aria-selected="true"][data-terminal-id^="box:"]');
    await remoteTab.waitFor();
    const id = (await remoteTab.getAttribute('data-terminal-id'))!;
    expect(await page.locator(`[data-tab-id="${id}"]`).getAttribute('data-machine')).toBe('box');
    // Local tab, then the machine's chip, then its tab.
    const order = await page
      .locator('[role="tablist"] > *')
      .evaluateAll((nodes) =>
        nodes.map((node) =>
          (node as HTMLElement).dataset.machineGroup
            ? `group:${(node as HTMLElement).dataset.machineGroup}`
            : ((node as HTMLElement).dataset.machine ?? 'local'),
        ),
      );
    // (The remote user's daemon outlives a run and keeps closed sessions as transcripts: an earlier run's may be in the group too.)
    expect(order.slice(0, 2)).toEqual(['local', 'group:box']);
    expect(order.slice(2).every((entry) => entry === 'box')).toBe(true);
    expect(order.length).toBeGreaterThan(2);

    await waitForPrompt(page, id);
    await typeLine(page, 'echo "on-$(whoami)"');
    await waitForScreen(page, id, new RegExp(`^on-${sshd.user}$`, 'm'));
    // The remote host's command marks reach the view: the command's mark, coloured by its end.
    await expect.poll(async () => (await marksOf(page, id)).find((mark) => mark.command === 'echo "on-$(whoami)"')?.status).toBe('success');
    await shots(page, 'remote-group', { looks: hostLook(page, serve.host.settings) });

    // A count that runs across the drop: every line must arrive once, in order.
    const count = 3000;
    await typeLine(page, `for i in $(seq 1 ${count}); do echo "n=$i"; if [ $((i % 100)) = 0 ]; then sleep 0.05; fi; done; echo count-"done"`);
    await waitForScreen(page, id, /^n=300$/m);
    // sshd's listener paused: the reconnect waits (its TCP connect is queued), so "reconnecting" stays up to be seen.
    const listeners = childrenNamed('sshd');
    expect(listeners.length).toBe(1);
    process.kill(listeners[0]!, 'SIGSTOP');
    try {
      const box = machines.machines.get('box')!;
      box.process!.kill('SIGKILL');
      const reconnecting = page.locator(`[data-tab-id="${id}"] [data-link-state="reconnecting"]`);
      await reconnecting.waitFor();
      expect((await reconnecting.textContent())?.trim()).toBe('reconnecting');
      await page.locator('[data-machine-group="box"][data-status="reconnecting"]').waitFor();
      // The page's own link is up; the status line says the machine's is not.
      const note = page.locator('[data-connection="connected"] [data-machines-reconnecting="box"]');
      await note.waitFor();
      expect((await note.textContent())?.trim()).toBe('· box reconnecting…');
      await shots(page, 'remote-reconnecting', { looks: hostLook(page, serve.host.settings) });
    } finally {
      process.kill(listeners[0]!, 'SIGCONT');
    }
    await page.locator(`[data-tab-id="${id}"][data-link="connected"]`).waitFor();
    expect(await page.locator(`[data-tab-id="${id}"] [data-link-state]`).count()).toBe(0);
    await waitForScreen(page, id, /^count-done$/m, 120_000);
    const seen = [...(await screenText(page, id)).matchAll(/^n=([0-9]+)$/gm)].map((match) => Number(match[1]));
    expect(seen).toEqual(Array.from({ length: count }, (_, i) => i + 1));

    // The link carries typing again.
    await typeLine(page, 'echo after-$((6*7))');
    await waitForScreen(page, id, /^after-42$/m);
    await shots(page, 'remote-resumed-dark');
    await page.locator(`[data-tab-id="${id}"] button[aria-label^="Close"]`).click();
    await page.locator(`[data-tab-id="${id}"]`).waitFor({ state: 'detached' });
  }, 300_000);

  it('adds a machine from the settings: a bad name is told, a reachable one connects and gets its group, an unreachable one shows why', async () => {
    await page.getByRole('button', { name: 'Settings' }).click();
    const name = page.getByLabel('Machine name');
    const destination = page.getByLabel('ssh destination');
    await name.fill('-bad');
    await destination.fill(sshd.destination);
    await page.locator('[data-settings="machines"]').getByRole('button', { name: 'Add', exact: true }).click();
    await expect.poll(async () => (await page.locator('[data-machine-error]').textContent()) ?? '').toMatch(/The name must be/);

    await name.fill('box2');
    await page.locator('[data-settings="machines"]').getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator('[data-settings="machines"] [data-machine="box2"][data-status="connected"]').waitFor();
    await page.locator('[data-machine-group="box2"][data-status="connected"]').waitFor();
    expect(await page.locator('[data-machine-error]').count()).toBe(0);

    // Nothing listens on 127.0.0.2's port: ssh fails, and the machine says so in one sentence.
    await name.fill('nowhere');
    await destination.fill(sshd.destination.replace('127.0.0.1', '127.0.0.2'));
    await page.locator('[data-settings="machines"]').getByRole('button', { name: 'Add', exact: true }).click();
    const row = page.locator('[data-settings="machines"] [data-machine="nowhere"]');
    await row.waitFor();
    const problem = page.locator('[data-settings="machines"] .machine-problem').last();
    await expect.poll(async () => (await problem.textContent()) ?? '', { timeout: 30_000 }).toMatch(/^ssh to \S+@127\.0\.0\.2 failed: .*refused/);
    await shots(page, 'remote-settings', { reveal: page.locator('.machine-form'), looks: hostLook(page, serve.host.settings) });

    // The agents panel has a group per machine, under its name: box's host has no paired agent
    // (that this side reads it from the host, not guesses, shows in the unreachable one's line).
    await page.getByRole('button', { name: /^Agents/ }).click();
    const onBox = page.locator('[data-machine-agents="box"]');
    await onBox.waitFor();
    expect((await onBox.locator('h3').textContent())?.replace(/\s+/g, ' ').trim()).toBe('On box');
    expect(await onBox.textContent()).toContain('No agent is paired on box.');
    await expect.poll(async () => (await page.locator('[data-machine-agents="nowhere"]').textContent()) ?? '').toMatch(/The link is connecting|Not reachable/);
    await shots(page, 'remote-agents-dark', { reveal: onBox });

    // Remove: the unreachable machine's row, its link and its agents group go; the others stay.
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Remove nowhere' }).click();
    await page.locator('[data-settings="machines"] [data-machine="nowhere"]').waitFor({ state: 'detached' });
    expect(machines.machines.has('nowhere')).toBe(false);
    expect(
      await page.locator('[data-settings="machines"] [data-machine]').evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.machine)),
    ).toEqual(['box', 'box2']);
    await shots(page, 'remote-settings-remove-dark', { reveal: page.locator('[data-settings="machines"]') });
  }, 120_000);
  it('a remote agent paired from here gets a card under its machine: the person sets its policy there and revokes it there', async () => {
    const agentsFile = join(sshd.home, '.config', 'Tandem', 'agents.json');
    const record = () =>
      (JSON.parse(readFileSync(agentsFile, 'utf8')) as { agents: Array<{ name: string; settings?: { policy?: string } }> }).agents.find(
        (a) => a.name === 'far-ui',
      );
    // The box's daemon outlives a run: an earlier run's far-ui goes first.
    await machines.machines
      .get('box')!
      .call('revokeAgent', { name: 'far-ui' })
      .catch(() => undefined);
    const agent = await connectRemoteAgent(sshd, 'far-ui');
    const list = () => agent.call('terminal_list');
    try {
      expect((await list()).isError).toBe(true);
      await page.getByRole('button', { name: /^Agents/ }).click();
      // box2 is the same account: its request shows under both names; this one answers it for box.
      await page.getByRole('button', { name: 'Always allow', description: /^Pair far-ui@box:/ }).click();
      await expect.poll(async () => (await list()).isError ?? false, { timeout: 60_000 }).toBe(false);

      // Its card, under the machine, with the controls of a local agent's.
      const card = page.locator('[data-machine-agents="box"] article[aria-label="Agent far-ui on box"]');
      await card.waitFor();
      const policy = card.getByLabel('Approval policy for far-ui on box');
      expect(await policy.inputValue()).toBe('ask-unless-allowed');
      await policy.selectOption('ask');
      await expect.poll(() => record()?.settings?.policy).toBe('ask');
      await expect.poll(() => policy.inputValue()).toBe('ask');
      await shots(page, 'remote-agent-card', { reveal: card, looks: hostLook(page, serve.host.settings) });

      await card.getByRole('button', { name: 'Revoke…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Revoke “far-ui” on box?' });
      await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
      await card.waitFor({ state: 'detached' });
      expect(record()).toBeUndefined();
      await expect.poll(async () => (await list()).isError ?? false, { timeout: 60_000 }).toBe(true);
      await page.getByRole('button', { name: 'Close the Agents panel' }).click();
    } finally {
      await agent.close();
    }
  }, 180_000);

  it('a machine whose Tandem is gone when the link comes back is lost: the tab, its group and the status line say so and why', async () => {
    // The remote daemon outlives a run and restores its last session's tabs as transcripts, and
    // one of them may be selected now: the new terminal is the selected tab no one saw before.
    const before = new Set(
      await page.locator('[role="tab"][data-terminal-id]').evaluateAll((tabs) => tabs.map((tab) => (tab as HTMLElement).dataset.terminalId)),
    );
    await page.getByRole('button', { name: 'Choose a shell' }).click();
    await page.locator('[role="menuitem"][data-machine="box"]').click();
    const selected = () =>
      page
        .locator('[role="tab"][aria-selected="true"][data-terminal-id^="box:"]')
        .getAttribute('data-terminal-id', { timeout: 1000 })
        .catch(() => null);
    // The id the poll saw: asking again could time out on a loaded machine (it read null once).
    let found: string | null = null;
    await expect
      .poll(async () => {
        const seen = await selected();
        if (seen !== null && !before.has(seen)) found = seen;
        return found !== null;
      })
      .toBe(true);
    const id = found!;
    await waitForPrompt(page, id);
    // Tandem uninstalled there meanwhile: the shell says what a missing command says.
    writeFileSync(remoteScript, "echo 'sh: 1: tandem: command not found' >&2; exit 127\n");
    machines.machines.get('box')!.process!.kill('SIGKILL');
    const lost = page.locator(`[data-tab-id="${id}"] [data-link-state="lost"]`);
    await lost.waitFor();
    expect((await lost.textContent())?.trim()).toBe('lost');
    expect(await lost.getAttribute('title')).toBe('Tandem could not reach box; see its machine in the tab bar');
    const group = page.locator('[data-machine-group="box"][data-status="failed"]');
    await group.waitFor();
    const why = 'Tandem is not installed on box; install it there with: npm install -g tandem-terminal';
    expect(await group.getAttribute('title')).toContain(why);
    const note = page.locator('[data-connection="connected"] [data-machines-lost="box"]');
    await note.waitFor();
    expect((await note.textContent())?.trim()).toBe(`· box lost: ${why}`);
    expect(await note.getAttribute('title')).toBe(`box: ${why}`);
    // Its pane says why it takes no typing (not "another window has input").
    const pane = page.locator(`[id="pane-${id}"] [data-pane-link="lost"]`);
    await pane.waitFor();
    expect((await pane.textContent())?.trim()).toBe('Read-only: the link to box is lost');
    // The other machine is untouched.
    await page.locator('[data-machine-group="box2"][data-status="connected"]').waitFor();
    await shots(page, 'remote-lost', { looks: hostLook(page, serve.host.settings) });
  }, 120_000);
});
