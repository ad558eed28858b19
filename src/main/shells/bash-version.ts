import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';

/**
 * Which bash a path is: its version (from `bash --version`, which reads no startup files) and
 * whether it needs the legacy integration. Cached per path, size and modification time, so a
 * menu that lists shells runs each bash once.
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

export function bashVersion(path: string): BashVersion | null {
  let key: string;
  try {
    const stat = statSync(path);
    key = `${stat.size}:${stat.mtimeMs}`;
  } catch {
    return null;
  }
  const hit = cache.get(path);
  if (hit && hit.key === key) return hit.version;
  const run = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 5000, env: { PATH: process.env.PATH ?? '', LC_ALL: 'C' }, windowsHide: true });
  const version = run.status === 0 ? parseBashVersion(run.stdout) : null;
  cache.set(path, { key, version });
  return version;
}

/** PS0 and `local -` arrived in bash 4.4 (bash NEWS, bash-4.4 items jj and s). */
export function needsLegacyIntegration(version: BashVersion): boolean {
  return version.major < 4 || (version.major === 4 && version.minor < 4);
}

/** Tests run the legacy integration on a current bash with TANDEM_BASH_INTEGRATION=legacy. */
export function legacyForced(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.TANDEM_BASH_INTEGRATION === 'legacy';
}
