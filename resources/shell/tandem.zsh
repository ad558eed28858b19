# Tandem's shell integration for zsh, sourced by the per-terminal .zshrc Tandem generates
# (src/main/shells/zsh.ts) after the person's own .zshrc ran. Per-terminal data (the marker
# secret, the rc directory, re-applied variables, the credential scrub) stays in that 0600
# file: this script is the same for every terminal. preexec prints the start marker with the
# command line, precmd the end marker with the exit status it captured first.

# The percent-encoding of marker fields (parameter expansion, no fork); tandem.bash has the same.
__tandem_esc() {
  REPLY=$1
  REPLY=${REPLY//\%/%25}; REPLY=${REPLY//;/%3B}; REPLY=${REPLY//$'\a'/%07}
  REPLY=${REPLY//$'\e'/%1B}; REPLY=${REPLY//$'\n'/%0A}; REPLY=${REPLY//$'\r'/%0D}
}
# Baselines of the redirect report: the PATH and the builtins the startup files left.
zmodload zsh/parameter 2>/dev/null
typeset -g __tandem_path0=$PATH
typeset -gA __tandem_builtins0
typeset -gi __tandem_hashcheck=256
() { local k; for k in ${(k)builtins}; do __tandem_builtins0[$k]=1; done }
# The redirect report (src/main/terminal/redirect-report.ts) from the aliases, galiases,
# commands (the hash table: a name `hash name=path` sent elsewhere than a PATH search would),
# builtins and functions tables of zsh/parameter, before the end marker. At most about 8,000
# characters.
__tandem_redirects() {
  # Listing the hash table must not fill it with every program on PATH first.
  setopt localoptions nohashlistall
  local REPLY k v d e flags= list= sig
  local -i na=0 ng=0 nh=0 nb=0
  [[ $PATH == "$__tandem_path0" ]] || flags=p
  sig="$flags|${(kv)aliases}|${(kv)galiases}|${(kv)commands}|${(k)builtins}|${(k)functions}"
  if [[ $sig == "$__tandem_lastsig" ]]; then
    (( __tandem_seq == __tandem_lastseq )) || print -rn -- "${__tandem_osc}D;$__tandem_seq;="$'\a'
    typeset -g __tandem_lastseq=$__tandem_seq
    return
  fi
  typeset -g __tandem_lastsig=$sig __tandem_lastseq=$__tandem_seq
  for k in ${(k)aliases}; do
    if (( ${#list} > 8000 )); then flags+=t; break; fi
    __tandem_esc "$k"; list+=";$REPLY"
    __tandem_esc "${aliases[$k]}"; list+=";$REPLY"
    (( na++ ))
  done
  for k in ${(k)galiases}; do
    if (( ${#list} > 8000 )); then flags+=t; break; fi
    __tandem_esc "$k"; list+=";$REPLY"
    (( ng++ ))
  done
  # A PATH search hashes `<dir>/<name>` for the first dir of $path holding the program. Up to
  # `__tandem_hashcheck` entries (the commands run: an agent's terminal) each is checked against
  # that search; a bigger table (filled for completion) only against the form, since the check
  # costs a few stats per entry: a `hash ls=<later dir>/ls` then goes unreported.
  local -A dirs
  for d in $path; do dirs[${d:-.}]=1; done
  local -i exact=$(( ${#commands} <= __tandem_hashcheck ))
  for k v in "${(@kv)commands}"; do
    if (( exact )); then
      e=
      for d in $path; do
        if [[ -f ${d:-.}/$k && -x ${d:-.}/$k ]]; then e=${d:-.}/$k; break; fi
      done
      [[ $v == "$e" ]] && continue
    else
      [[ $v == */$k ]] && (( ${+dirs[${v%/*}]} )) && continue
    fi
    if (( ${#list} > 8000 )); then flags+=t; break; fi
    __tandem_esc "$k"; list+=";$REPLY"
    __tandem_esc "$v"; list+=";$REPLY"
    (( nh++ ))
  done
  for k in ${(k)builtins}; do
    (( ${+__tandem_builtins0[$k]} )) && continue
    if (( ${#list} > 8000 )); then flags+=t; break; fi
    __tandem_esc "$k"; list+=";$REPLY"
    (( nb++ ))
  done
  for k in ${(k)functions}; do
    [[ $k == _* ]] && continue
    if (( ${#list} > 8000 )); then flags+=t; break; fi
    __tandem_esc "$k"; list+=";$REPLY"
  done
  print -rn -- "${__tandem_osc}D;$__tandem_seq;$flags;$na;$ng;$nh;$nb$list"$'\a'
}
typeset -gi __tandem_seq=0
typeset -g __tandem_cmd=
typeset -g __tandem_osc=$'\e]7771;'"$__tandem_secret;"
typeset -g __tandem_ps2="%{"$'\e]7771;'"$__tandem_secret;C"$'\a'"%}"
__tandem_reassert() {
  (( ${precmd_functions[(Ie)__tandem_precmd]} )) || precmd_functions=(__tandem_precmd $precmd_functions)
  (( ${preexec_functions[(Ie)__tandem_preexec]} )) || preexec_functions+=(__tandem_preexec)
  [[ $PS2 == *"$__tandem_ps2"* ]] || PS2=$__tandem_ps2$PS2
}
__tandem_preexec() {
  local REPLY
  (( __tandem_seq++ ))
  __tandem_esc "${1[1,4096]}"
  __tandem_cmd=$REPLY
  print -rn -- "${__tandem_osc}S;${__tandem_seq};${__tandem_cmd}"$'\a'
  __tandem_reassert
}
__tandem_precmd() {
  local __tandem_ret=$? REPLY
  __tandem_redirects
  __tandem_esc "$PWD"
  print -rn -- "${__tandem_osc}E;${__tandem_seq};${__tandem_ret};${__tandem_cmd};$REPLY"$'\a'
  __tandem_reassert
  return $__tandem_ret
}
__tandem_reassert
