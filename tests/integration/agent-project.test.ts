/**
 * The agent's project is the person's decision (issue 23, agent-api.md "Each agent has a
 * project the person confirmed"), not each session's claim. Found black-box (round 5): a bridge
 * started in /etc, ~/.config or another project made that folder "the project", so the open there
 * asked nothing and allow-listed reads returned /etc/shadow, rclone.conf and another project's
 * .env. Real MCP clients (the official SDK) over the agent door, real bash, the default policy.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bridgeHeaders } from '../../src/main/agent/mcp/mcp-http.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { until } from '../support/until.js';

let f: AgentFixture;
let other: string;
let dotConfig: string;
const nonce = String(Math.floor(Math.random() * 1e9));

beforeAll(async () => {
  f = await startAgentFixture();
  other = join(f.home, 'other-project');
  mkdirSync(other, { recursive: true });
  writeFileSync(join(other, '.env'), `OTHER_SECRET=${nonce}\n`);
  dotConfig = join(f.home, '.config', 'rclone');
  mkdirSync(dotConfig, { recursive: true });
  writeFileSync(join(dotConfig, 'rclone.conf'), `pass = ${nonce}\n`);
});
afterAll(async () => {
  await f.close();
});
afterEach(async () => {
  for (const request of f.layer.state().approvals) f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'test over' });
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

/** A client of `token` whose bridge claims `cwd`. */
const claiming = (token: string, cwd: string): Promise<Client> => f.client(token, { [bridgeHeaders.cwd]: encodeURIComponent(cwd) });

/** terminal_open waits for the person; the card says `why`; rejected, nothing is spawned. */
async function openAsks(client: Client, args: Record<string, unknown>, why: string): Promise<void> {
  const before = f.host.list().length;
  const opened = f.call(client, 'terminal_open', { title: 'project', shell: 'bash', ...args });
  await until(() => f.layer.state().approvals.length > 0, 'the workspace question');
  const [question] = f.layer.state().approvals;
  expect(question!.why).toContain(why);
  f.layer.answerApproval({ requestId: question!.id, decision: 'reject', reason: 'not there' });
  expect(await opened).toMatchObject({ isError: true, error: { code: 'rejected' } });
  expect(f.host.list()).toHaveLength(before);
}

describe("an agent's project", () => {
  it('is the first folder its bridge claimed that can be one, kept with its pairing: a later bridge elsewhere does not move it', async () => {
    const { token } = f.layer.pairAgent({ name: 'first' });
    const home = await claiming(token, f.project);
    expect(f.layer.state().paired.find((agent) => agent.name === 'first')?.project).toBe(realpathSync(f.project));
    // A bridge started in another project: its opens default to the project, and one there asks.
    const elsewhere = await claiming(token, other);
    const opened = (await f.call(elsewhere, 'terminal_open', { title: 'default', shell: 'bash' })) as { id: string; cwd: string };
    expect(opened.cwd).toBe(realpathSync(f.project));
    await openAsks(elsewhere, { cwd: other }, "outside the agent's project");
    await home.close();
  });

  it('is no folder a bridge claims in a dot-folder of home or the system: every open asks, and nothing is read', async () => {
    const { token } = f.layer.pairAgent({ name: 'dotted' });
    for (const cwd of [dotConfig, '/etc']) {
      const client = await claiming(token, cwd);
      expect(f.layer.state().paired.find((agent) => agent.name === 'dotted')?.project).toBeUndefined();
      await openAsks(client, {}, 'no project yet');
      await openAsks(client, { cwd }, 'no project yet');
    }
    expect(JSON.stringify(f.layer.state())).not.toContain(nonce);
  });

  it("is no folder the person's own shell runs from: a bridge in ~/bin adopts nothing, and a confined open there asks (black-box round 9)", async () => {
    const { token } = f.layer.pairAgent({ name: 'binned' });
    const bin = join(f.home, 'bin');
    mkdirSync(bin, { recursive: true });
    const client = await claiming(token, bin);
    expect(f.layer.state().paired.find((agent) => agent.name === 'binned')?.project).toBeUndefined();
    // An `ls` the agent would write there runs when the person types `ls`: the open waits for them.
    await openAsks(client, { cwd: bin }, 'no project yet');
    expect(f.host.list().some((t) => t.cwd === realpathSync(bin))).toBe(false);
  });

  it('is what the person sets: pairing with one, or changing it in the panel; a folder that is not one is refused', async () => {
    const { token } = f.layer.pairAgent({ name: 'chosen', project: other });
    const client = await claiming(token, f.project);
    expect(f.layer.state().paired.find((agent) => agent.name === 'chosen')?.project).toBe(realpathSync(other));
    const opened = (await f.call(client, 'terminal_open', { title: 'chosen', shell: 'bash' })) as { id: string; cwd: string };
    expect(opened.cwd).toBe(realpathSync(other));
    await openAsks(client, { cwd: f.project }, "outside the agent's project");
    f.layer.setAgentPolicy({ name: 'chosen', policy: 'ask-unless-allowed', project: f.project });
    expect((await f.call(client, 'terminal_open', { title: 'moved', shell: 'bash', cwd: f.project })) as { cwd: string }).toMatchObject({
      cwd: realpathSync(f.project),
    });
    expect(() => f.layer.setAgentPolicy({ name: 'chosen', policy: 'ask-unless-allowed', project: join(f.home, 'missing') })).toThrow(/no folder/);
    expect(() => f.layer.pairAgent({ name: 'relative', project: 'code' })).toThrow(/absolute/);
  });
});
