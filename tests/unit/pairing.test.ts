import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { maxPendingPairings, PairingBroker } from '../../src/main/agent/pairing.js';
import { distinctName, TokenStore } from '../../src/main/agent/tokens.js';
import { ManualClock } from '../support/manual-clock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function broker(): { pairing: PairingBroker; tokens: TokenStore } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-pairing-'));
  dirs.push(dir);
  const tokens = new TokenStore(dir);
  return { pairing: new PairingBroker(tokens), tokens };
}

const claim = (name: string, pid = 1, exe = '/usr/bin/node', cwd = '/work') => ({ name, pid, exe, cwd });

describe('distinctName', () => {
  it('keeps a free name and numbers a taken one', () => {
    const taken = new Set(['codex', 'codex (2)']);
    expect(distinctName('cursor', (name) => taken.has(name))).toBe('cursor');
    expect(distinctName('codex', (name) => taken.has(name))).toBe('codex (3)');
  });
});

describe('PairingBroker', () => {
  it('merges the same process posting again, and lets a newer process of the claim replace it', () => {
    const { pairing } = broker();
    const first = pairing.request(claim('codex', 10));
    expect(pairing.request(claim('codex', 10))).toBe(first);
    const second = pairing.request(claim('codex', 11));
    expect(second).not.toBe(first);
    expect(pairing.requests.list().map((request) => request.id)).toEqual([second]);
    expect(pairing.poll(first)).toEqual({ state: 'expired' });
  });

  it('pushes out the oldest request of the largest group, never a lone claim from another program', () => {
    const { pairing } = broker();
    const real = pairing.request(claim('codex', 1, '/usr/bin/node', '/work'));
    for (let n = 0; n < 3 * maxPendingPairings; n++) pairing.request(claim(`flood-${n}`, 99, '/usr/bin/python3', '/tmp'));
    expect(pairing.requests.list()).toHaveLength(maxPendingPairings);
    expect(pairing.requests.get(real)).not.toBeNull();
  });

  it('denies a denied claim again at once, until lifted; Deny all denies each waiting claim', async () => {
    const { pairing } = broker();
    const id = pairing.request(claim('gemini', 1));
    pairing.answer(id, 'deny');
    await Promise.resolve();
    expect(pairing.poll(pairing.request(claim('gemini', 2)))).toEqual({ state: 'denied' });
    expect(pairing.requests.list()).toEqual([]);
    pairing.liftDenial(pairing.deniedClaims()[0]!.id);
    expect(pairing.poll(pairing.request(claim('gemini', 3)))).toEqual({ state: 'pending' });
    pairing.request(claim('other', 4));
    pairing.denyAll();
    await Promise.resolve();
    expect(pairing.deniedClaims().map((denied) => denied.name).sort()).toEqual(['gemini', 'other']);
  });

  it('gives an Allow-once claim of a paired name a name of its own, and refuses to always-allow it', async () => {
    const { pairing, tokens } = broker();
    tokens.pair('claude-code');
    const id = pairing.request(claim('claude-code'));
    expect(() => pairing.answer(id, 'always')).toThrow(/already paired/);
    pairing.answer(id, 'once');
    await Promise.resolve();
    expect(pairing.poll(id)).toMatchObject({ state: 'allowed', name: 'claude-code (2)', persistent: false });
    expect(tokens.listEphemeral().map((entry) => entry.name)).toEqual(['claude-code (2)']);
  });
});

describe('PairingBroker timestamps', () => {
  it('stamps requests and denials with wall-clock time, not the monotonic clock (which printed as 1970)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-pairing-'));
    dirs.push(dir);
    const wall = Date.UTC(2025, 4, 17, 9, 30, 0);
    // The monotonic clock reads 38 s since start, as in the report: it must not show as a date.
    const clock = new ManualClock();
    await clock.advance(38_000);
    const pairing = new PairingBroker(new TokenStore(dir), { clock, wallNow: () => wall });
    const id = pairing.request(claim('codex'));
    expect(pairing.requests.list()[0]?.at).toBe('2025-05-17T09:30:00.000Z');
    pairing.answer(id, 'deny');
    await Promise.resolve();
    expect(pairing.deniedClaims()[0]?.at).toBe('2025-05-17T09:30:00.000Z');
  });

  it('defaults to the real date', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-pairing-'));
    dirs.push(dir);
    const before = Date.now();
    const pairing = new PairingBroker(new TokenStore(dir));
    pairing.request(claim('codex'));
    const at = Date.parse(pairing.requests.list()[0]!.at);
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(at).getUTCFullYear()).toBeGreaterThan(2000);
  });
});
