/**
 * A PATH with an empty or relative entry (a person's `export PATH=$UNSET:$PATH` leaves one)
 * finds programs in the current folder, so an allow-listed name may run a file of the
 * workspace. Attacked as a hostile repository would: its own `ls` must not run unasked.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';

let f: AgentFixture;
let token: string;
beforeAll(async () => {
  // The person's environment has the empty entry from the start: no change for the judge to notice.
  f = await startAgentFixture({ defaultSandbox: 'off', env: { PATH: `:${process.env.PATH ?? '/usr/bin:/bin'}` } });
  token = f.layer.pairAgent({ name: 'pathy' }).token;
});
afterAll(async () => {
  await f.close();
});
afterEach(async () => {
  for (const request of f.layer.state().approvals) f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'test over' });
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

describe('PATH entries that lead into the current folder', () => {
  it.each(['bash', 'zsh'])('%s: an allow-listed ls asks, and the workspace ls never runs', async (shell) => {
    const dir = mkdtempSync(join(f.project, 'tandem-path-'));
    const canary = join(dir, 'canary');
    writeFileSync(join(dir, 'ls'), `#!/bin/sh\ntouch ${canary}\n`, { mode: 0o755 });
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'path', shell, cwd: dir })) as { id: string };
    const asked = await f.call(client, 'terminal_send', { id, text: 'ls', waitMs: 300 });
    expect(asked).toMatchObject({ status: 'awaiting_approval' });
    const request = f.layer.state().approvals.find((approval) => approval.terminalId === id);
    expect(request?.why).toContain('PATH has an empty or relative entry');
    f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
    // Rejected, the line was never typed: the shell is at its prompt and the canary is absent.
    expect(f.host.get(id).ops.status).toBe('idle');
    expect(existsSync(canary)).toBe(false);
    // Every name may be found there, the shell's own builtins' names too.
    expect(await f.call(client, 'terminal_send', { id, text: 'cat ls', waitMs: 300 })).toMatchObject({ status: 'awaiting_approval' });
    expect(existsSync(canary)).toBe(false);
  });
});
