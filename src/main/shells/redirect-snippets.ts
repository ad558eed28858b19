/**
 * The shell side of the redirect report (src/main/terminal/redirect-report.ts): at each prompt,
 * a cheap signature of the aliases, functions and PATH; the names only when it changed. Each
 * report carries the command sequence number it describes (a stale one counts as incomplete).
 * No extra fork: bash lists its functions in the subshell that already reads the history line
 * after a command (`compgen -A function` cannot be captured otherwise), so its report follows
 * the end marker; zsh reads its parameter tables and pwsh its providers, before the end marker. Names starting with `_` are left out (completion
 * helpers, never a program an allow list names). A report stops at about 8,000 characters and
 * says it is incomplete (then every line asks).
 */

const maxBodyChars = 8000;

/** bash: `__tandem_redirects` prints the report from `__tandem_fnlist` (one name a line) and `__tandem_path0`. */
export const bashRedirects = String.raw`__tandem_redirects() {
  local REPLY __tandem_k __tandem_flags= __tandem_na=0 __tandem_list=
  [[ $PATH == "$__tandem_path0" ]] || __tandem_flags=p
  __tandem_k="$__tandem_flags|\${!BASH_ALIASES[*]}|\${BASH_ALIASES[*]}|$__tandem_fnlist"
  if [[ $__tandem_k == "$__tandem_lastsig" ]]; then builtin printf '%sD;%s;=\a' "$__tandem_osc" "$__tandem_seq"; return; fi
  __tandem_lastsig=$__tandem_k
  for __tandem_k in "\${!BASH_ALIASES[@]}"; do
    if (( \${#__tandem_list} > MAXBODY )); then __tandem_flags+=t; break; fi
    __tandem_esc "$__tandem_k"; __tandem_list+=";$REPLY"
    __tandem_esc "\${BASH_ALIASES[$__tandem_k]}"; __tandem_list+=";$REPLY"
    (( __tandem_na++ ))
  done
  while IFS= builtin read -r __tandem_k; do
    [[ -z $__tandem_k || $__tandem_k == _* ]] && continue
    if (( \${#__tandem_list} > MAXBODY )); then __tandem_flags+=t; break; fi
    __tandem_esc "$__tandem_k"; __tandem_list+=";$REPLY"
  done <<< "$__tandem_fnlist"
  builtin printf '%sD;%s;%s;%s;0%s\a' "$__tandem_osc" "$__tandem_seq" "$__tandem_flags" "$__tandem_na" "$__tandem_list"
}`
  .replace(/\\\$/g, '$')
  .replace(/MAXBODY/g, String(maxBodyChars));

/** zsh: the same from `aliases`, `galiases` and `functions` (zsh/parameter); needs `__tandem_path0`. */
export const zshRedirects = String.raw`__tandem_redirects() {
  local REPLY k flags= list= sig
  local -i na=0 ng=0
  [[ $PATH == "$__tandem_path0" ]] || flags=p
  sig="$flags|\${(kv)aliases}|\${(kv)galiases}|\${(k)functions}"
  if [[ $sig == "$__tandem_lastsig" ]]; then
    (( __tandem_seq == __tandem_lastseq )) || print -rn -- "\${__tandem_osc}D;$__tandem_seq;="$'\a'
    typeset -g __tandem_lastseq=$__tandem_seq
    return
  fi
  typeset -g __tandem_lastsig=$sig __tandem_lastseq=$__tandem_seq
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
  print -rn -- "\${__tandem_osc}D;$__tandem_seq;$flags;$na;$ng$list"$'\a'
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
$global:__tandem.LastD = $null
$global:__tandem.LastDSeq = -1`;

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
  $body = $flags + ';' + $na + ';0' + $aliases + $functions
  if ($body -ceq $t.LastD) {
    if ($t.Seq -ne $t.LastDSeq) { [Console]::Write($t.Osc + 'D;' + $t.Seq + ';=' + $t.Bel) }
  } else { [Console]::Write($t.Osc + 'D;' + $t.Seq + ';' + $body + $t.Bel) }
  $t.LastD = $body
  $t.LastDSeq = $t.Seq
}`.replace(/MAXBODY/g, String(maxBodyChars / 2));
