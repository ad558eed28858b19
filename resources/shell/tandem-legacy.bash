# shellcheck shell=bash
# shellcheck disable=SC2154  # __tandem_secret comes from the rc file that sources this script
# Tandem's shell integration for bash older than 4.4 (macOS's /bin/bash is 3.2), sourced by the
# per-terminal rc file (src/main/shells/bash.ts) instead of tandem.bash when BASH_VERSINFO says
# so. Same markers as tandem.bash, built only from what bash 3.2 has. Sources for each feature:
# bash's NEWS file (Debian ships it as /usr/share/doc/bash/NEWS.gz), cited as NEWS <version> <item>.
#
# Not available before 4.4, so not used here (tests/unit/shell-scripts.test.ts checks the text):
#   PS0 (NEWS 4.4 jj), `local -` (NEWS 4.4 s), ${v@Q} (4.4), associative arrays and so
#   BASH_ALIASES/BASH_CMDS (NEWS 4.0 ii), ${v^^} (NEWS 4.0 hh), mapfile (NEWS 4.0 u), |&
#   (NEWS 4.0 dd), ;;& and ;& (NEWS 4.0 ee/ff), $BASHPID (NEWS 4.0 c), declare -g (NEWS 4.2 e),
#   lastpipe (NEWS 4.2 t), negative subscripts (NEWS 4.3 h), printf -v into arrays (NEWS 4.1 e),
#   PROMPT_COMMAND as an array (NEWS 5.1 ee), EPOCHREALTIME (NEWS 5.0 c).
# Used, with where they arrived: `+=` (NEWS 3.1 i), [[ =~ ]] and BASH_REMATCH (NEWS 3.0 cc/ee;
#   the pattern comes from a variable, which matches as a regex from 3.2 on, NEWS 3.2 f),
#   BASH_COMMAND (NEWS 3.0 h; kept across the DEBUG trap since NEWS 3.1 j), FUNCNAME as an array
#   (NEWS 3.0 i), BASH_SUBSHELL (NEWS 3.0 h), HISTTIMEFORMAT (NEWS 3.0 bb), the DEBUG trap before
#   simple commands, ((...)) and [[...]] (NEWS 2.05b w), `hash -l` (NEWS 2.05b bb), compgen
#   (NEWS 2.04 n), printf (NEWS 2.02 f), \xNN in $'...' (NEWS 2.02 v), ${!name} (NEWS 2.0 q),
#   BASH_VERSINFO (NEWS 2.0 l).
#
# No PS0: the start marker comes from a DEBUG trap that precmd sets at each prompt. It fires
# before the first command of the line that runs in the shell itself, prints the marker and
# is removed, so the rest of the line runs without a trap (before 4.2 a trap overwrote
# PIPESTATUS: bash CHANGES 4.2-alpha l). It ignores PROMPT_COMMAND (an empty line), commands
# inside functions (completion functions, `set -T`) and subshells. A line whose only command
# is a subshell, `( ... )`, runs nothing in the shell itself: no start marker, and its end
# settles at the prompt like a line that ran nothing. The person's own DEBUG trap is replaced
# (bash 3.2 cannot read a trap without a fork into a file: `$(trap -p)` shows the caller's
# traps only from 4.2, CHANGES 4.2-alpha b).

__tandem_esc() {
  REPLY=$1
  REPLY=${REPLY//\%/%25}; REPLY=${REPLY//;/%3B}; REPLY=${REPLY//$'\a'/%07}
  REPLY=${REPLY//$'\e'/%1B}; REPLY=${REPLY//$'\n'/%0A}; REPLY=${REPLY//$'\r'/%0D}
}
__tandem_us=$'\x1f'
__tandem_re_hist='^ *([0-9]+)\*?  (.*)$'
# What one subshell prints for precmd: the builtins, the functions, `alias -p` and `hash -l`
# (no BASH_ALIASES or BASH_CMDS before 4.0), separated by \x1f.
__tandem_lists() {
  builtin compgen -b; builtin printf '%s' "$__tandem_us"
  builtin compgen -A function; builtin printf '%s' "$__tandem_us"
  builtin alias -p; builtin printf '%s' "$__tandem_us"
  builtin hash -l 2>/dev/null
}
# Splits what __tandem_lists printed into the four lists.
__tandem_split() {
  __tandem_hashl=${1##*"$__tandem_us"}; REPLY=${1%"$__tandem_us"*}
  __tandem_aliasp=${REPLY##*"$__tandem_us"}; REPLY=${REPLY%"$__tandem_us"*}
  __tandem_fnlist=${REPLY##*"$__tandem_us"}; __tandem_bilist=${REPLY%"$__tandem_us"*}
}
__tandem_path0=$PATH
__tandem_split "$(__tandem_lists)"
__tandem_builtins0=$'\n'$__tandem_bilist$'\n'

# The redirect report (src/main/terminal/redirect-report.ts), as tandem.bash sends it. Aliases
# are parsed from `alias -p` (`alias NAME='VALUE'`, quotes as `'\''`) and the hash table from
# `hash -l` (`builtin hash -p PATH NAME`), by parameter expansion: never evaluated. Output the
# parser does not recognise marks the report incomplete, so nothing is trusted.
__tandem_redirects() {
  local REPLY __tandem_k __tandem_v __tandem_d __tandem_p __tandem_e __tandem_t __tandem_flags='' __tandem_na=0 __tandem_nh=0 __tandem_nb=0 __tandem_list='' __tandem_dirs __tandem_names __tandem_f=''
  local IFS
  # `local -` is 4.4: restore globbing by hand.
  [[ $- == *f* ]] && __tandem_f=1
  set -f
  [[ $PATH == "$__tandem_path0" ]] || __tandem_flags=p
  # An empty or relative entry finds programs in the current folder (the workspace's own `ls`).
  [[ :$PATH: == *::* || :$PATH: == *:[!/]* ]] && __tandem_flags+=r
  __tandem_k="$__tandem_flags|$__tandem_aliasp|$__tandem_hashl|$__tandem_bilist|$__tandem_fnlist"
  if [[ $__tandem_k == "$__tandem_lastsig" ]]; then
    [[ -n $__tandem_f ]] || set +f
    builtin printf '%sD;%s;=\a' "$__tandem_osc" "$__tandem_seq"; return
  fi
  __tandem_lastsig=$__tandem_k
  __tandem_t=$__tandem_aliasp
  while [[ -n $__tandem_t ]]; do
    if [[ $__tandem_t != 'alias '* ]]; then __tandem_flags+=t; break; fi
    __tandem_t=${__tandem_t#alias }
    __tandem_k=${__tandem_t%%=*}
    __tandem_t=${__tandem_t#*=}
    __tandem_v=
    while :; do
      case $__tandem_t in
        "'"*) __tandem_t=${__tandem_t#\'}
              if [[ $__tandem_t != *"'"* ]]; then __tandem_flags+=t; break 2; fi
              __tandem_v+=${__tandem_t%%\'*}; __tandem_t=${__tandem_t#*\'} ;;
        "\\'"*) __tandem_v+="'"; __tandem_t=${__tandem_t#??} ;;
        $'\n'*) __tandem_t=${__tandem_t#?}; break ;;
        '') break ;;
        *) __tandem_flags+=t; break 2 ;;
      esac
    done
    if (( ${#__tandem_list} > 8000 )); then __tandem_flags+=t; break; fi
    __tandem_esc "$__tandem_k"; __tandem_list+=";$REPLY"
    __tandem_esc "$__tandem_v"; __tandem_list+=";$REPLY"
    (( __tandem_na++ ))
  done
  IFS=:
  # shellcheck disable=SC2206  # split on purpose (IFS set, globbing off)
  __tandem_dirs=($PATH)
  IFS=$'\n'
  # shellcheck disable=SC2206  # split on purpose (IFS set, globbing off)
  __tandem_names=($__tandem_hashl)
  for __tandem_t in "${__tandem_names[@]}"; do
    if [[ $__tandem_t != 'builtin hash -p '* ]]; then __tandem_flags+=t; break; fi
    __tandem_t=${__tandem_t#builtin hash -p }
    # NAME is the last word; a quoted PATH keeps its quotes, so it differs from a PATH search
    # and is reported: the report errs towards asking.
    __tandem_k=${__tandem_t##* }
    __tandem_v=${__tandem_t% *}
    __tandem_e=
    for __tandem_d in "${__tandem_dirs[@]}"; do
      __tandem_p=${__tandem_d:-.}
      [[ $__tandem_p == */ ]] || __tandem_p+=/
      if [[ -f $__tandem_p$__tandem_k && -x $__tandem_p$__tandem_k ]]; then __tandem_e=$__tandem_p$__tandem_k; break; fi
    done
    [[ $__tandem_v == "$__tandem_e" ]] && continue
    if (( ${#__tandem_list} > 8000 )); then __tandem_flags+=t; break; fi
    __tandem_esc "$__tandem_k"; __tandem_list+=";$REPLY"
    __tandem_esc "$__tandem_v"; __tandem_list+=";$REPLY"
    (( __tandem_nh++ ))
  done
  # shellcheck disable=SC2206  # split on purpose (IFS set, globbing off)
  __tandem_names=($__tandem_bilist)
  for __tandem_k in "${__tandem_names[@]}"; do
    [[ -z $__tandem_k || $__tandem_builtins0 == *$'\n'"$__tandem_k"$'\n'* ]] && continue
    if (( ${#__tandem_list} > 8000 )); then __tandem_flags+=t; break; fi
    __tandem_esc "$__tandem_k"; __tandem_list+=";$REPLY"
    (( __tandem_nb++ ))
  done
  # shellcheck disable=SC2206  # split on purpose (IFS set, globbing off)
  __tandem_names=($__tandem_fnlist)
  for __tandem_k in "${__tandem_names[@]}"; do
    [[ -z $__tandem_k || $__tandem_k == _* ]] && continue
    if (( ${#__tandem_list} > 8000 )); then __tandem_flags+=t; break; fi
    __tandem_esc "$__tandem_k"; __tandem_list+=";$REPLY"
  done
  [[ -n $__tandem_f ]] || set +f
  builtin printf '%sD;%s;%s;%s;0;%s;%s%s\a' "$__tandem_osc" "$__tandem_seq" "$__tandem_flags" "$__tandem_na" "$__tandem_nh" "$__tandem_nb" "$__tandem_list"
}
__tandem_seq=0
__tandem_lined=0
__tandem_histnum=
__tandem_osc=$'\e]7771;'"$__tandem_secret;"
__tandem_ps2="\[\e]7771;$__tandem_secret;C\a\]"
__tandem_status() { return "$1"; }
__tandem_user_pc=$PROMPT_COMMAND

# The DEBUG trap: the start marker before the line's first command in the shell itself. It
# succeeds when it printed the marker, and the trap string then removes the trap: a function
# cannot, bash puts the DEBUG trap back when a function that reset it returns. The trap string
# ends with a command that succeeds (a failing DEBUG trap skips the command under extdebug,
# NEWS 3.0 q) and leaves $_ as the command before it did.
__tandem_debug() {
  __tandem_last=$1
  [[ -z ${FUNCNAME[1]-} && $BASH_SUBSHELL == 0 && -z ${COMP_LINE-} && $BASH_COMMAND != __tandem_precmd ]] || return 1
  (( __tandem_seq++ ))
  builtin printf '%sS;%s\a' "$__tandem_osc" "$__tandem_seq"
}
# Agent terminals: what a program left unread is emptied at the prompt (tandem-drain.bash).
builtin . "${BASH_SOURCE[0]%/*}/tandem-drain.bash"
__tandem_precmd() {
  local __tandem_ret=$? REPLY __tandem_h
  if [[ -n ${__tandem_drains-} ]]; then
    builtin printf '%sP;%s\a' "$__tandem_osc" "$__tandem_seq"
    [[ ! -e $__tandem_drains ]] || __tandem_drain
  fi
  [[ -n ${__tandem_lastsig+x} ]] || __tandem_redirects
  __tandem_esc "$PWD"
  builtin printf '%sE;%s;%s;;%s\a' "$__tandem_osc" "$__tandem_seq" "$__tandem_ret" "$REPLY"
  if [[ $__tandem_seq != "$__tandem_lined" ]]; then
    __tandem_lined=$__tandem_seq
    # One subshell for the history line and the lists of the redirect report.
    __tandem_h=$(HISTTIMEFORMAT='' builtin history 1; builtin printf '%s' "$__tandem_us"; __tandem_lists)
    __tandem_split "${__tandem_h#*"$__tandem_us"}"
    __tandem_h=${__tandem_h%%"$__tandem_us"*}
    __tandem_h=${__tandem_h%$'\n'}
    if [[ $__tandem_h =~ $__tandem_re_hist ]] && [[ ${BASH_REMATCH[1]} != "$__tandem_histnum" ]]; then
      __tandem_histnum=${BASH_REMATCH[1]}
      __tandem_esc "${BASH_REMATCH[2]:0:4096}"
      builtin printf '%sL;%s;%s\a' "$__tandem_osc" "$__tandem_seq" "$REPLY"
    fi
    __tandem_redirects
  fi
  [[ $PS2 == *"$__tandem_ps2"* ]] || PS2=$__tandem_ps2$PS2
  if [[ -n $__tandem_user_pc ]]; then
    # Agent terminals: what the person's prompt hooks export (direnv) goes through the scrub
    # (the rc file's); what was exported before them (the agent's own commands) stays.
    local __tandem_snap=
    builtin declare -F __tandem_envscrub >/dev/null && __tandem_envsnap && __tandem_snap=$REPLY
    __tandem_status "$__tandem_ret"
    eval "$__tandem_user_pc"
    [[ -z $__tandem_snap ]] || { __tandem_envsnap; [[ $REPLY == "$__tandem_snap" ]]; } || __tandem_envscrub "$__tandem_snap"
  fi
  # shellcheck disable=SC2016  # $_ expands when the trap runs
  builtin trap '__tandem_debug "$_" && builtin trap - DEBUG; builtin : "$__tandem_last"' DEBUG
  __tandem_status "$__tandem_ret"
}
PROMPT_COMMAND=__tandem_precmd
[[ $PS2 == *"$__tandem_ps2"* ]] || PS2=$__tandem_ps2$PS2
