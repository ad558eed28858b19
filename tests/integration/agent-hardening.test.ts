import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';

let f: AgentFixture;
let token: string;
beforeAll(async () => {
  f = await startAgentFixture();
  token = f.layer.pairAgent({ name: 'hardening' }).token;
  f.layer.setAgentPolicy({ name: 'hardening', policy: 'always' });
});
afterAll(async () => {
  await f.close();
});
afterEach(async () => {
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

describe('output that looks like a marker (class 6)', () => {
  it.each(['bash', 'zsh'])('%s: an unfinished private-marker prefix printed by a program swallows no marker', async (shell) => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'markers', shell })) as { id: string };
    const printed = await f.call(client, 'terminal_send', { id, text: "printf 'x\\033]7771;'", waitMs: 10_000 });
    expect(printed).toMatchObject({ status: 'done', evidence: 'marker', exitCode: 0 });
    expect(await f.call(client, 'terminal_send', { id, text: "printf '\\033]7771;junk;E;99;0;;/'; false", waitMs: 10_000 })).toMatchObject({ status: 'done', evidence: 'marker', exitCode: 1 });
    expect(await f.call(client, 'terminal_send', { id, text: 'echo next', waitMs: 10_000 })).toMatchObject({ status: 'done', exitCode: 0, output: 'next' });
  });
});
