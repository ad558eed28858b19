# Tandem's shell integration for PowerShell 7 and Windows PowerShell 5.1. The per-terminal rc
# file Tandem generates (src/main/shells/pwsh.ts) sets $global:__tandem's Osc (with the marker
# secret) and History, then runs this script as a script block (which the execution policy
# does not govern): this script is the same for every terminal. It runs in a child scope after
# the person's profile, so everything it keeps is explicitly global. Compatible with Windows
# PowerShell 5.1: no `e escapes, ternaries or pipeline chains.
#
# Markers: `prompt` is wrapped to print the end marker before the person's prompt text;
# `PSConsoleHostReadLine` is wrapped to print the start marker for each accepted non-blank line.
# Each wrapper re-installs the other when the person's code replaced it, and the readline
# wrapper prints the end marker itself when the prompt was replaced, so readiness survives
# either. Enter is wrapped so that a line PSReadLine continues prints the continuation marker,
# and Enter and Tab so that sent text arrives as text (see __tandem_hook_keys).

# The person's prompt, wrapped: the end marker first (with the status captured before anything
# ran), then the person's prompt with `$?` restored for prompts that show it. __N__ is the index
# of the wrapped function.
$__prompt = @'
$ok = $global:?
$t = $global:__tandem
$t.Prompted = $true
__tandem_end $ok
__tandem_hook_readline
$p = $t.Prompts[__N__]
if (-not $p) { return 'PS> ' }
if (-not $ok) { Microsoft.PowerShell.Utility\Write-Error 'failed' -ErrorAction Ignore }
# Agent terminals: what the person's prompt exports goes through the scrub (the rc file's);
# what was set before it (the agent's own commands) stays.
$snap = $null
if ($function:__tandem_envsnap) { $snap = __tandem_envsnap }
$s = & $p
if ($null -ne $snap) { __tandem_envscrub $snap }
$s
'@
# PSConsoleHostReadLine, wrapped. A read without our prompt before it is a continuation read of
# the host's own line editor (no PSReadLine) when our prompt is in place, and follows a prompt
# the person replaced otherwise: then the end marker is printed here and the prompt re-wrapped.
$__readline = @'
$ok = $global:?
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
$line
'@
$global:__tandem = @{ Osc = $global:__tandem.Osc; Bel = [string][char]7; Seq = 0; Cmd = ''; Prompted = $false
  Native = $global:LASTEXITCODE; Err = $null; Prompts = [System.Collections.ArrayList]::new(); ReadLines = [System.Collections.ArrayList]::new()
  History = $global:__tandem.History; Psrl = $null; Queue = $null; Singleton = $null
  PromptBody = $__prompt; ReadLineBody = $__readline }
if ($global:Error.Count -gt 0) { $global:__tandem.Err = $global:Error[0] }
# Baseline of the redirect report: aliases and functions the session had when the integration
# started (pwsh defines many aliases of its own, and the person's profile ran before), and PATH.
$global:__tandem.Base = @{}
foreach ($__a in @(Microsoft.PowerShell.Management\Get-ChildItem alias:)) { $global:__tandem.Base['a:' + $__a.Name] = $__a.Definition }
foreach ($__f in @(Microsoft.PowerShell.Management\Get-ChildItem function:)) { $global:__tandem.Base['f:' + $__f.Name] = $__f.Definition }
$global:__tandem.Path0 = $env:PATH
$global:__tandem.LastD = $null
$global:__tandem.LastDSeq = -1
# The redirect report (src/main/terminal/redirect-report.ts): what differs from the baseline,
# before the end marker. At most about 8,000 characters (4,000 each), then incomplete.
function global:__tandem_redirects {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  $flags = ''
  if ($env:PATH -cne $t.Path0) { $flags = 'p' }
  # A relative entry (and on Unix an empty one) finds programs in the current folder. Absolute:
  # /x, C:\x or C:/x, \\server\x.
  foreach ($entry in ("$env:PATH" -split [IO.Path]::PathSeparator)) {
    if (($entry -eq '' -and [IO.Path]::DirectorySeparatorChar -eq '/') -or ($entry -ne '' -and $entry -notmatch '^(/|[A-Za-z]:[\\/]|\\\\)')) { $flags += 'r'; break }
  }
  $aliases = ''
  $functions = ''
  $na = 0
  foreach ($a in @(Microsoft.PowerShell.Management\Get-ChildItem alias:)) {
    if ($t.Base['a:' + $a.Name] -ceq $a.Definition) { continue }
    if ($aliases.Length -gt 4000) { $flags += 't'; break }
    $aliases += ';' + (__tandem_esc $a.Name) + ';' + (__tandem_esc $a.Definition)
    $na += 1
  }
  foreach ($f in @(Microsoft.PowerShell.Management\Get-ChildItem function:)) {
    if ($f.Name -like '__tandem*' -or $f.Name -eq 'prompt' -or $f.Name -eq 'PSConsoleHostReadLine' -or $t.Base['f:' + $f.Name] -ceq $f.Definition) { continue }
    if ($functions.Length -gt 4000) { $flags += 't'; break }
    $functions += ';' + (__tandem_esc $f.Name)
  }
  # No global aliases, hash table or loadable builtins in pwsh: those counts are 0.
  $body = $flags + ';' + $na + ';0;0;0' + $aliases + $functions
  if ($body -ceq $t.LastD) {
    if ($t.Seq -ne $t.LastDSeq) { [Console]::Write($t.Osc + 'D;' + $t.Seq + ';=' + $t.Bel) }
  } else { [Console]::Write($t.Osc + 'D;' + $t.Seq + ';' + $body + $t.Bel) }
  $t.LastD = $body
  $t.LastDSeq = $t.Seq
}
function global:__tandem_esc([string]$s) {
  $s.Replace('%', '%25').Replace(';', '%3B').Replace([string][char]7, '%07').Replace([string][char]27, '%1B').Replace([string][char]10, '%0A').Replace([string][char]13, '%0D')
}
# The exit code: 0 on success; 130 for a pipeline stopped by Ctrl+C (as shells report SIGINT);
# a failing native command's $LASTEXITCODE unless a cmdlet failed after it (a new record in
# $Error with $LASTEXITCODE unchanged); else 1.
function global:__tandem_end([bool]$ok) {
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
}
function global:__tandem_start([string]$line) {
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
}
# Each wrapper calls the function it replaced by index, so wrapping a wrapper never loops.
function global:__tandem_hook_prompt {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  $n = $t.Prompts.Add($function:prompt)
  $function:global:prompt = [scriptblock]::Create($t.PromptBody.Replace('__N__', $n))
  $t.Prompt = $function:prompt
}
function global:__tandem_hook_readline {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  if ($t.ReadLine -and [object]::ReferenceEquals($function:PSConsoleHostReadLine, $t.ReadLine)) { return }
  $n = $t.ReadLines.Add($function:PSConsoleHostReadLine)
  $function:global:PSConsoleHostReadLine = [scriptblock]::Create($t.ReadLineBody.Replace('__N__', $n))
  $t.ReadLine = $function:PSConsoleHostReadLine
}
function global:__tandem_pending {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  if ([Console]::KeyAvailable) { return $true }
  if ($t.Queue -and $t.Singleton) { return $t.Queue.GetValue($t.Singleton.GetValue($null)).Count -gt 0 }
  $false
}
# Runs before each read, so it costs nothing before the first prompt is out, and it re-binds the
# keys when the person's code reset the bindings (e.g. a new edit mode). Input already queued
# behind a key is sent text, not typing: Enter then adds a line (PSReadLine has no bracketed
# paste, so a multi-line send would otherwise run line by line) and Tab inserts a tab (instead
# of completing). Only built-in functions are wrapped: a person's own script block for the key
# cannot be read back, so it stays as it is.
function global:__tandem_hook_keys {
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
}
# A line that PSReadLine continues (an unclosed quote or brace) changes the buffer instead of
# returning it: that is the continuation prompt.
$global:__tandem.EnterHandler = {
  param($key, $arg)
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  if (__tandem_pending) { [Microsoft.PowerShell.PSConsoleReadLine]::AddLine($key, $arg); return }
  $before = $null; $after = $null; $cursor = 0
  [Microsoft.PowerShell.PSConsoleReadLine]::GetBufferState([ref]$before, [ref]$cursor)
  [Microsoft.PowerShell.PSConsoleReadLine]::($t.Enter)($key, $arg)
  [Microsoft.PowerShell.PSConsoleReadLine]::GetBufferState([ref]$after, [ref]$cursor)
  if ($after -cne $before) { [Console]::Write($t.Osc + 'C' + $t.Bel) }
}
$global:__tandem.TabHandler = {
  param($key, $arg)
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  if (__tandem_pending) { [Microsoft.PowerShell.PSConsoleReadLine]::Insert([string][char]9); return }
  [Microsoft.PowerShell.PSConsoleReadLine]::($global:__tandem.Tab)($key, $arg)
}
__tandem_hook_prompt
__tandem_hook_readline
