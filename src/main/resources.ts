import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TandemError } from '../shared/errors.js';

/**
 * Where `resources/` is, from the directory of the running module (the one place that knows
 * the layouts):
 * - the sources (tests, tsx): `<repo>/src/main/...` -> `<repo>/resources`;
 * - the build (`tandem serve`, the npm package, electron-vite): `<root>/out/main[/chunks]` ->
 *   `<root>/out/resources`, which the build copies from `resources/`;
 * - the installers: `.../app.asar/out/main` -> `.../app.asar.unpacked/out/resources`, because
 *   a shell reads real files, never the inside of the archive (electron-builder `asarUnpack`).
 */
export function locateResources(moduleDir: string, p: path.PlatformPath = path): string {
  const parts = p.normalize(moduleDir).split(p.sep);
  let at = -1;
  for (let i = parts.length - 1; i >= 0 && at < 0; i--) if (parts[i] === 'src' || parts[i] === 'out') at = i;
  if (at < 0) throw new Error(`Tandem cannot tell where its resources are from ${moduleDir}: it runs neither from src/ nor from out/.`);
  const root = parts.slice(0, at).map((part) => (part === 'app.asar' ? 'app.asar.unpacked' : part));
  const base = root.join(p.sep) || p.sep;
  return parts[at] === 'src' ? p.join(base, 'resources') : p.join(base, 'out', 'resources');
}

/** The shell integration scripts under `resources/shell/`, sourced by the generated rc files. */
export type ShellScript = 'tandem.bash' | 'tandem-legacy.bash' | 'tandem.zsh' | 'tandem.sh' | 'tandem.ps1';

let found: string | null = null;

/** The running code's `resources/`, checked once: without it no shell gets its integration. */
export function resourcesDir(): string {
  if (found) return found;
  const dir = locateResources(path.dirname(fileURLToPath(import.meta.url)));
  if (!existsSync(path.join(dir, 'shell', 'tandem.bash'))) {
    throw new TandemError(
      'shell_unsupported',
      `Tandem's shell integration scripts are missing from ${dir}; reinstall Tandem (in a source checkout, run \`npm run build\`).`,
    );
  }
  return (found = dir);
}

export function shellScriptPath(script: ShellScript): string {
  return path.join(resourcesDir(), 'shell', script);
}
