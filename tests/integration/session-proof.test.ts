import { createHash, createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { runProofLabel, sessionIdLabel, sessionKeyLabel } from '../../src/shared/session-proof.js';
import { login, rawRequest, startTestServer, tokenOf, type TestServer } from './web-helpers.js';

// GET /session as any local process can call it: the run's id is no longer handed to whoever
// asks (another user read it and replayed it after a crash), and the run proves it issued a
// page's session without being sent the secret (shared/session-proof.ts).
let served: TestServer | null = null;
afterEach(async () => {
  await served?.stop();
  served = null;
});

const challenge = 'c'.repeat(43);
const idOf = (secret: string) => createHash('sha256').update(`${sessionIdLabel}${secret}`).digest('base64url');
const proofFor = (secret: string, nonce: string) =>
  createHmac('sha256', createHash('sha256').update(`${sessionKeyLabel}${secret}`).digest())
    .update(`${runProofLabel}${nonce}`)
    .digest('base64url');

describe('GET /session and the run proof', () => {
  it('a 401 names no run; a page’s session id and challenge get the HMAC only from the run that issued it', async () => {
    served = await startTestServer();
    const port = served.server.port;
    const host = `127.0.0.1:${port}`;
    for (const headers of [
      {},
      { 'X-Tandem-Session': 'not-a-session-secret-at-all' },
      { 'X-Tandem-Session-Id': idOf('x'.repeat(43)), 'X-Tandem-Challenge': challenge },
    ] as Array<Record<string, string>>) {
      const res = await rawRequest(port, { path: '/session', headers: { Host: host, ...headers } });
      expect(res.status).toBe(401);
      expect(res.headers['x-tandem-instance']).toBeUndefined();
      expect(res.body).not.toContain(served.server.instanceId);
    }

    const { secret } = await login(port, tokenOf(served.server.loginUrl()), { Host: host });
    expect(secret).toBeTruthy();
    const proved = await rawRequest(port, { path: '/session', headers: { Host: host, 'X-Tandem-Session-Id': idOf(secret!), 'X-Tandem-Challenge': challenge } });
    expect(proved.status).toBe(200);
    expect(JSON.parse(proved.body)).toEqual({ proof: proofFor(secret!, challenge) });
    // A bad challenge gets no proof (it would let a caller pick the HMAC input freely).
    const bad = await rawRequest(port, { path: '/session', headers: { Host: host, 'X-Tandem-Session-Id': idOf(secret!), 'X-Tandem-Challenge': 'short' } });
    expect(bad.status).toBe(401);
    // Presenting the secret itself still works, and names the run.
    const valid = await rawRequest(port, { path: '/session', headers: { Host: host, 'X-Tandem-Session': secret! } });
    expect(valid.status).toBe(204);
    expect(valid.headers['x-tandem-instance']).toBe(served.server.instanceId);
  });
});
