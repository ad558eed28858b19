import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { denyAllPauseMs, maxPendingPairings, maxPendingPerProcess, maxPendingPerUid, PairingBroker } from '../../src/main/agent/pairing/pairing.js';
import type { PeerFacts } from '../../src/main/agent/pairing/peer.js';
import { distinctName, TokenStore } from '../../src/main/agent/pairing/tokens.js';
import { ManualClock } from '../support/manual-clock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function broker(ownUid?: number): { pairing: PairingBroker; tokens: TokenStore } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-pairing-'));
  dirs.push(dir);
  const tokens = new TokenStore(dir);
  return { pairing: new PairingBroker(tokens, ownUid === undefined ? {} : { ownUid }), tokens };
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
  const from = (connection: object, peer: Partial<PeerFacts> = {}) => ({
    connection,
    peer: { uid: 1000, pid: 10, exe: '/usr/bin/node', by: 'kernel' as const, via: 'unix-socket' as const, ...peer },
  });

  it('merges the same request on its connection, lets only that connection replace it, and never merges across connections', () => {
    const { pairing } = broker(1000);
    const mine = {};
    const first = pairing.request(claim('codex', 10), from(mine));
    expect(pairing.request(claim('codex', 10), from(mine))).toBe(first);
    // Another connection (another process of the same claim, or a squatter) gets a card of its own.
    const other = pairing.request(claim('codex', 10), from({}, { pid: 11 }));
    expect(other).not.toBe(first);
    expect(pairing.requests.get(first)).not.toBeNull();
    // The same connection asking again with another claim replaces its own request.
    const second = pairing.request(claim('codex', 12), from(mine));
    expect(pairing.poll(first)).toEqual({ state: 'expired' });
    expect(
      pairing.requests
        .list()
        .map((request) => request.id)
        .sort(),
    ).toEqual([other, second].sort());
    // Its connection closing withdraws it.
    pairing.connectionClosed(mine);
    expect(pairing.requests.list().map((request) => request.id)).toEqual([other]);
  });

  it('refuses another uid, and a TCP request whose user the kernel did not tell (Linux)', () => {
    const { pairing } = broker(1000);
    expect(() => pairing.request(claim('codex'), from({}, { uid: 65534 }))).toThrow(expect.objectContaining({ code: 'forbidden' }));
    if (process.platform === 'linux')
      expect(() => pairing.request(claim('codex'), from({}, { uid: null, via: 'tcp', by: 'none' }))).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(pairing.requests.list()).toEqual([]);
  });

  it('bounds waiting requests per process and per uid, refusing new ones rather than pushing any out', () => {
    const { pairing } = broker(1000);
    const real = pairing.request(claim('codex', 1), from({}, { pid: 1 }));
    for (let n = 0; n < maxPendingPerProcess - 1; n++) pairing.request(claim(`same-${n}`, 2), from({}, { pid: 2 }));
    pairing.request(claim('same-last', 2), from({}, { pid: 2 }));
    expect(() => pairing.request(claim('same-more', 2), from({}, { pid: 2 }))).toThrow(expect.objectContaining({ code: 'capacity' }));
    let refused = 0;
    for (let n = 0; n < 3 * maxPendingPairings; n++) {
      try {
        pairing.request(claim(`flood-${n}`, 100 + n, `/usr/bin/x${n}`, `/tmp/${n}`), from({}, { pid: 100 + n, exe: `/usr/bin/x${n}` }));
      } catch (error) {
        expect(error).toMatchObject({ code: 'capacity' });
        refused += 1;
      }
    }
    expect(pairing.requests.list()).toHaveLength(maxPendingPerUid);
    expect(refused).toBe(3 * maxPendingPairings - (maxPendingPerUid - 1 - maxPendingPerProcess));
    expect(pairing.requests.get(real)).not.toBeNull();
  });

  it('Deny all pauses new requests for a minute, visibly, then asks again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-pairing-'));
    dirs.push(dir);
    const clock = new ManualClock();
    const wall = Date.UTC(2026, 0, 1, 12, 0, 0);
    const pairing = new PairingBroker(new TokenStore(dir), { clock, wallNow: () => wall, ownUid: 1000 });
    let told = 0;
    pairing.onDeniedChange(() => (told += 1));
    pairing.request(claim('flood'), from({}));
    pairing.denyAll();
    expect(pairing.pausedUntilIso()).toBe(new Date(wall + denyAllPauseMs).toISOString());
    expect(() => pairing.request(claim('codex', 2, '/usr/bin/codex'), from({}, { pid: 2, exe: '/usr/bin/codex' }))).toThrow(
      expect.objectContaining({ code: 'pairing_denied' }),
    );
    expect(pairing.requests.list()).toEqual([]);
    const before = told;
    await clock.advance(denyAllPauseMs);
    expect(told).toBeGreaterThan(before);
    expect(pairing.pausedUntilIso()).toBeNull();
    expect(pairing.poll(pairing.request(claim('codex', 2, '/usr/bin/codex'), from({}, { pid: 2, exe: '/usr/bin/codex' })))).toEqual({ state: 'pending' });
  });

  it('keys a denial by the executable the kernel read, not the one claimed', async () => {
    const { pairing } = broker(1000);
    const id = pairing.request(claim('gemini', 1, '/usr/bin/gemini'), from({}, { exe: '/usr/bin/python3' }));
    pairing.answer(id, 'deny');
    await Promise.resolve();
    expect(pairing.deniedClaims()[0]).toMatchObject({ exe: '/usr/bin/python3' });
    // Claiming another program does not get past the denial.
    expect(pairing.poll(pairing.request(claim('gemini', 2, '/usr/bin/other'), from({}, { pid: 2, exe: '/usr/bin/python3' })))).toEqual({ state: 'denied' });
  });

  it('hands the token once to the connection waiting for it', async () => {
    const { pairing } = broker(1000);
    const id = pairing.request(claim('codex'), from({}));
    const waited = pairing.waitOutcome(id);
    pairing.answer(id, 'once');
    expect(await waited).toMatchObject({ state: 'allowed', token: expect.any(String) });
    expect(pairing.poll(id)).toEqual({ state: 'denied' });
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
    expect(
      pairing
        .deniedClaims()
        .map((denied) => denied.name)
        .sort(),
    ).toEqual(['gemini', 'other']);
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

describe('look-alike names (black-box round 8)', () => {
  it('reads spaces in a row as one and case as nothing: such a claim is in use and shows under a name of its own', async () => {
    const { pairing, tokens } = broker();
    tokens.pair('my agent');
    for (const name of ['my  agent', 'My Agent', 'MY   AGENT', 'my-agent', 'my_agent.', 'rny agent', 'my agent_'])
      expect(pairing.nameInUse(name), name).toBe(true);
    tokens.pair('claude');
    for (const name of ['cIaude', 'c1aude', 'claude.', 'claude_', 'CLAUDE']) expect(pairing.nameInUse(name), name).toBe(true);
    expect(pairing.nameInUse('claudia')).toBe(false);
    expect(pairing.nameInUse('my agents')).toBe(false);
    const id = pairing.request(claim('My  Agent'));
    expect(() => pairing.answer(id, 'always')).toThrow(/already paired/);
    pairing.answer(id, 'once');
    await Promise.resolve();
    expect(pairing.poll(id)).toMatchObject({ state: 'allowed', name: 'My Agent (2)', persistent: false });
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
