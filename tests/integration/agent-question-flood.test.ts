import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxQuestionsPerAgent } from '../../src/main/agent/pairing/question-owners.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';

/**
 * Issue 23: one agent cannot fill the person's question stack. Through the real MCP client, an
 * agent floods opens whose variables need the person; past `maxQuestionsPerAgent` waiting, each
 * further question is refused with `capacity` (no terminal opens), while another agent can still
 * ask; once the person answers one, the first can ask one more.
 */
let f: AgentFixture;

beforeAll(async () => {
  f = await startAgentFixture();
});
afterAll(async () => {
  await f.close();
});

describe('questions per agent are bounded', () => {
  it(`refuses the ${maxQuestionsPerAgent + 1}th waiting question of one agent with capacity, not another agent's`, async () => {
    const flooder = await f.client(f.layer.pairAgent({ name: 'flooder' }).token);
    const other = await f.client(f.layer.pairAgent({ name: 'other' }).token);
    f.layer.setAgentPolicy({ name: 'flooder', policy: 'ask' });
    f.layer.setAgentPolicy({ name: 'other', policy: 'ask' });
    const waiting = (name: string): number => f.layer.state().approvals.filter((request) => request.agent === name).length;
    const code = (result: Record<string, unknown>): string | null => (result.isError ? (result.error as { code: string }).code : null);
    // A terminal with one waiting send is busy; an open whose variables need the person waits before any terminal
    // exists, so opens are the flood that no terminal bound stops. Sent at once, as a hostile client would.
    const flood = Array.from({ length: maxQuestionsPerAgent + 4 }, (_, n) =>
      f.call(flooder, 'terminal_open', { title: `flood-${n}`, shell: 'bash', env: { GIT_PAGER: `touch ${join(f.home, `flood-ran-${n}`)}` } }),
    );
    let answered = 0;
    for (const call of flood) void call.then(() => (answered += 1));
    // The excess is refused at once with capacity; the bound's worth of questions wait for the person.
    await expect.poll(() => waiting('flooder'), { timeout: 30_000 }).toBe(maxQuestionsPerAgent);
    // Every excess call has its answer before the person frees a place (on a loaded machine a late one would take it).
    await expect.poll(() => answered, { timeout: 30_000 }).toBe(4);
    const card = f.layer.state().approvals.find((request) => request.agent === 'flooder')!;
    expect(card).toMatchObject({ kind: 'open', env: [expect.stringMatching(/^GIT_PAGER=/)] });

    // Another agent still reaches the person.
    const otherOpen = f.call(other, 'terminal_open', { title: 'other', shell: 'bash', env: { GIT_PAGER: 'cat' } });
    await expect.poll(() => waiting('other'), { timeout: 30_000 }).toBe(1);

    // The person rejects one: the flooder may ask once more, not more.
    f.layer.answerApproval({ requestId: card.id, decision: 'reject', reason: 'no' });
    await expect.poll(() => waiting('flooder')).toBe(maxQuestionsPerAgent - 1);
    const again = f.call(flooder, 'terminal_open', { title: 'again', shell: 'bash', env: { GIT_PAGER: 'cat' } });
    await expect.poll(() => waiting('flooder'), { timeout: 30_000 }).toBe(maxQuestionsPerAgent);
    expect(code(await f.call(flooder, 'terminal_open', { title: 'more', shell: 'bash', env: { GIT_PAGER: 'cat' } }))).toBe('capacity');

    for (const request of f.layer.state().approvals) f.layer.answerApproval({ requestId: request.id, decision: 'reject', reason: 'test over' });
    const results = await Promise.all([...flood, again]);
    const codes = results.map(code);
    expect(
      codes.filter((c) => c === 'capacity'),
      JSON.stringify(codes),
    ).toHaveLength(4);
    expect(codes.filter((c) => c === 'rejected')).toHaveLength(maxQuestionsPerAgent + 1);
    expect(results.find((result) => code(result) === 'capacity')).toMatchObject({ error: { message: expect.stringContaining('questions waiting') } });
    expect(code(await otherOpen)).toBe('rejected');
    // No terminal was opened by the flood.
    expect(f.host.list().filter((view) => view.agent === 'flooder')).toHaveLength(0);
  }, 120_000);
});
