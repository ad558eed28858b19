import { userInfo } from 'node:os';
import { isWslLauncher } from './git-bash.js';
import { resolveShell, shellName, which, type ResolvedShell } from './resolve.js';
import { findWindowsPowerShell } from './windows-powershell.js';

/** Shells offered besides the default, in this order, when found on PATH. */
export const posixCandidates = ['zsh', 'bash', 'sh', 'fish', 'pwsh'] as const;
/** `bash` is Git Bash (git-bash.ts); `wsl` is offered without integration. */
export const windowsCandidates = ['pwsh', 'powershell', 'bash', 'cmd', 'wsl'] as const;

export interface ShellDiscovery {
  defaultShell: ResolvedShell | null;
  shells: ResolvedShell[];
}

/** The person's default shell: $SHELL (or the account's shell), then /bin/sh; pwsh, powershell, cmd on Windows. */
function defaultShellPath(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | null {
  if (platform === 'win32') {
    for (const name of ['pwsh', 'powershell', 'cmd']) {
      const found = which(name, env.PATH ?? env.Path ?? '') ?? (name === 'powershell' ? findWindowsPowerShell(env) : null);
      if (found) return found;
    }
    return env.COMSPEC ?? null;
  }
  let account: string | undefined;
  try {
    account = userInfo().shell ?? undefined;
  } catch {
    account = undefined;
  }
  return env.SHELL || account || '/bin/sh';
}

/**
 * The default shell first, then each candidate found on PATH, listed once per executable name
 * (ignoring case and `.exe`), earliest first: /usr/bin/bash and /bin/bash are one shell.
 */
export function discoverShells(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): ShellDiscovery {
  const seen = new Set<string>();
  const shells: ResolvedShell[] = [];
  const add = (shell: ResolvedShell | null) => {
    // WSL's bash.exe is not bash for Tandem: it is offered as `wsl`, without integration.
    if (!shell || seen.has(shell.name) || (shell.name === 'bash' && isWslLauncher(shell.path))) return;
    seen.add(shell.name);
    shells.push(shell);
  };
  const tryResolve = (nameOrPath: string | null): ResolvedShell | null => {
    if (!nameOrPath) return null;
    try {
      return resolveShell(nameOrPath, env.PATH ?? env.Path ?? '');
    } catch {
      return null;
    }
  };
  const defaultShell = tryResolve(defaultShellPath(env, platform));
  add(defaultShell);
  for (const name of platform === 'win32' ? windowsCandidates : posixCandidates) {
    if (!seen.has(shellName(name))) add(tryResolve(name));
  }
  return { defaultShell, shells };
}
