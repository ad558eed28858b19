import { execFile, spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Which bash (or zsh) a path is: its version (from `--version`, which reads no startup files)
 * and whether it needs the legacy integration. Cached per path, size and modification time, so
 * each binary runs once; the host reads them at start, off the event loop (`readShellVersions`).
 */
export interface BashVersion {
  major: number;
  minor: number;
  /** `5.2.15`, as the shell prints it. */
  text: string;
}

const cache = new Map<string, { key: string; version: BashVersion | null }>();

/** `GNU bash, version 3.2.57(1)-release (arm64-apple-darwin23)` → 3.2.57; null for anything else. */
export function parseBashVersion(output: string): BashVersion | null {
  const match = /\bversion (\d+)\.(\d+)(?:\.(\d+))?/.exec(output);
  if (!match) return null;
  return { major: Number(match[1]), minor: Number(match[2]), text: `${match[1]}.${match[2]}${match[3] !== undefined ? `.${match[3]}` : ''}` };
}

/** bash's line as above, or zsh's `zsh 5.9 (arm64-apple-darwin23.0)`; null for anything else. */
export function parseShellVersion(output: string): BashVersion | null {
  const bash = parseBashVersion(output);
  if (bash) return bash;
  const match = /^zsh (\d+)\.(\d+)(?:\.(\d+))?\b/.exec(output);
  if (!match) return null;
  return { major: Number(match[1]), minor: Number(match[2]), text: `${match[1]}.${match[2]}${match[3] !== undefined ? `.${match[3]}` : ''}` };
}

/** Newer first: by major, minor, then the full text's patch number. */
export function compareVersions(a: BashVersion, b: BashVersion): number {
  const patch = (version: BashVersion) => Number(version.text.split('.')[2] ?? 0);
  return b.major - a.major || b.minor - a.minor || patch(b) - patch(a);
}

const versionTimeoutMs = 5000;
const versionEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH ?? '', LC_ALL: 'C' });

/** The path and each directory above it, up to the root. */
function withAncestors(path: string): string[] {
  const out = [path];
  for (let dir = dirname(path); dir !== out[out.length - 1]; dir = dirname(dir)) out.push(dir);
  return out;
}

/**
 * Whether only root or this user could have put this file here: the file (as named and its
 * real path) and every directory above either are owned by root or this uid and writable by
 * no group or other (a sticky directory such as /tmp is fine: nobody else can replace what is
 * ours in it). Discovery runs candidates with `--version` at host start and may make one the
 * default `bash`: a `bash` in a folder another account (or the admin group, as with an Intel
 * Homebrew's /usr/local/bin) can write is never run nor offered. Windows has no such owners.
 */
export function trustedExecutable(path: string, uid: number | undefined = process.getuid?.()): boolean {
  if (uid === undefined) return true;
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return false;
  }
  // The name's own directories (stat follows links: whoever may write the folder holding a link may swap it), then the real file's.
  const paths = new Set([...withAncestors(dirname(path)), ...withAncestors(real)]);
  for (const entry of paths) {
    let stat;
    try {
      stat = statSync(entry);
    } catch {
      return false;
    }
    if (stat.uid !== 0 && stat.uid !== uid) return false;
    const othersWrite = (stat.mode & 0o022) !== 0;
    const sticky = stat.isDirectory() && (stat.mode & 0o1000) !== 0;
    if (othersWrite && !(sticky && entry !== real)) return false;
  }
  return true;
}

function cacheKey(path: string): string | null {
  try {
    const stat = statSync(path);
    return `${stat.size}:${stat.mtimeMs}`;
  } catch {
    return null;
  }
}

/** The version of a bash or zsh binary, run at most once per path (and again only if the file changed). */
export function shellVersion(path: string): BashVersion | null {
  const key = cacheKey(path);
  if (key === null) return null;
  const hit = cache.get(path);
  if (hit && hit.key === key) return hit.version;
  // Checked on every read, not cached: a folder's owner or mode can change while the file does not.
  if (!trustedExecutable(path)) return null;
  const run = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: versionTimeoutMs, env: versionEnv(), windowsHide: true });
  const version = run.status === 0 ? parseShellVersion(run.stdout) : null;
  cache.set(path, { key, version });
  return version;
}

export const bashVersion = shellVersion;

/**
 * Reads the versions of these binaries without blocking the event loop, into the same cache:
 * the host calls it at start, so listing shells later runs nothing. A binary that changes
 * later is read again, synchronously, by `shellVersion`.
 */
export async function readShellVersions(paths: readonly string[]): Promise<void> {
  await Promise.all(
    paths.map(async (path) => {
      const key = cacheKey(path);
      if (key === null || cache.get(path)?.key === key || !trustedExecutable(path)) return;
      const version = await new Promise<BashVersion | null>((done) => {
        execFile(path, ['--version'], { encoding: 'utf8', timeout: versionTimeoutMs, env: versionEnv(), windowsHide: true }, (error, stdout) =>
          done(error ? null : parseShellVersion(stdout)),
        );
      });
      cache.set(path, { key, version });
    }),
  );
}

/** PS0 and `local -` arrived in bash 4.4 (bash NEWS, bash-4.4 items jj and s). */
export function needsLegacyIntegration(version: BashVersion): boolean {
  return version.major < 4 || (version.major === 4 && version.minor < 4);
}

/** Tests run the legacy integration on a current bash with TANDEM_BASH_INTEGRATION=legacy. */
export function legacyForced(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.TANDEM_BASH_INTEGRATION === 'legacy';
}
