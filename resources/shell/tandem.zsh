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
() { local k; for k in ${(k)builtins}; do __tandem_builtins0[$k]=1; done }
# The redirect report (src/main/terminal/redirect-report.ts) from the aliases, galiases,
# builtins (those loaded since the startup files ran) and functions tables of zsh/parameter,
# before the end marker. At most about 9,000 characters. Not the command hash table: HASH_DIRS
# fills it with every program of PATH's directories up to the first command's (1,644 entries
# here), and comparing that on every prompt cost 2 ms, 26 ms when it changed.
__tandem_redirects() {
  local REPLY k flags= list= sig
  local -i na=0 ng=0 nb=0
  [[ $PATH == "$__tandem_path0" ]] || flags=p
  # An empty or relative entry finds programs in the current folder (the workspace's own `ls`).
  [[ :$PATH: == *::* || :$PATH: == *:[^/]* ]] && flags+=r
  # Each key and value quoted (joined bare, `zz='q x;' ls=ls` and `zz=q ls='x; ls'` read alike).
  sig="$flags|${(qkv)aliases}|${(qkv)galiases}|${(qk)builtins}|${(qk)functions}"
  if [[ $sig == "$__tandem_lastsig" ]]; then
    (( __tandem_seq == __tandem_lastseq )) || print -rn -- "${__tandem_osc}D;$__tandem_seq;="$'\a'
    typeset -g __tandem_lastseq=$__tandem_seq
    return
  fi
  typeset -g __tandem_lastsig=$sig __tandem_lastseq=$__tandem_seq
  # Each entry at most 1,024 characters encoded, the list at most about 9,000: under the host's
  # 16 KiB marker bound, past which a report would be dropped as output and a later `=` would
  # stand for the report before it.
  local e
  for k in ${(k)aliases}; do
    __tandem_esc "$k"; e=$REPLY
    __tandem_esc "${aliases[$k]}"
    if (( ${#list} > 8000 || ${#e} + ${#REPLY} > 1024 )); then flags+=t; break; fi
    list+=";$e;$REPLY"
    (( na++ ))
  done
  for k in ${(k)galiases}; do
    __tandem_esc "$k"
    if (( ${#list} > 8000 || ${#REPLY} > 1024 )); then flags+=t; break; fi
    list+=";$REPLY"
    (( ng++ ))
  done
  for k in ${(k)builtins}; do
    (( ${+__tandem_builtins0[$k]} )) && continue
    __tandem_esc "$k"
    if (( ${#list} > 8000 || ${#REPLY} > 1024 )); then flags+=t; break; fi
    list+=";$REPLY"
    (( nb++ ))
  done
  for k in ${(k)functions}; do
    [[ $k == _* ]] && continue
    [[ $k == TRAPINT && -n $__tandem_trapint && ${functions[TRAPINT]} == "$__tandem_trapint" ]] && continue
    __tandem_esc "$k"
    if (( ${#list} > 8000 || ${#REPLY} > 1024 )); then flags+=t; break; fi
    list+=";$REPLY"
  done
  print -rn -- "${__tandem_osc}D;$__tandem_seq;$flags;$na;$ng;0;$nb$list"$'\a'
}
typeset -gi __tandem_seq=0
typeset -g __tandem_cmd=
typeset -g __tandem_snap=
typeset -g __tandem_osc=$'\e]7771;'"$__tandem_secret;"
typeset -g __tandem_ps2="%{"$'\e]7771;'"$__tandem_secret;C"$'\a'"%}"
# A Ctrl+C that reaches zsh itself after the start marker but before the command runs (preexec
# hooks, the moment before the fork) cancels the command and leaves $? as it was, so a cancelled
# `sleep 100` would be reported as ending 0. TRAPINT notes which command it hit and returns
# 128+2: the zsh manual (Functions, Trap Functions) says a non-zero return behaves as interrupted,
# as with no trap at all. precmd then reports such a command's 0 as 130. Set only where the
# person has no INT trap of their own, function or `trap` style (listed through a private file:
# a subshell does not list the parent's `trap` style traps).
typeset -gi __tandem_intseq=-1
typeset -g __tandem_trapint=
() {
  emulate -L zsh
  (( $+functions[TRAPINT] )) && return
  zmodload zsh/system 2>/dev/null || return
  local f=${TMPDIR:-/tmp}/.tandem-traps.$$.$RANDOM listed fd
  sysopen -w -o creat,excl -m 600 -u fd $f 2>/dev/null || return
  { trap >&$fd } always { exec {fd}>&- }
  listed=$(<$f)
  command rm -f -- $f
  [[ $'\n'$listed$'\n' == *' INT'$'\n'* ]] || __tandem_trapint=1
}
# Outside the function: `emulate -L` sets LOCAL_TRAPS, which would undo the trap on its return.
if [[ -n $__tandem_trapint ]]; then
  TRAPINT() { __tandem_intseq=$__tandem_seq; return $(( 128 + $1 )) }
  __tandem_trapint=${functions[TRAPINT]}
fi
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
  if [[ -n $__tandem_snap ]]; then __tandem_envscrub "$__tandem_snap"; __tandem_snap=; fi
}
# Agent terminals, while the host's flag file `__tandem_drains` names exists: input a program left
# unread is emptied up to the host's fence before the line editor would take it as a command nobody
# judged (tandem.bash, `__tandem_drain`, and its P and F markers). `read -d` reads the terminal
# with the line mode off; `-t` waits only for the first character, and the host always answers F.
__tandem_drain() {
  local __tandem_x __tandem_f=''
  integer __tandem_n=0
  IFS= read -r __tandem_f < $__tandem_drains 2>/dev/null
  print -rn -- "${__tandem_osc}F;$__tandem_seq"$'\a'
  while (( __tandem_n++ < 64 )) && IFS= read -r -s -t 5 -d $'\x1e' __tandem_x; do
    [[ -n $__tandem_f && $__tandem_x != *$__tandem_f ]] || return 0
  done
}
__tandem_precmd() {
  local __tandem_ret=$? REPLY __tandem_code
  if [[ -n ${__tandem_drains-} ]]; then
    print -rn -- "${__tandem_osc}P;$__tandem_seq"$'\a'
    [[ ! -e $__tandem_drains ]] || __tandem_drain
  fi
  __tandem_code=$__tandem_ret
  (( __tandem_code == 0 && __tandem_intseq == __tandem_seq )) && __tandem_code=130
  __tandem_redirects
  __tandem_esc "$PWD"
  print -rn -- "${__tandem_osc}E;${__tandem_seq};${__tandem_code};${__tandem_cmd};$REPLY"$'\a'
  __tandem_reassert
  # Agent terminals: the person's precmd hooks run after this one and may export (direnv);
  # preexec hands what they changed since this list to the scrub (the rc file's).
  if (( $+functions[__tandem_envsnap] && ${#precmd_functions} > 1 )); then __tandem_envsnap; fi
  return $__tandem_ret
}
__tandem_reassert
