import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { maxOutcomes, PairingBroker } from '../../src/main/agent/pairing/pairing.js';
import { AgentService } from '../../src/main/agent/service/service.js';
import { maxEphemeralTokens, TokenStore } from '../../src/main/agent/pairing/tokens.js';
import { TerminalHost } from '../../src/main/host/host.js';
import { ManualClock } from '../support/manual-clock.js';

// The bounds on agent-layer state that lives as long as the host (docs/architecture.md, "What
// lives as long as the host"). Real stores and a real host; no terminal is started here.
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-bounds-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const claim = (name: string) => ({ name, pid: 1, exe: '/usr/bin/node', cwd: '/tmp' });

describe('session tokens', () => {
  it(`keep at most ${maxEphemeralTokens}, revoking the least recently used`, () => {
    const tokens = new TokenStore(stateDir());
    const revoked: string[] = [];
    tokens.onRevoked(({ name }) => revoked.push(name));
    const used = tokens.issueEphemeral('kept-busy');
    const idle = tokens.issueEphemeral('left-idle');
    for (let i = 0; i < maxEphemeralTokens - 10; i++) tokens.issueEphemeral(`agent-${i}`);
    // Used recently: moves to the back of the line.
    expect(tokens.identify(used)?.name).toBe('kept-busy');
    for (let i = 0; i < 20; i++) tokens.issueEphemeral(`late-${i}`);
    expect(tokens.identify(used)?.name).toBe('kept-busy');
    expect(tokens.identify(idle)).toBeNull();
    expect(revoked).toContain('left-idle');
    expect(revoked).not.toContain('kept-busy');
    expect(revoked).toHaveLength(12);
  });
});

describe('pairing outcomes', () => {
  it(`keep at most ${maxOutcomes} under --trust-local-agents, dropping the oldest`, () => {
    const broker = new PairingBroker(new TokenStore(stateDir()), { trustLocalAgents: true });
    const ids = Array.from({ length: maxOutcomes * 3 }, (_, i) => broker.request(claim(`agent-${i}`)));
    expect(() => broker.poll(ids[0]!)).toThrow(/Unknown or expired pairing request/);
    expect(broker.poll(ids.at(-1)!)).toMatchObject({ state: 'allowed', token: expect.any(String) });
    expect(broker.poll(ids.at(-maxOutcomes)!)).toMatchObject({ state: 'allowed' });
  });

  it('never drop a request the person has not answered yet', () => {
    const broker = new PairingBroker(new TokenStore(stateDir()));
    const waiting = broker.request(claim('waiting'));
    for (let i = 0; i < maxOutcomes * 2; i++) broker.answer(broker.request(claim(`denied-${i}`)), 'deny');
    expect(broker.poll(waiting)).toEqual({ state: 'pending' });
  });
});

describe('agents remembered as gone', () => {
  it('are forgotten by the sweep once they own no terminal', async () => {
    const home = stateDir();
    const host = new TerminalHost({ home, env: { ...process.env, HOME: home } });
    const tokens = new TokenStore(stateDir());
    const service = new AgentService(host, tokens, { sweepIntervalMs: 3_600_000 });
    cleanups.push(async () => {
      service.dispose();
      await host.shutdown();
    });
    for (let i = 0; i < 100; i++) {
      const identity = tokens.identify(tokens.issueEphemeral(`bridge-${i}`))!;
      service.disconnect(service.connect(identity).id);
    }
    expect(service.goneAgents).toBe(100);
    await service.sweepUnattended();
    expect(service.goneAgents).toBe(0);
  });
});

describe('the unattended sweep', () => {
  it('runs on the injected clock once per interval and leaves no timer once disposed', async () => {
    const home = stateDir();
    const host = new TerminalHost({ home, env: { ...process.env, HOME: home } });
    const tokens = new TokenStore(stateDir());
    const clock = new ManualClock();
    const service = new AgentService(host, tokens, { clock, sweepIntervalMs: 1000 });
    cleanups.push(() => host.shutdown());
    const identity = tokens.identify(tokens.issueEphemeral('gone-soon'))!;
    service.disconnect(service.connect(identity).id);
    expect(service.goneAgents).toBe(1);
    await clock.advance(999);
    expect(service.goneAgents).toBe(1);
    await clock.advance(1);
    expect(service.goneAgents).toBe(0);
    expect(clock.pending).toBe(1);
    service.dispose();
    await clock.advance(0);
    expect(clock.pending).toBe(0);
  });
});
