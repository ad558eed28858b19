/**
 * How a page tells the run of `tandem serve` that logged it in from anything else on its port
 * (a restarted Tandem, or another user's program after a crash) without revealing its session
 * secret first. Both ends derive from the secret S:
 *
 * - the session id `L = base64url(SHA-256(idLabel + S))`, which names the session and proves nothing;
 * - the proof key `K = SHA-256(keyLabel + S)`, which only the run that issued S kept;
 *
 * The page sends L and a fresh nonce (GET /session, `X-Tandem-Session-Id`, `X-Tandem-Challenge`);
 * the run answers `proof = base64url(HMAC-SHA256(K, proofLabel + nonce))`. Only a matching proof
 * lets the page present S (the WebSocket handshake) or say that its terminals kept running.
 * Imported by the server (node:crypto) and the page (WebCrypto); no imports.
 */
export const sessionIdLabel = 'tandem-session-id\n';
export const sessionKeyLabel = 'tandem-session-proof-key\n';
export const runProofLabel = 'tandem-run-proof\n';
export const sessionIdHeader = 'X-Tandem-Session-Id';
export const challengeHeader = 'X-Tandem-Challenge';
/** A challenge: 32 to 128 base64url characters. */
export const challengePattern = /^[A-Za-z0-9_-]{32,128}$/;
