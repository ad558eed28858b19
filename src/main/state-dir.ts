import { homedir } from 'node:os';
import { posix, resolve, win32 } from 'node:path';

const appDirName = 'Tandem';

/** Enough of a process to decide where state lives; injectable so tests need no real home. */
export interface StateDirEnv {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  home: string;
}

/**
 * Where Tandem keeps its state (settings, tokens, Electron's userData).
 * `$TANDEM_HOME` wins on every platform so tests and portable setups can isolate it.
 */
export function stateDir(from: StateDirEnv = { platform: process.platform, env: process.env, home: homedir() }): string {
  const { platform, env, home } = from;
  // Electron's app.setPath rejects relative paths.
  if (env.TANDEM_HOME) return resolve(env.TANDEM_HOME);
  switch (platform) {
    case 'darwin':
      return posix.join(home, 'Library', 'Application Support', appDirName);
    case 'win32':
      return win32.join(env.APPDATA || win32.join(home, 'AppData', 'Roaming'), appDirName);
    default:
      // XDG says a relative XDG_CONFIG_HOME is invalid and must be ignored.
      return posix.join(env.XDG_CONFIG_HOME && posix.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : posix.join(home, '.config'), appDirName);
  }
}

/**
 * Machine-local state: Electron's profile (caches), the instance lock and instance.json. On
 * Windows that is %LOCALAPPDATA%, which never roams to another machine with the profile; on
 * Linux and macOS it is the state directory.
 */
export function localStateDir(from: StateDirEnv = { platform: process.platform, env: process.env, home: homedir() }): string {
  const { platform, env, home } = from;
  if (env.TANDEM_HOME || platform !== 'win32') return stateDir(from);
  return win32.join(env.LOCALAPPDATA || win32.join(home, 'AppData', 'Local'), appDirName);
}

/**
 * Where Tandem keeps state when no TANDEM_HOME says otherwise, for a person whose home is
 * `home`: the state and the machine-local state directories (one on Linux and macOS).
 */
export function defaultStateDirs(home: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): string[] {
  const from = { platform, env: { ...env, TANDEM_HOME: undefined }, home };
  return [...new Set([stateDir(from), localStateDir(from)])];
}
