import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, resolve, sep } from 'node:path';

/**
 * The Content-Security-Policy of the served UI. The same directives as the meta tag in
 * src/renderer/index.html (which covers Electron's file:// loads), plus what only a header
 * can say (`frame-ancestors`), and `connect-src` widened to the page's own WebSocket
 * (`ws://<Host>`: older engines do not match ws: with 'self').
 */
export function contentSecurityPolicy(host: string): string {
  return [
    "default-src 'self'",
    // 'wasm-unsafe-eval' compiles WebAssembly (the sixel decoder of @xterm/addon-image), not JavaScript eval.
    "script-src 'self' 'wasm-unsafe-eval'",
    // The terminal view (xterm.js) sizes its rows and measures glyphs with inline styles.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self' ws://${host}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers on every response of the UI server. */
export const commonHeaders: Readonly<Record<string, string>> = {
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
};

export function contentTypeOf(path: string): string {
  return contentTypes[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The file under `root` that a URL path names, or null: `/` is index.html; percent-decoding
 * happens once, and anything that is malformed, holds a NUL or a backslash, names a dot file
 * or climbs out of `root` is null.
 */
export function resolveStaticPath(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (!decoded.startsWith('/') || decoded.includes('\0') || decoded.includes('\\')) return null;
  if (decoded === '/') decoded = '/index.html';
  const segments = decoded.split('/').slice(1);
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.startsWith('.'))) return null;
  const base = resolve(root);
  const file = resolve(base, ...segments);
  return file.startsWith(base + sep) ? file : null;
}

function plain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...commonHeaders, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...extra });
  res.end(`${text}\n`);
}

/** Serves one GET/HEAD request from `root` (the built renderer). No directory listings. */
export async function serveStatic(root: string, req: IncomingMessage, res: ServerResponse, pathname: string, host: string): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    plain(res, 405, 'Method not allowed.', { Allow: 'GET, HEAD' });
    return;
  }
  const file = resolveStaticPath(root, pathname);
  if (!file) {
    plain(res, 404, 'Not found.');
    return;
  }
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) {
      plain(res, 404, 'Not found.');
      return;
    }
    size = info.size;
  } catch {
    plain(res, 404, 'Not found.');
    return;
  }
  const isHtml = extname(file).toLowerCase() === '.html';
  const headers: Record<string, string> = {
    ...commonHeaders,
    'Content-Type': contentTypeOf(file),
    'Content-Length': String(size),
    // Built assets carry a content hash in their names; the page itself must always be fresh.
    'Cache-Control': pathname.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  };
  if (isHtml) headers['Content-Security-Policy'] = contentSecurityPolicy(host);
  res.writeHead(200, headers);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(file);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
