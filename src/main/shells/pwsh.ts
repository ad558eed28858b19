import { posix, win32 } from 'node:path';
import { credentialGlobs, credentialValueGlobs, globToRegex, keptNames } from './credentials.js';
import { gitHookUnset } from './git-hooks.js';
import { pwshRedirects, pwshRedirectsSetup } from './redirect-snippets.js';
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
 * The person's prompt, wrapped: the end marker first (with the status captured before anything
 * ran), then the person's prompt with `$?` restored for prompts that show it. `__N__` is the
 * index of the wrapped function.
 */
const promptWrapper = String.raw`$ok = $global:?
$t = $global:__tandem
$t.Prompted = $true
__tandem_end $ok
__tandem_hook_readline
$p = $t.Prompts[__N__]
if (-not $p) { return 'PS> ' }
if (-not $ok) { Microsoft.PowerShell.Utility\Write-Error 'failed' -ErrorAction Ignore }
& $p`;

/**
 * PSConsoleHostReadLine, wrapped. A read without our prompt before it is a continuation read of
 * the host's own line editor (no PSReadLine) when our prompt is in place, and follows a prompt
 * the person replaced otherwise: then the end marker is printed here and the prompt re-wrapped.
 */
const readLineWrapper = String.raw`$ok = $global:?
$t = $global:__tandem
if (-not $t.Prompted) {
  if ([object]::ReferenceEquals($function:prompt, $t.Prompt)) { [Console]::Write($t.Osc + 'C' + $t.Bel) } else { __tandem_end $ok }
}
$t.Prompted = $false
if (-not [object]::ReferenceEquals($function:prompt, $t.Prompt)) { __tandem_hook_prompt }
__tandem_hook_keys
$r = $t.ReadLines[__N__]
if (-not $r) { $r = { $Host.UI.ReadLine() } }
if (-not $ok) { Microsoft.PowerShell.Utility\Write-Error 'failed' -ErrorAction Ignore }
$line = & $r
__tandem_start $line
$line`;

/**
 * The integration script. It runs in a child scope after the person's profile (with -Command,
 * profiles load first), so everything it keeps is explicitly global. Compatible with Windows
 * PowerShell 5.1: no `e escapes, ternaries or pipeline chains.
 *
 * Markers: `prompt` is wrapped to print the end marker before the person's prompt text;
 * `PSConsoleHostReadLine` is wrapped to print the start marker for each accepted non-blank line.
 * Each wrapper re-installs the other when the person's code replaced it, and the readline wrapper
 * prints the end marker itself when the prompt was replaced, so readiness survives either.
 * Enter is wrapped so that a line PSReadLine continues prints the continuation marker, and Enter
 * and Tab so that sent text arrives as text (see __tandem_hook_keys).
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
    lines.push(
      `foreach ($__n in @([Environment]::GetEnvironmentVariables().Keys)) { if ($__n -notmatch ${psQuote(keptPattern())} -and ($__n -match ${psQuote(credentialPattern())} -or [Environment]::GetEnvironmentVariable($__n) -cmatch ${psQuote(credentialValuePattern())})) { [Environment]::SetEnvironmentVariable($__n, $null) } }`,
      "if ($global:PSStyle) { $global:PSStyle.OutputRendering = 'PlainText' }",
    );
  }
  lines.push(
    `$global:__tandem = @{ Osc = [string][char]27 + ']7771;' + ${psQuote(ctx.secret)} + ';'; Bel = [string][char]7; Seq = 0; Cmd = ''; Prompted = $false`,
    '  Native = $global:LASTEXITCODE; Err = $null; Prompts = [System.Collections.ArrayList]::new(); ReadLines = [System.Collections.ArrayList]::new()',
    `  History = ${ctx.agent && ctx.historyFile ? psQuote(ctx.historyFile) : '$null'}; Psrl = $null; Queue = $null; Singleton = $null`,
    `  PromptBody = ${psQuote(promptWrapper)}; ReadLineBody = ${psQuote(readLineWrapper)} }`,
    'if ($global:Error.Count -gt 0) { $global:__tandem.Err = $global:Error[0] }',
    pwshRedirectsSetup,
    pwshRedirects,
    String.raw`function global:__tandem_esc([string]$s) {
  $s.Replace('%', '%25').Replace(';', '%3B').Replace([string][char]7, '%07').Replace([string][char]27, '%1B').Replace([string][char]10, '%0A').Replace([string][char]13, '%0D')
}`,
    // The exit code: 0 on success; 130 for a pipeline stopped by Ctrl+C (as shells report
    // SIGINT); a failing native command's $LASTEXITCODE unless a cmdlet failed after it (a new
    // record in $Error with $LASTEXITCODE unchanged); else 1.
    String.raw`function global:__tandem_end([bool]$ok) {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  $code = 0
  if (-not $ok) {
    $code = 1
    $native = $global:LASTEXITCODE
    $err = $null
    if ($global:Error.Count -gt 0) { $err = $global:Error[0] }
    if ((Microsoft.PowerShell.Core\Get-History -Count 1).ExecutionStatus -eq 'Stopped') { $code = 130 }
    elseif ($native -is [int] -and $native -ne 0 -and ($native -ne $t.Native -or [object]::ReferenceEquals($err, $t.Err))) { $code = $native }
  }
  $loc = $ExecutionContext.SessionState.Path.CurrentLocation
  $cwd = $loc.Path
  if ($loc.Provider.Name -eq 'FileSystem') { $cwd = $loc.ProviderPath }
  __tandem_redirects
  [Console]::Write($t.Osc + 'E;' + $t.Seq + ';' + $code + ';' + (__tandem_esc $t.Cmd) + ';' + (__tandem_esc $cwd) + $t.Bel)
}`,
    String.raw`function global:__tandem_start([string]$line) {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  if ([string]::IsNullOrWhiteSpace($line)) { return }
  $t = $global:__tandem
  $t.Seq += 1
  $t.Cmd = $line
  if ($line.Length -gt 4096) { $t.Cmd = $line.Substring(0, 4096) }
  $t.Native = $global:LASTEXITCODE
  $t.Err = $null
  if ($global:Error.Count -gt 0) { $t.Err = $global:Error[0] }
  [Console]::Write($t.Osc + 'S;' + $t.Seq + ';' + (__tandem_esc $t.Cmd) + $t.Bel)
}`,
    // Each wrapper calls the function it replaced by index, so wrapping a wrapper never loops.
    String.raw`function global:__tandem_hook_prompt {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  $n = $t.Prompts.Add($function:prompt)
  $function:global:prompt = [scriptblock]::Create($t.PromptBody.Replace('__N__', $n))
  $t.Prompt = $function:prompt
}`,
    String.raw`function global:__tandem_hook_readline {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  if ($t.ReadLine -and [object]::ReferenceEquals($function:PSConsoleHostReadLine, $t.ReadLine)) { return }
  $n = $t.ReadLines.Add($function:PSConsoleHostReadLine)
  $function:global:PSConsoleHostReadLine = [scriptblock]::Create($t.ReadLineBody.Replace('__N__', $n))
  $t.ReadLine = $function:PSConsoleHostReadLine
}`,
    String.raw`function global:__tandem_pending {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  if ([Console]::KeyAvailable) { return $true }
  if ($t.Queue -and $t.Singleton) { return $t.Queue.GetValue($t.Singleton.GetValue($null)).Count -gt 0 }
  $false
}`,
    // Runs before each read, so it costs nothing before the first prompt is out, and it re-binds
    // the keys when the person's code reset the bindings (e.g. a new edit mode). Input already
    // queued behind a key is sent text, not typing: Enter then adds a line (PSReadLine has no
    // bracketed paste, so a multi-line send would otherwise run line by line) and Tab inserts a
    // tab (instead of completing). Only built-in functions are wrapped: a person's own script
    // block for the key cannot be read back, so it stays as it is.
    String.raw`function global:__tandem_hook_keys {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  if (-not (Microsoft.PowerShell.Core\Get-Module PSReadLine)) { return }
  if (-not $t.Psrl) {
    # PSReadLine's private queue of keys read ahead; without it, Console.KeyAvailable alone.
    $t.Psrl = [Microsoft.PowerShell.PSConsoleReadLine]
    $t.Queue = $t.Psrl.GetField('_queuedKeys', [Reflection.BindingFlags]'NonPublic,Instance')
    $t.Singleton = $t.Psrl.GetField('_singleton', [Reflection.BindingFlags]'NonPublic,Static')
  }
  if ($t.History) { PSReadLine\Set-PSReadLineOption -HistorySavePath $t.History; $t.History = $null }
  # -Chord is newer than the PSReadLine 2.0 of Windows PowerShell 5.1.
  try { $bound = @(PSReadLine\Get-PSReadLineKeyHandler -Chord Enter, Tab) }
  catch { $bound = @(PSReadLine\Get-PSReadLineKeyHandler -Bound | Microsoft.PowerShell.Core\Where-Object { $_.Key -eq 'Enter' -or $_.Key -eq 'Tab' }) }
  foreach ($h in $bound) {
    if ($h.Function -like 'Tandem*' -or -not $t.Psrl.GetMember($h.Function)) { continue }
    $t[$h.Key] = $h.Function
    if ($h.Key -eq 'Enter') { PSReadLine\Set-PSReadLineKeyHandler -Chord Enter -BriefDescription TandemEnter -Description ('Tandem: ' + $h.Function + ', joining sent lines') -ScriptBlock $t.EnterHandler }
    else { PSReadLine\Set-PSReadLineKeyHandler -Chord Tab -BriefDescription TandemTab -Description ('Tandem: ' + $h.Function + ', keeping sent tabs') -ScriptBlock $t.TabHandler }
  }
}`,
    // A line that PSReadLine continues (an unclosed quote or brace) changes the buffer instead
    // of returning it: that is the continuation prompt.
    String.raw`$global:__tandem.EnterHandler = {
  param($key, $arg)
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  if (__tandem_pending) { [Microsoft.PowerShell.PSConsoleReadLine]::AddLine($key, $arg); return }
  $before = $null; $after = $null; $cursor = 0
  [Microsoft.PowerShell.PSConsoleReadLine]::GetBufferState([ref]$before, [ref]$cursor)
  [Microsoft.PowerShell.PSConsoleReadLine]::($t.Enter)($key, $arg)
  [Microsoft.PowerShell.PSConsoleReadLine]::GetBufferState([ref]$after, [ref]$cursor)
  if ($after -cne $before) { [Console]::Write($t.Osc + 'C' + $t.Bel) }
}`,
    String.raw`$global:__tandem.TabHandler = {
  param($key, $arg)
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  if (__tandem_pending) { [Microsoft.PowerShell.PSConsoleReadLine]::Insert([string][char]9); return }
  [Microsoft.PowerShell.PSConsoleReadLine]::($global:__tandem.Tab)($key, $arg)
}`,
    '__tandem_hook_prompt',
    '__tandem_hook_readline',
  );
  return `${lines.join('\n')}\n`;
}

/** The credential list as one case-insensitive regex (PowerShell's -match ignores case). */
export function credentialPattern(): string {
  return `^(?:${credentialGlobs().map((glob) => globToRegex(glob).slice(1, -1)).join('|')})$`;
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
