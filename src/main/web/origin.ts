/**
 * Host and Origin rules for every loopback HTTP endpoint of Tandem (the browser UI, `/ws`,
 * `/session`, and later `/mcp` and `/pair`). Pure functions: no Node or DOM dependencies.
 *
 * - `Host` must name a loopback interface: `localhost`, an IPv4 address in 127.0.0.0/8 or
 *   `[::1]`, with any port (an `ssh -L` tunnel changes the port). Anything else is refused,
 *   which is what defeats DNS rebinding: a rebound name still arrives with its own Host.
 * - `Origin`, when present, must be the same origin as the request's Host
 *   (`http://<Host header>`) or one of the explicitly allowed origins (`--allow-origin`).
 *   Requests without Origin (curl, agents, other non-browser clients) pass this check.
 */

export interface CheckResult {
  ok: boolean;
  /** HTTP status for a refusal. */
  status: 200 | 400 | 403;
  message: string;
}

const allowed: CheckResult = { ok: true, status: 200, message: '' };

const hostPattern = /^(?<name>\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(?<port>[0-9]{1,5}))?$/;

/** Splits a Host header into a lower-cased name and an optional port; null when malformed. */
export function parseHostHeader(host: string | undefined | null): { name: string; port: number | null } | null {
  if (typeof host !== 'string' || host.length === 0 || host.length > 261) return null;
  const match = hostPattern.exec(host);
  if (!match?.groups) return null;
  const name = match.groups.name!.toLowerCase();
  const portText = match.groups.port;
  if (portText === undefined) return { name, port: null };
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return null;
  return { name, port };
}

function isLoopbackIPv4(name: string): boolean {
  const parts = name.split('.');
  if (parts.length !== 4) return false;
  for (const part of parts) {
    // Canonical dotted decimal only: no leading zeros, no hex or octal forms.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return false;
  }
  return parts[0] === '127';
}

function isLoopbackIPv6(bracketed: string): boolean {
  if (!bracketed.startsWith('[') || !bracketed.endsWith(']')) return false;
  const groups = bracketed.slice(1, -1);
  // ::1 in any spelling: every group zero except a final 1 (e.g. 0:0:0:0:0:0:0:1, ::0:1).
  if (!/^[0:]*:0*1$/.test(groups) || groups.includes(':::')) return false;
  const parts = groups.split(':');
  return groups.includes('::') ? parts.length <= 8 : parts.length === 8;
}

/** True for `localhost`, 127.x.x.x and `[::1]` (a name as parsed by `parseHostHeader`). */
export function isLoopbackName(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === 'localhost' || isLoopbackIPv4(lower) || isLoopbackIPv6(lower);
}

/** The Host rule: a loopback name or address with any port. */
export function checkHost(host: string | undefined | null): CheckResult {
  const parsed = parseHostHeader(host);
  if (!parsed) return { ok: false, status: 400, message: 'The request has no valid Host header.' };
  if (!isLoopbackName(parsed.name)) {
    return { ok: false, status: 403, message: `Tandem only answers requests addressed to this machine (localhost, 127.0.0.1 or [::1]), not "${parsed.name}".` };
  }
  return allowed;
}

/**
 * Normalizes an origin given with `--allow-origin` (`scheme://host[:port]`, no path); null
 * when it is not an origin.
 */
export function normalizeOrigin(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || url.search || url.hash) return null;
  if (url.pathname !== '/' && url.pathname !== '') return null;
  return url.origin;
}

/**
 * The Origin rule, given a request whose Host already passed `checkHost`. `allowOrigins`
 * holds normalized origins (see `normalizeOrigin`).
 */
export function checkOrigin(origin: string | undefined | null, host: string, allowOrigins: readonly string[] = []): CheckResult {
  if (origin === undefined || origin === null) return allowed;
  const actual = origin.toLowerCase();
  if (actual === `http://${host.toLowerCase()}`) return allowed;
  if (allowOrigins.some((entry) => entry.toLowerCase() === actual)) return allowed;
  return {
    ok: false,
    status: 403,
    message: `Requests from the page at ${origin.slice(0, 200)} are not allowed; start tandem serve with --allow-origin ${origin.slice(0, 200)} to allow it.`,
  };
}

/** Both rules, for one request's headers. */
export function checkRequest(headers: { host?: string | undefined; origin?: string | undefined }, allowOrigins: readonly string[] = []): CheckResult {
  const host = checkHost(headers.host);
  if (!host.ok) return host;
  return checkOrigin(headers.origin, headers.host!, allowOrigins);
}
