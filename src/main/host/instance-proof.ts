/**
 * A host proves to a bridge that it is the run instance.json names before the bridge sends an
 * agent's token over TCP. A loopback port proves nothing: after a crash any user can listen on
 * the dead host's port. instance.json (0600, this user's) carries a random per-run
 * `instanceKey`; the bridge sends a fresh nonce to POST /prove and sends its token only when
 * the answer is HMAC-SHA256(instanceKey, nonce). The nonce is fresh each time, so an answer
 * seen once is worth nothing later.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Where the host answers (mounted beside /mcp and /pair). */
export const provePath = '/prove';
const noncePattern = /^[A-Za-z0-9_-]{32,128}$/;
const maxBody = 1024;

export function proofOf(key: string, nonce: string): string {
  return createHmac('sha256', key).update(`tandem-instance-proof\n${nonce}`).digest('base64url');
}

function reply(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)), 'Cache-Control': 'no-store' });
  res.end(body);
}

/** The host's side: POST /prove `{"nonce"}` → `{"proof"}`. Needs no credential: it reveals nothing but the answer. */
export function proveHandler(key: string): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'POST') return reply(res, 405, { error: { code: 'invalid_argument', message: 'Use POST.' } });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBody) return reply(res, 413, { error: { code: 'input_too_large', message: 'The proof request is too large.' } });
      chunks.push(chunk);
    }
    let nonce: unknown;
    try {
      nonce = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { nonce?: unknown } | null)?.nonce;
    } catch {
      nonce = undefined;
    }
    if (typeof nonce !== 'string' || !noncePattern.test(nonce)) {
      return reply(res, 400, { error: { code: 'invalid_argument', message: 'Send {"nonce": "<32 to 128 base64url characters>"}.' } });
    }
    reply(res, 200, { proof: proofOf(key, nonce) });
  };
}

/**
 * The bridge's side: true only when the server at `origin` answers a fresh nonce with the HMAC
 * of `key`. Sends nothing secret; any failure (no answer, a wrong one) is false.
 */
export async function hostProves(origin: string, key: string | undefined, fetchImpl: typeof fetch = fetch): Promise<boolean> {
  if (typeof key !== 'string' || key.length < 16) return false;
  const nonce = randomBytes(32).toString('base64url');
  try {
    const response = await fetchImpl(`${origin}${provePath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ nonce }),
      redirect: 'error',
      signal: AbortSignal.timeout(5000),
    });
    if (response.status !== 200) return false;
    const proof = ((await response.json()) as { proof?: unknown } | null)?.proof;
    if (typeof proof !== 'string') return false;
    const expected = Buffer.from(proofOf(key, nonce));
    const given = Buffer.from(proof);
    return given.length === expected.length && timingSafeEqual(given, expected);
  } catch {
    return false;
  }
}
