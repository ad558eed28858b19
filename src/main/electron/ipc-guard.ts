/** The part of Electron's `WebFrameMain` the guard reads; plain so it can be tested without Electron. */
export interface SenderFrame {
  url: string;
}

/**
 * True when an IPC message comes from the app's own renderer: `frame.url` must have the same
 * scheme and host as `expectedUrlPrefix` and a path at or below its path, compared on whole
 * path segments after URL normalisation (so `http://localhost:5173` does not trust
 * `http://localhost:51730` or `http://localhost:5173.evil.test`, and `..` cannot climb out).
 * A missing frame (destroyed or navigated away) is never trusted.
 */
export function isTrustedSender(frame: SenderFrame | null | undefined, expectedUrlPrefix: string): boolean {
  if (!frame) return false;
  const actual = parseUrl(frame.url);
  const expected = parseUrl(expectedUrlPrefix);
  if (!actual || !expected) return false;
  if (actual.protocol !== expected.protocol || actual.host !== expected.host) return false;
  if (actual.username || actual.password) return false;
  return isPathWithin(actual.pathname, expected.pathname);
}

function parseUrl(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

function isPathWithin(path: string, base: string): boolean {
  if (base.endsWith('/')) return path.startsWith(base);
  return path === base || path.startsWith(`${base}/`);
}
