import { statSync } from 'node:fs';
import { win32 } from 'node:path';

/**
 * Windows PowerShell 5.1 (`powershell.exe`), the shell every Windows has where PowerShell 7 is
 * not installed. It lives at the same place under the system root on every Windows since 7, so
 * it is found there when PATH lacks its folder (an environment built by hand, a trimmed PATH).
 * Its integration is pwsh's (pwsh.ts, resources/shell/tandem.ps1), kept to what 5.1 parses and
 * to PSReadLine 2.0 (tests/unit/windows-powershell.test.ts).
 */
export function windowsPowerShellPath(env: NodeJS.ProcessEnv): string {
  const root = env.SystemRoot ?? env.SYSTEMROOT ?? env.windir ?? env.WINDIR ?? 'C:\\Windows';
  return win32.join(root, 'System32', 'WindowsPowerShell', 'v1.0', 'powershell.exe');
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** powershell.exe at its fixed place, or null where it is missing. */
export function findWindowsPowerShell(env: NodeJS.ProcessEnv, exists: (path: string) => boolean = isFile): string | null {
  const path = windowsPowerShellPath(env);
  return exists(path) ? path : null;
}
