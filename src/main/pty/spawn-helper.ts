import { chmodSync, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * node-pty 1.1 ships macOS's `spawn-helper` without its execute bit (node-pty issue 850, fixed
 * in 1.2), so every spawn fails with `posix_spawnp failed`. Before the first spawn, set the bit
 * where it is missing; nothing happens when it is already set or the file is not ours to change
 * (an installed app, fixed when it was packed: scripts/after-pack.cjs).
 */
export function helperPaths(ptyDir: string, arch: string): string[] {
  const unpacked = ptyDir.replace(/app\.asar([\\/])/, 'app.asar.unpacked$1');
  return [join(unpacked, 'build', 'Release', 'spawn-helper'), join(unpacked, 'prebuilds', `darwin-${arch}`, 'spawn-helper')];
}

/** Adds the execute bits to `path` when it lacks them; true when it changed the file. */
export function ensureExecutable(path: string): boolean {
  if (!existsSync(path)) return false;
  const mode = statSync(path).mode;
  if ((mode & 0o111) === 0o111) return false;
  try {
    chmodSync(path, mode | 0o111);
    return true;
  } catch {
    return false;
  }
}

let checked = false;

export function ensureSpawnHelper(): void {
  if (checked || process.platform !== 'darwin') return;
  checked = true;
  const ptyDir = dirname(dirname(createRequire(import.meta.url).resolve('node-pty')));
  for (const path of helperPaths(ptyDir, process.arch)) ensureExecutable(path);
}
