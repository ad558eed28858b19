import { createHash, randomBytes } from 'node:crypto';
import { lstatSync, readdirSync } from 'node:fs';
import { join, posix } from 'node:path';

/** sun_path holds 108 bytes on Linux and 104 on macOS, with its terminating NUL: stay under both. */
export const maxSocketPathBytes = 100;

/** The stdio bridge's socket file inside the discovery directory (or the short directory). */
export const bridgeSocketName = 'bridge.sock';

/**
 * Where the bridge channel listens: `bridge.sock` in the discovery directory; where that path
 * would pass sun_path's limit, the same name in a short 0700 directory under /tmp whose name
 * starts with one derived from the discovery directory and ends with a random part; on Windows,
 * a named pipe with a random part. A random part means another user cannot take the name
 * first (a predictable /tmp name let one turn the channel off: black-box round s40), and a
 * stale name is never reused. Bridges read the path from instance.json.
 */
export function bridgeSocketPath(platform: NodeJS.Platform, discoveryDir: string): { path: string; dir: string | null } {
  if (platform === 'win32') return { path: `\\\\.\\pipe\\tandem-${digest(discoveryDir)}-${randomBytes(8).toString('hex')}`, dir: null };
  const full = join(discoveryDir, bridgeSocketName);
  if (Buffer.byteLength(full) <= maxSocketPathBytes) return { path: full, dir: discoveryDir };
  const dir = `${shortSocketDirPrefix(discoveryDir)}${randomBytes(8).toString('hex')}`;
  return { path: posix.join(dir, bridgeSocketName), dir };
}

/** How the short directories of a discovery directory begin (each ends with a random part). */
export function shortSocketDirPrefix(discoveryDir: string): string {
  return posix.join('/tmp', `tandem-${digest(discoveryDir)}-`);
}

/**
 * This user's short directories of a discovery directory that exist now: the live one and a
 * crashed instance's. Only directories, never through a link.
 */
export function ownShortSocketDirs(discoveryDir: string): string[] {
  return ownWithPrefix(shortSocketDirPrefix(discoveryDir));
}

/** The other short directories beside `dir` (one of them): a crashed instance's, to remove once the instance lock is held. */
export function staleShortSocketDirs(dir: string): string[] {
  const prefix = dir.slice(0, -16);
  return /^[0-9a-f]{16}$/.test(dir.slice(-16)) && posix.dirname(dir) === '/tmp' ? ownWithPrefix(prefix).filter((other) => other !== dir) : [];
}

function ownWithPrefix(prefix: string): string[] {
  const name = posix.basename(prefix);
  let entries: string[];
  try {
    entries = readdirSync('/tmp').filter((entry) => entry.startsWith(name) && /^[0-9a-f]{16}$/.test(entry.slice(name.length)));
  } catch {
    return [];
  }
  return entries
    .map((entry) => posix.join('/tmp', entry))
    .filter((path) => {
      try {
        const stat = lstatSync(path);
        return stat.isDirectory() && stat.uid === process.getuid?.();
      } catch {
        return false;
      }
    });
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
