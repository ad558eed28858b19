import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { which } from '../../src/main/shells/resolve.js';
import { makeHome } from './helpers.js';

/** pwsh on PATH, else the .NET global tool's location (`dotnet tool install --global PowerShell`). */
export function findPwsh(): string | null {
  const onPath = which('pwsh');
  if (onPath) return onPath;
  const tool = join(homedir(), '.dotnet', 'tools', 'pwsh');
  return existsSync(tool) ? tool : null;
}

/** CI sets TANDEM_REQUIRE_PWSH=1 so that a missing pwsh fails the run instead of skipping it. */
export const pwshRequired = process.env.TANDEM_REQUIRE_PWSH === '1';

/** A private HOME's profile path for pwsh on Linux and macOS ($XDG_CONFIG_HOME unset). */
export const profilePath = '.config/powershell/Microsoft.PowerShell_profile.ps1';

/** A private HOME (see makeHome) with a pwsh profile in it. */
export function homeWithProfile(profile: string): { home: string; cleanup: () => void } {
  const made = makeHome();
  mkdirSync(join(made.home, dirname(profilePath)), { recursive: true });
  writeFileSync(join(made.home, profilePath), profile);
  return made;
}
