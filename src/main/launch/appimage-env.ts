/**
 * What an AppImage's AppRun and runtime add to the environment (electron-builder 26's AppRun:
 * PATH, XDG_DATA_DIRS, LD_LIBRARY_PATH, GSETTINGS_SCHEMA_DIR; the runtime: APPDIR, APPIMAGE,
 * ARGV0, OWD). Shells must not inherit them: the mount vanishes when the app exits, and the
 * bundled libraries would shadow the system's.
 */
const runtimeVars = ['APPDIR', 'APPIMAGE', 'ARGV0', 'OWD'];
const listVars = ['PATH', 'XDG_DATA_DIRS', 'LD_LIBRARY_PATH', 'GSETTINGS_SCHEMA_DIR'];
/** AppRun appends these to XDG_DATA_DIRS, after the person's own entries. */
const appendedDataDirs = ['/usr/share/gnome', '/usr/local/share/', '/usr/share/'];

function endsWithAppended(entries: string[]): boolean {
  const tail = entries.slice(-appendedDataDirs.length);
  return tail.length === appendedDataDirs.length && tail.every((entry, i) => entry === appendedDataDirs[i]);
}

export function withoutAppImageEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const appDir = env.APPDIR;
  if (!env.APPIMAGE || !appDir) return env;
  const inside = (entry: string) => entry === appDir || entry.startsWith(`${appDir.replace(/\/$/, '')}/`);
  const clean: NodeJS.ProcessEnv = { ...env };
  for (const name of runtimeVars) delete clean[name];
  for (const name of listVars) {
    const value = clean[name];
    if (value === undefined) continue;
    let kept = value.split(':').filter((entry) => entry !== '' && !inside(entry));
    if (name === 'XDG_DATA_DIRS' && endsWithAppended(kept)) kept = kept.slice(0, -appendedDataDirs.length);
    if (kept.length === 0) delete clean[name];
    else clean[name] = kept.join(':');
  }
  return clean;
}
