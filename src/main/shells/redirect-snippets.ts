import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The shell side of the redirect report (src/main/terminal/redirect-report.ts): at each prompt,
 * before the end marker, a cheap signature of the aliases, functions and PATH; the names only
 * when it changed. No fork per prompt: bash lists its functions into a private file
 * (`declare -F` output cannot be captured otherwise without a subshell), zsh reads its
 * parameter tables, pwsh its providers. Names starting with `_` are left out (completion
 * helpers, never a program an allow list names). A report stops at about 8,000 characters and
 * says it is incomplete (then every line asks).
 */

/** Where a bash terminal lists its functions; removed when the terminal closes. */
export function functionListPath(terminalId: string): string {
  return join(tmpdir(), `tandem-fn-${terminalId}`);
}

const maxBodyChars = 8000;

/** bash: `__tandem_redirects` prints the report; needs `__tandem_fnfile` and `__tandem_path0`. */
export const bashRedirects = String.raw`__tandem_redirects() {
  local REPLY __tandem_k __tandem_flags= __tandem_body __tandem_fns=() __tandem_na=0 __tandem_list=
  if builtin declare -F >| "$__tandem_fnfile" 2>/dev/null && builtin mapfile -t __tandem_fns < "$__tandem_fnfile" 2>/dev/null; then :; else __tandem_flags=t; fi
  [[ $PATH == "$__tandem_path0" ]] || __tandem_flags+=p
  __tandem_k="$__tandem_flags|\${!BASH_ALIASES[*]}|\${BASH_ALIASES[*]}|\${__tandem_fns[*]}"
  [[ $__tandem_k == "$__tandem_lastsig" ]] && return
  __tandem_lastsig=$__tandem_k
  for __tandem_k in "\${!BASH_ALIASES[@]}"; do
    if (( \${#__tandem_list} > MAXBODY )); then __tandem_flags+=t; break; fi
    __tandem_esc "$__tandem_k"; __tandem_list+=";$REPLY"
    __tandem_esc "\${BASH_ALIASES[$__tandem_k]}"; __tandem_list+=";$REPLY"
    (( __tandem_na++ ))
  done
  for __tandem_k in "\${__tandem_fns[@]}"; do
    __tandem_k=\${__tandem_k##* }
    [[ $__tandem_k == _* ]] && continue
    if (( \${#__tandem_list} > MAXBODY )); then __tandem_flags+=t; break; fi
    __tandem_esc "$__tandem_k"; __tandem_list+=";$REPLY"
  done
  builtin printf '%sD;%s;%s;0%s\a' "$__tandem_osc" "$__tandem_flags" "$__tandem_na" "$__tandem_list"
}`
  .replace(/\\\$/g, '$')
  .replace(/MAXBODY/g, String(maxBodyChars));

/** zsh: the same from `aliases`, `galiases` and `functions` (zsh/parameter); needs `__tandem_path0`. */
export const zshRedirects = String.raw`__tandem_redirects() {
  local REPLY k flags= list= sig
  local -i na=0 ng=0
  [[ $PATH == "$__tandem_path0" ]] || flags=p
  sig="$flags|\${(kv)aliases}|\${(kv)galiases}|\${(k)functions}"
  [[ $sig == "$__tandem_lastsig" ]] && return
  typeset -g __tandem_lastsig=$sig
  for k in \${(k)aliases}; do
    if (( \${#list} > MAXBODY )); then flags+=t; break; fi
    __tandem_esc "$k"; list+=";$REPLY"
    __tandem_esc "\${aliases[$k]}"; list+=";$REPLY"
    (( na++ ))
  done
  for k in \${(k)galiases}; do
    if (( \${#list} > MAXBODY )); then flags+=t; break; fi
    __tandem_esc "$k"; list+=";$REPLY"
    (( ng++ ))
  done
  for k in \${(k)functions}; do
    [[ $k == _* ]] && continue
    if (( \${#list} > MAXBODY )); then flags+=t; break; fi
    __tandem_esc "$k"; list+=";$REPLY"
  done
  print -rn -- "\${__tandem_osc}D;$flags;$na;$ng$list"$'\a'
}`
  .replace(/\\\$/g, '$')
  .replace(/MAXBODY/g, String(maxBodyChars));

/**
 * pwsh: aliases and functions beyond those the session had when the integration started (pwsh
 * defines many aliases of its own, and the person's profile ran before), and `$env:PATH`.
 */
export const pwshRedirectsSetup = String.raw`$global:__tandem.Base = @{}
foreach ($__a in @(Microsoft.PowerShell.Management\Get-ChildItem alias:)) { $global:__tandem.Base['a:' + $__a.Name] = $__a.Definition }
foreach ($__f in @(Microsoft.PowerShell.Management\Get-ChildItem function:)) { $global:__tandem.Base['f:' + $__f.Name] = $__f.Definition }
$global:__tandem.Path0 = $env:PATH
$global:__tandem.LastD = $null`;

export const pwshRedirects = String.raw`function global:__tandem_redirects {
  Microsoft.PowerShell.Core\Set-StrictMode -Off
  $t = $global:__tandem
  $flags = ''
  if ($env:PATH -cne $t.Path0) { $flags = 'p' }
  $aliases = ''
  $functions = ''
  $na = 0
  foreach ($a in @(Microsoft.PowerShell.Management\Get-ChildItem alias:)) {
    if ($t.Base['a:' + $a.Name] -ceq $a.Definition) { continue }
    if ($aliases.Length -gt MAXBODY) { $flags += 't'; break }
    $aliases += ';' + (__tandem_esc $a.Name) + ';' + (__tandem_esc $a.Definition)
    $na += 1
  }
  foreach ($f in @(Microsoft.PowerShell.Management\Get-ChildItem function:)) {
    if ($f.Name -like '__tandem*' -or $f.Name -eq 'prompt' -or $f.Name -eq 'PSConsoleHostReadLine' -or $t.Base['f:' + $f.Name] -ceq $f.Definition) { continue }
    if ($functions.Length -gt MAXBODY) { $flags += 't'; break }
    $functions += ';' + (__tandem_esc $f.Name)
  }
  $body = 'D;' + $flags + ';' + $na + ';0' + $aliases + $functions
  if ($body -ceq $t.LastD) { return }
  $t.LastD = $body
  [Console]::Write($t.Osc + $body + $t.Bel)
}`.replace(/MAXBODY/g, String(maxBodyChars / 2));
