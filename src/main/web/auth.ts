import { createHash, randomBytes } from 'node:crypto';
import { wsAuthPrefix } from '../../shared/wire.js';

/**
 * Credentials of the browser UI (`tandem serve`).
 *
 * - The **primary login token** is created when the server starts and printed inside the
 *   login URL's fragment (`/#login=<token>`), so it never travels in a request line or a
 *   Referer. It stays valid while the instance runs and may be used any number of times
 *   (the person can open the printed link again, in another browser too).
 * - **Minted login tokens** (the `mintLink` operation: "open in another tab") are single-use
 *   and expire after `mintedTtlMs` (10 minutes by default): they are meant to be opened once,
 *   right away, and may end up in places the printed link does not (a chat, a clipboard).
 * - A login token is traded (POST /session) for a **session secret**, one per browser tab,
 *   kept in the tab's sessionStorage and presented in the WebSocket handshake. Session
 *   secrets stay valid while the instance runs (reloads and reconnects reuse them). Only their
 *   SHA-256 is kept; at most `maxSessions` live at once (the oldest is forgotten first).
 *
 * Nothing here is ever written to disk: a restart of `tandem serve` invalidates every link
 * and every tab's session.
 */
export interface AuthOptions {
  mintedTtlMs?: number;
  maxSessions?: number;
  maxMinted?: number;
  now?: () => number;
}

/** 256 random bits, URL-safe. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

const secretPattern = /^[A-Za-z0-9_-]{16,128}$/;

export class UiAuth {
  readonly loginToken = newSecret();
  private readonly loginDigest = digest(this.loginToken);
  private readonly minted = new Map<string, number>();
  private readonly sessions = new Map<string, number>();
  private readonly mintedTtlMs: number;
  private readonly maxSessions: number;
  private readonly maxMinted: number;
  private readonly now: () => number;

  constructor(opts: AuthOptions = {}) {
    this.mintedTtlMs = opts.mintedTtlMs ?? 10 * 60_000;
    this.maxSessions = opts.maxSessions ?? 1024;
    this.maxMinted = opts.maxMinted ?? 256;
    this.now = opts.now ?? Date.now;
  }

  /** A fresh single-use login token. */
  mint(): string {
    this.pruneMinted();
    const token = newSecret();
    this.minted.set(digest(token), this.now() + this.mintedTtlMs);
    while (this.minted.size > this.maxMinted) this.minted.delete(this.minted.keys().next().value!);
    return token;
  }

  /** Trades a login token for a new session secret; null when the token is not (or no longer) valid. */
  exchange(login: unknown): string | null {
    if (typeof login !== 'string' || !secretPattern.test(login)) return null;
    const key = digest(login);
    if (key !== this.loginDigest) {
      const expires = this.minted.get(key);
      if (expires === undefined) return null;
      this.minted.delete(key);
      if (expires < this.now()) return null;
    }
    const secret = newSecret();
    this.sessions.set(digest(secret), this.now());
    while (this.sessions.size > this.maxSessions) this.sessions.delete(this.sessions.keys().next().value!);
    return secret;
  }

  isSession(secret: unknown): boolean {
    return typeof secret === 'string' && secretPattern.test(secret) && this.sessions.has(digest(secret));
  }

  /** True for the login token and live minted tokens: not session secrets, but UI credentials too. */
  isLoginToken(token: unknown): boolean {
    if (typeof token !== 'string' || !secretPattern.test(token)) return false;
    const key = digest(token);
    return key === this.loginDigest || (this.minted.get(key) ?? 0) >= this.now();
  }

  private pruneMinted(): void {
    const now = this.now();
    for (const [key, expires] of this.minted) if (expires < now) this.minted.delete(key);
  }
}

/** Splits a `Sec-WebSocket-Protocol` header into the offered protocol names. */
export function offeredProtocols(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value.length > 0);
}

/** The secret a client presented in the handshake: the `tandem.auth.` subprotocol, else a Bearer header. */
export function presentedSecret(headers: { 'sec-websocket-protocol'?: string | undefined; authorization?: string | undefined }): string | null {
  for (const protocol of offeredProtocols(headers['sec-websocket-protocol'])) {
    if (protocol.startsWith(wsAuthPrefix)) return protocol.slice(wsAuthPrefix.length);
  }
  const auth = headers.authorization;
  if (auth && /^Bearer\s+/i.test(auth)) return auth.replace(/^Bearer\s+/i, '').trim();
  return null;
}
