/**
 * The JSON answer and the bounded request body, for every HTTP door of the host: the UI server
 * (server.ts) and the agents' /mcp endpoint (agent/mcp/mcp-http.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { commonHeaders } from './static.js';

/** Answers `value` as JSON, never cached, with the common security headers (and `extra`). */
export function sendJson(res: ServerResponse, status: number, value: unknown, extra: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    ...commonHeaders,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    ...extra,
  });
  res.end(body);
}

/**
 * The request body as text, or null when it exceeds `limit` bytes (what comes past the limit is
 * read and dropped, so the refusal still reaches the client).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
