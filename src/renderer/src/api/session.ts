/**
 * Logging a browser tab in to `tandem serve` (runs in the page; no Node imports).
 *
 * The printed link carries a login token in its fragment (`/#login=<token>`), which browsers
 * never send in a request line or a Referer. The page removes it from the address bar at
 * once (history.replaceState, so it is not left in the history or a bookmark), trades it
 * with POST /session for a session secret of its own, and keeps that in sessionStorage:
 * per tab, surviving reloads, never sent as a cookie (cookies are not separated by port, so
 * every other local server would receive them). The WebSocket handshake presents the secret.
 */
import { challengeHeader, runProofLabel, sessionIdHeader, sessionIdLabel, sessionKeyLabel } from '../../../shared/session-proof';
import { TandemCallError } from './errors';

export const sessionStorageKey = 'tandem.session';

/** What the login needs from the page; injectable for tests. */
export interface SessionEnvironment {
  location: { readonly hash: string; readonly pathname: string; readonly search: string; readonly origin: string };
  history: { replaceState(data: unknown, unused: string, url?: string | null): void };
  /** Null when the browser refuses storage (the secret then lives in memory for this page only). */
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | null;
  fetch: typeof fetch;
}

export function browserEnvironment(): SessionEnvironment {
  let storage: SessionEnvironment['storage'] = null;
  try {
    storage = window.sessionStorage;
  } catch {
    storage = null;
  }
  return { location: window.location, history: window.history, storage, fetch: window.fetch.bind(window) };
}

let memorySecret: string | null = null;

function readStored(env: SessionEnvironment): string | null {
  try {
    return env.storage?.getItem(sessionStorageKey) ?? memorySecret;
  } catch {
    return memorySecret;
  }
}

function store(env: SessionEnvironment, secret: string): void {
  memorySecret = secret;
  try {
    env.storage?.setItem(sessionStorageKey, secret);
  } catch {
    // Storage refused: this page keeps the secret in memory; a reload needs a new link.
  }
}

/** Forgets this tab's session (after the server said it is no longer valid). */
export function forgetSession(env: SessionEnvironment = browserEnvironment()): void {
  memorySecret = null;
  try {
    env.storage?.removeItem(sessionStorageKey);
  } catch {
    // Nothing stored.
  }
}

/**
 * Takes the login token out of the fragment and out of the address bar (other fragment
 * parameters stay). Null when the fragment has none.
 */
export function takeLoginToken(env: SessionEnvironment): string | null {
  const hash = env.location.hash.startsWith('#') ? env.location.hash.slice(1) : env.location.hash;
  if (!hash) return null;
  const params = new URLSearchParams(hash);
  const login = params.get('login');
  if (login === null) return null;
  params.delete('login');
  const rest = params.toString();
  env.history.replaceState(null, '', `${env.location.pathname}${env.location.search}${rest ? `#${rest}` : ''}`);
  return login || null;
}

/** Trades a login token for a session secret (POST /session at `server`, default the page's origin). */
export async function exchangeLogin(env: SessionEnvironment, login: string, server = env.location.origin): Promise<string> {
  let response: Response;
  try {
    response = await env.fetch(`${server}/session`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ login }),
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    });
  } catch (error) {
    throw new TandemCallError('not_running', `Tandem did not answer the login: ${(error as Error).message}`);
  }
  const body = (await response.json().catch(() => null)) as { secret?: unknown; error?: { message?: unknown } } | null;
  if (response.ok && typeof body?.secret === 'string') return body.secret;
  const message = typeof body?.error?.message === 'string' ? body.error.message : `The login failed (HTTP ${response.status}).`;
  throw new TandemCallError('forbidden', message);
}

/**
 * This tab's session secret: a login token in the fragment is traded for a new one;
 * otherwise the one this tab stored before (a reload). Throws `forbidden` when there is
 * neither, with a sentence telling the person what to open.
 */
export async function establishSession(env: SessionEnvironment = browserEnvironment(), server = env.location.origin): Promise<string> {
  const login = takeLoginToken(env);
  if (login) {
    try {
      const secret = await exchangeLogin(env, login, server);
      store(env, secret);
      return secret;
    } catch (error) {
      // A spent link opened again in a tab that is logged in already still works.
      const stored = readStored(env);
      if (stored && error instanceof TandemCallError && error.code === 'forbidden') return stored;
      throw error;
    }
  }
  const stored = readStored(env);
  if (stored) return stored;
  throw new TandemCallError('forbidden', 'This page is not logged in to Tandem: open the link that `tandem serve` printed in its terminal.');
}

/** What GET /session says when the page presents its secret: whether the secret is still known. */
export interface SessionCheck {
  session: 'valid' | 'invalid' | 'unreachable';
}

/**
 * Whether the server still knows this secret. Sends the secret: only to the server this page
 * logged in with, or one that proved it is that run ({@link proveRun}).
 */
export async function checkSession(env: SessionEnvironment, secret: string, server = env.location.origin): Promise<SessionCheck> {
  try {
    const response = await env.fetch(`${server}/session`, {
      method: 'GET',
      headers: { 'X-Tandem-Session': secret },
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    });
    if (response.status === 204) return { session: 'valid' };
    if (response.status === 401) return { session: 'invalid' };
    return { session: 'unreachable' };
  } catch {
    return { session: 'unreachable' };
  }
}

/**
 * Who answers at `server` now: `same` (it proved it is the run that issued this secret, so its
 * terminals kept running), `other` (something answers and cannot prove it: a restarted Tandem,
 * or another program on its port) or `unreachable`. The secret itself is never sent: the page
 * sends its session id and a fresh challenge, and checks the HMAC answer (shared/session-proof.ts).
 */
export async function proveRun(env: SessionEnvironment, secret: string, server = env.location.origin): Promise<'same' | 'other' | 'unreachable'> {
  const subtle = globalThis.crypto?.subtle;
  // WebCrypto exists in every secure context, and Tandem's pages are all on loopback.
  if (!subtle) return 'other';
  const encoder = new TextEncoder();
  const challenge = base64url(globalThis.crypto.getRandomValues(new Uint8Array(32)));
  const id = base64url(new Uint8Array(await subtle.digest('SHA-256', encoder.encode(`${sessionIdLabel}${secret}`))));
  let response: Response;
  try {
    response = await env.fetch(`${server}/session`, {
      method: 'GET',
      headers: { [sessionIdHeader]: id, [challengeHeader]: challenge },
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    });
  } catch {
    return 'unreachable';
  }
  if (response.status === 401) return 'other';
  if (response.status !== 200) return 'unreachable';
  const proof = ((await response.json().catch(() => null)) as { proof?: unknown } | null)?.proof;
  if (typeof proof !== 'string') return 'other';
  const keyBytes = await subtle.digest('SHA-256', encoder.encode(`${sessionKeyLabel}${secret}`));
  const key = await subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const expected = base64url(new Uint8Array(await subtle.sign('HMAC', key, encoder.encode(`${runProofLabel}${challenge}`))));
  return proof === expected ? 'same' : 'other';
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
