import { posix, win32 } from 'node:path';
import { credentialGlobs, credentialValueGlobs, globToRegex, keptNames } from './credentials.js';
import { shellScriptPath } from '../resources.js';
import { capabilityNames } from './env.js';
import { gitHookUnset } from './git-hooks.js';
import { psReadLineClear } from './line-clear.js';
import type { DialectName, LaunchContext, LaunchPlan, ShellDialect } from './dialect.js';

/** PowerShell single-quoting: every kind of single quote PowerShell accepts is doubled. */
export function psQuote(value: string): string {
  return `'${value.replace(/['\u2018\u2019\u201a\u201b]/g, '$&$&')}'`;
}

const rcName = 'tandem.ps1';

/** The one line of the launch command: mode check, then the rc file as a script block. */
export function pwshCommand(rcPath: string, rcDir: string): string {
  // A script block is not subject to the execution policy (Windows PowerShell defaults to
  // Restricted, which refuses `. file.ps1`); ReadAllText reads UTF-8 where 5.1 would assume ANSI.
  // Constrained or restricted language refuses the setup: say so, and leave the shell plain.
  return (
    `if ($ExecutionContext.SessionState.LanguageMode -eq 'FullLanguage') { & ([scriptblock]::Create([IO.File]::ReadAllText(${psQuote(rcPath)}))) } ` +
    `else { Microsoft.PowerShell.Management\\Remove-Item -LiteralPath ${psQuote(rcDir)} -Recurse -Force -ErrorAction SilentlyContinue; ` +
    `Microsoft.PowerShell.Utility\\Write-Warning ('Tandem shell integration is off: it needs FullLanguage mode, not ' + $ExecutionContext.SessionState.LanguageMode + '.') }`
  );
}

/**
 * The per-terminal rc file. It runs in a child scope after the person's profile (with -Command,
 * profiles load first), so everything it keeps is explicitly global; it pins UTF-8, deletes its
 * directory, re-applies the agent's variables and scrubs credentials, sets the marker prefix
 * (with the secret) and the history path, and runs the integration,
 * resources/shell/tandem.ps1 (the same for every terminal), as a script block: the execution
 * policy does not govern those, where it could refuse `. file.ps1`.
 */
export function pwshRc(ctx: LaunchContext): string {
  const lines: string[] = [
    // A profile's strict mode would turn the probes below (unset $LASTEXITCODE, no history) into errors.
    'Microsoft.PowerShell.Core\\Set-StrictMode -Off',
    '$__u = [System.Text.UTF8Encoding]::new($false)',
    'if ([Console]::OutputEncoding.CodePage -ne 65001) { [Console]::OutputEncoding = $__u }',
    'if ([Console]::InputEncoding.CodePage -ne 65001) { [Console]::InputEncoding = $__u }',
    '$global:OutputEncoding = $__u',
    `try { [IO.Directory]::Delete(${psQuote(ctx.rcDir)}, $true) } catch { }`,
  ];
  if (ctx.agent) {
    for (const name of gitHookUnset) lines.push(`[Environment]::SetEnvironmentVariable(${psQuote(name)}, $null)`);
    for (const [name, value] of Object.entries({ ...ctx.reapplyEnv, NO_COLOR: '1' })) {
      lines.push(`[Environment]::SetEnvironmentVariable(${psQuote(name)}, ${psQuote(value)})`);
    }
    // Variable names ignore case where Windows does.
    const comparer = ctx.platform === 'win32' ? 'OrdinalIgnoreCase' : 'Ordinal';
    lines.push(
      // The scrub, a function run now and again at each prompt (tandem.ps1), after a prompt the
      // person's profile set may have exported more: credentials by name and value, then what the
      // profile set beyond the kept names stays only as existing absolute paths (env.ts
      // agentKeptNames; names ignore case where Windows does). Remove-Item, because
      // [Environment]::SetEnvironmentVariable(name, $null) leaves the name, empty, for child processes.
      // `__tandem_envsnap` lists every variable and value; the scrub given one leaves what is unchanged since (the agent's own).
      `function global:__tandem_envsnap { $h = [Collections.Generic.Dictionary[string,string]]::new([StringComparer]::${comparer}); foreach ($e in [Environment]::GetEnvironmentVariables().GetEnumerator()) { $h[[string]$e.Key] = [string]$e.Value }; return ,$h }`,
      'function global:__tandem_envscrub {',
      '  param($Since)',
      '  Microsoft.PowerShell.Core\\Set-StrictMode -Off',
      `  foreach ($__n in @([Environment]::GetEnvironmentVariables().Keys)) { if ($Since -and $Since.ContainsKey($__n) -and $Since[$__n] -ceq [Environment]::GetEnvironmentVariable($__n)) { continue }; if ($__n -notmatch ${psQuote(keptPattern())} -and ($__n -match ${psQuote(credentialPattern())} -or [Environment]::GetEnvironmentVariable($__n) -cmatch ${psQuote(credentialValuePattern())})) { Microsoft.PowerShell.Management\\Remove-Item -LiteralPath ("Env:" + $__n) -ErrorAction SilentlyContinue } }`,
      `  $__k = [Collections.Generic.HashSet[string]]::new([string[]]@(${ctx.keepEnv.map(psQuote).join(', ')}), [StringComparer]::${comparer})`,
      `  foreach ($__n in @([Environment]::GetEnvironmentVariables().Keys)) { if ($Since -and $Since.ContainsKey($__n) -and $Since[$__n] -ceq [Environment]::GetEnvironmentVariable($__n)) { continue }; if ($__k.Contains($__n)) { continue }; if (${capabilityNames.map((name) => `$__n -eq ${psQuote(name)}`).join(' -or ')}) { Microsoft.PowerShell.Management\\Remove-Item -LiteralPath ("Env:" + $__n) -ErrorAction SilentlyContinue; continue }; if ($__n -clike 'LC_*') { continue }; $__v = [Environment]::GetEnvironmentVariable($__n); $__ok = $__v -ne ''; foreach ($__e in ("$__v" -split [IO.Path]::PathSeparator)) { if ($__e -eq '' -or -not [IO.Path]::IsPathRooted($__e) -or -not ([IO.File]::Exists($__e) -or [IO.Directory]::Exists($__e))) { $__ok = $false } }; if (-not $__ok) { Microsoft.PowerShell.Management\\Remove-Item -LiteralPath ("Env:" + $__n) -ErrorAction SilentlyContinue } }`,
      '}',
      '__tandem_envscrub',
      "if ($global:PSStyle) { $global:PSStyle.OutputRendering = 'PlainText' }",
    );
  }
  lines.push(
    `$global:__tandem = @{ Osc = [string][char]27 + ']7771;' + ${psQuote(ctx.secret)} + ';'; History = ${ctx.agent && ctx.historyFile ? psQuote(ctx.historyFile) : '$null'} }`,
    `& ([scriptblock]::Create([IO.File]::ReadAllText(${psQuote(shellScriptPath('tandem.ps1'))})))`,
  );
  return `${lines.join('\n')}\n`;
}

/** The credential list as one case-insensitive regex (PowerShell's -match ignores case). */
export function credentialPattern(): string {
  return `^(?:${credentialGlobs()
    .map((glob) => globToRegex(glob).slice(1, -1))
    .join('|')})$`;
}

/** Credential-shaped values as one regex (matched case-sensitively, as the POSIX shells do). */
export function credentialValuePattern(): string {
  return `^(?:${credentialValueGlobs.map((glob) => globToRegex(glob).slice(1, -1)).join('|')})$`;
}

export function keptPattern(): string {
  return `^(?:${keptNames.join('|')})$`;
}

function powershellFamily(name: DialectName): ShellDialect {
  return {
    name,
    integration: 'full',
    // PSReadLine does not enable or parse bracketed paste; the Enter hook joins queued lines instead.
    bracketedPaste: false,
    // PSReadLine's reader thread reads only while a line is edited: during commands it waits on a
    // handle, not on the terminal (seen in /proc with PSReadLine 2.4.5).
    backgroundReader: false,
    // PSReadLine drops what a program left unread (tests/integration/agent-split-line.test.ts);
    // not seen on Windows, where ConPTY sits between.
    drainsUnread: (platform) => name === 'pwsh' && platform !== 'win32',
    // PSReadLine asks the cursor position at its prompt.
    promptAsks: true,
    // Windows PowerShell 5.1's lines are not judged: they ask.
    judge: name === 'pwsh' ? { grammar: 'pwsh', words: 'pwsh', reportsRedirects: true, reportsHash: false } : undefined,
    // On Windows, PSReadLine's Windows edit mode would need Escape (RevertLine), which ConPTY reads as Alt+ the next key (line-clear.ts).
    lineClear: (platform) => (name === 'pwsh' && platform !== 'win32' ? psReadLineClear : null),
    plan(_shellPath: string, ctx: LaunchContext): LaunchPlan {
      const rcPath = (ctx.platform === 'win32' ? win32 : posix).join(ctx.rcDir, rcName);
      const args = ['-NoLogo', ...(ctx.startupFiles === 'clean' ? ['-NoProfile'] : []), '-NoExit', '-Command', pwshCommand(rcPath, ctx.rcDir)];
      const env = ctx.agent ? { ...ctx.env, NO_COLOR: '1' } : ctx.env;
      return { args, env, files: [{ path: rcPath, content: pwshRc(ctx) }] };
    },
  };
}

/** PowerShell 7 (`pwsh`) on every platform. */
export const pwshDialect: ShellDialect = powershellFamily('pwsh');

/** Windows PowerShell 5.1 (`powershell.exe`): the same integration. */
export const powershellDialect: ShellDialect = powershellFamily('powershell');
