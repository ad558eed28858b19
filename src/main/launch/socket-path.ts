import { createHash, randomBytes } from 'node:crypto';
import { join, posix } from 'node:path';

/** sun_path holds 108 bytes on Linux and 104 on macOS, with its terminating NUL: stay under both. */
export const maxSocketPathBytes = 100;

/** The stdio bridge's socket file inside the discovery directory (or the short directory). */
export const bridgeSocketName = 'bridge.sock';

/**
 * Where the bridge channel listens: `bridge.sock` in the discovery directory; where that path
 * would pass sun_path's limit, the same name in a short 0700 directory under /tmp named after
 * the discovery directory (so one instance lock guards both); on Windows, a named pipe with a
 * random part, so a stale or squatted name is never reused.
 */
export function bridgeSocketPath(platform: NodeJS.Platform, discoveryDir: string): { path: string; dir: string | null } {
  if (platform === 'win32') return { path: `\\\\.\\pipe\\tandem-${digest(discoveryDir)}-${randomBytes(8).toString('hex')}`, dir: null };
  const full = join(discoveryDir, bridgeSocketName);
  if (Buffer.byteLength(full) <= maxSocketPathBytes) return { path: full, dir: discoveryDir };
  const dir = shortSocketDir(discoveryDir);
  return { path: posix.join(dir, bridgeSocketName), dir };
}

/** The short directory for a discovery directory whose socket path would be too long. */
export function shortSocketDir(discoveryDir: string): string {
  return posix.join('/tmp', `tandem-${digest(discoveryDir)}`);
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
