import { createHash, randomBytes } from 'node:crypto';
import { wsAuthPrefix } from '../../shared/wire.js';

/**
 * Credentials of the browser UI (`tandem serve`).
 *
 * - **Login links** carry a login token in the fragment (`/#login=<token>`), so it never
 *   travels in a request line or a Referer. Every one, the link `tandem serve` prints at start
 *   included, works **once** and for at most `linkTtlMs` (10 minutes): what serve printed may
 *   sit in a log or a `nohup.out` an agent can read, and a spent or stale link gives nothing.
 *   Further links: `mintLink` from an open tab ("open in another tab"), or serve prints one to
 *   its terminal on SIGUSR1 (cli.ts).
 * - A login token is traded (POST /session) for a **session secret**, one per browser tab,
 *   kept in the tab's sessionStorage and presented in the WebSocket handshake. A session
 *   ends when it has been **idle** for `idleTtlMs` (12 hours: no open connection and no
 *   check), or on **revoke** (`revokeAll`: serve's SIGUSR2 logs every browser out). Only
 *   SHA-256 digests are kept; at most `maxSessions` live at once (the oldest goes first).
 *
 * Nothing here is ever written to disk: a restart of `tandem serve` invalidates every link
 * and every tab's session.
 */
export interface AuthOptions {
  /** How long a login link works (once). */
  linkTtlMs?: number;
  /** How long a session lives without a connection or a check. */
  idleTtlMs?: number;
  maxSessions?: number;
  maxMinted?: number;
  /** The clock (milliseconds); injected by tests. */
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

interface SessionState {
  /** When it was last used (a check, an upgrade, the end of a connection). */
  usedAt: number;
  /** Connections open with it: a session in use is not idle. */
  open: number;
}

export class UiAuth {
  private readonly minted = new Map<string, number>();
  private readonly sessions = new Map<string, SessionState>();
  private readonly revokeListeners = new Set<() => void>();
  private readonly linkTtlMs: number;
  private readonly idleTtlMs: number;
  private readonly maxSessions: number;
  private readonly maxMinted: number;
  private readonly now: () => number;

  constructor(opts: AuthOptions = {}) {
    this.linkTtlMs = opts.linkTtlMs ?? 10 * 60_000;
    this.idleTtlMs = opts.idleTtlMs ?? 12 * 3_600_000;
    this.maxSessions = opts.maxSessions ?? 1024;
    this.maxMinted = opts.maxMinted ?? 256;
    this.now = opts.now ?? Date.now;
  }

  /** A fresh login token: single use, `linkTtlMs`. */
  mint(): string {
    this.pruneMinted();
    const token = newSecret();
    this.minted.set(digest(token), this.now() + this.linkTtlMs);
    while (this.minted.size > this.maxMinted) this.minted.delete(this.minted.keys().next().value!);
    return token;
  }

  /** Trades a login token for a new session secret; null when the token is not (or no longer) valid. The token is spent either way. */
  exchange(login: unknown): string | null {
    if (typeof login !== 'string' || !secretPattern.test(login)) return null;
    const key = digest(login);
    const expires = this.minted.get(key);
    if (expires === undefined) return null;
    this.minted.delete(key);
    if (expires < this.now()) return null;
    const secret = newSecret();
    this.sessions.set(digest(secret), { usedAt: this.now(), open: 0 });
    while (this.sessions.size > this.maxSessions) this.sessions.delete(this.sessions.keys().next().value!);
    return secret;
  }

  /** True for a live session secret; a check counts as use (the idle time starts again). */
  isSession(secret: unknown): boolean {
    const state = this.live(secret);
    if (state) state.usedAt = this.now();
    return state !== null;
  }

  /**
   * Marks a connection open with `secret` (it keeps the session from going idle); the returned
   * function marks it closed. Null when the secret is not a live session.
   */
  hold(secret: unknown): (() => void) | null {
    const state = this.live(secret);
    if (!state) return null;
    state.open++;
    state.usedAt = this.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.open--;
      state.usedAt = this.now();
    };
  }

  /** True for live login tokens: not session secrets, but UI credentials too. */
  isLoginToken(token: unknown): boolean {
    if (typeof token !== 'string' || !secretPattern.test(token)) return false;
    return (this.minted.get(digest(token)) ?? -1) >= this.now();
  }

  /** Ends every session and every unused link; listeners (the server) close the connections. */
  revokeAll(): void {
    this.sessions.clear();
    this.minted.clear();
    for (const listener of this.revokeListeners) listener();
  }

  onRevoke(listener: () => void): () => void {
    this.revokeListeners.add(listener);
    return () => this.revokeListeners.delete(listener);
  }

  /** Live sessions (an idle one is forgotten when found). */
  get sessionCount(): number {
    for (const [key, state] of this.sessions) if (this.idle(state)) this.sessions.delete(key);
    return this.sessions.size;
  }

  private live(secret: unknown): SessionState | null {
    if (typeof secret !== 'string' || !secretPattern.test(secret)) return null;
    const key = digest(secret);
    const state = this.sessions.get(key);
    if (!state) return null;
    if (this.idle(state)) {
      this.sessions.delete(key);
      return null;
    }
    return state;
  }

  private idle(state: SessionState): boolean {
    return state.open === 0 && this.now() - state.usedAt > this.idleTtlMs;
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
