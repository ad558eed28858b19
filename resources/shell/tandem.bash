# shellcheck shell=bash
# shellcheck disable=SC2154  # __tandem_secret comes from the rc file that sources this script
# Tandem's shell integration for bash, sourced by the per-terminal rc file Tandem generates
# (src/main/shells/bash.ts) after the person's startup files ran. Per-terminal data (the marker
# secret, the rc directory, re-applied variables, the credential scrub) stays in that 0600
# file: this script is the same for every terminal.
#
# PS0 prints the start marker and advances the sequence number by arithmetic expansion (which
# runs in the shell itself, no fork); PROMPT_COMMAND prints the end marker first, with the exit
# status it captured before anything else ran, then the command line from history.

# PS0 and `local -` arrived in bash 4.4 (bash NEWS, bash-4.4 items jj and s); an older bash
# (macOS's /bin/bash is 3.2) takes tandem-legacy.bash, beside this file. Sourced files run one
# command at a time, so nothing below is parsed there. BASH_VERSINFO is bash 2.0, BASH_SOURCE 3.0.
if (( BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 4) )); then
  builtin . "${BASH_SOURCE[0]%/*}/tandem-legacy.bash"
  builtin return
fi

# The percent-encoding of marker fields (parameter expansion, no fork); tandem.zsh has the same.
__tandem_esc() {
  REPLY=$1
  REPLY=${REPLY//\%/%25}; REPLY=${REPLY//;/%3B}; REPLY=${REPLY//$'\a'/%07}
  REPLY=${REPLY//$'\e'/%1B}; REPLY=${REPLY//$'\n'/%0A}; REPLY=${REPLY//$'\r'/%0D}
}
# Baselines of the redirect report: what the startup files left (one subshell for both lists).
__tandem_path0=$PATH
__tandem_fnlist=$(builtin compgen -b; builtin printf '\x1f'; builtin compgen -A function)
__tandem_bilist=${__tandem_fnlist%%$'\x1f'*}
__tandem_builtins0=$'\n'$__tandem_bilist$'\n'
__tandem_fnlist=${__tandem_fnlist#*$'\x1f'}
# The redirect report (src/main/terminal/redirect-report.ts) from __tandem_fnlist and
# __tandem_bilist (one name a line, refreshed with the history line by one capture), the
# command hash table (BASH_CMDS: a name `hash -p` sent elsewhere than a PATH search would) and
# __tandem_path0; it follows the end marker. At most about 9,000 characters, then incomplete.
__tandem_redirects() {
  local REPLY __tandem_k __tandem_v __tandem_d __tandem_p __tandem_e __tandem_flags='' __tandem_na=0 __tandem_nh=0 __tandem_nb=0 __tandem_list='' __tandem_dirs __tandem_names
  # Lists split by IFS with globbing off, not read from here-strings: a here-string is a pipe
  # (or a temporary file) on the shell's stdin while the loop runs.
  local - IFS
  set -f
  [[ $PATH == "$__tandem_path0" ]] || __tandem_flags=p
  # An empty or relative entry finds programs in the current folder (the workspace's own `ls`).
  [[ :$PATH: == *::* || :$PATH: == *:[!/]* ]] && __tandem_flags+=r
  __tandem_flags+=${__tandem_blind-}
  # The state in one string that no other state spells the same: values quoted one by one
  # (joined bare, `zz='q x;' ls=ls` and `zz=q ls='x; ls'` read alike), the builtin list by its
  # length (alias names hold no blank, `|` or quote).
  local __tandem_hk=("${!BASH_CMDS[@]}")
  __tandem_k="$__tandem_flags|${!BASH_ALIASES[*]}|${BASH_ALIASES[*]@Q}|${__tandem_hk[*]@Q}|${BASH_CMDS[*]@Q}|${#__tandem_bilist}|$__tandem_bilist|$__tandem_fnlist"
  if [[ $__tandem_k == "$__tandem_lastsig" ]]; then builtin printf '%sD;%s;=\a' "$__tandem_osc" "$__tandem_seq"; return; fi
  __tandem_lastsig=$__tandem_k
  # Each entry at most 1,024 characters encoded, the list at most about 9,000: under the host's
  # 16 KiB marker bound, past which a report would be dropped as output and a later `=` would
  # stand for the report before it.
  for __tandem_k in "${!BASH_ALIASES[@]}"; do
    __tandem_esc "$__tandem_k"; __tandem_e=$REPLY
    __tandem_esc "${BASH_ALIASES[$__tandem_k]}"
    if (( ${#__tandem_list} > 8000 || ${#__tandem_e} + ${#REPLY} > 1024 )); then __tandem_flags+=t; break; fi
    __tandem_list+=";$__tandem_e;$REPLY"
    (( __tandem_na++ ))
  done
  IFS=:
  # shellcheck disable=SC2206  # split on purpose (IFS set, globbing off)
  __tandem_dirs=($PATH)
  IFS=$'\n'
  for __tandem_k in "${!BASH_CMDS[@]}"; do
    __tandem_v=${BASH_CMDS[$__tandem_k]} __tandem_e=
    for __tandem_d in "${__tandem_dirs[@]}"; do
      # The path as bash joins it: an empty element is ".", and a trailing slash is not doubled.
      __tandem_p=${__tandem_d:-.}
      [[ $__tandem_p == */ ]] || __tandem_p+=/
      if [[ -f $__tandem_p$__tandem_k && -x $__tandem_p$__tandem_k ]]; then __tandem_e=$__tandem_p$__tandem_k; break; fi
    done
    [[ $__tandem_v == "$__tandem_e" ]] && continue
    __tandem_esc "$__tandem_k"; __tandem_e=$REPLY
    __tandem_esc "$__tandem_v"
    if (( ${#__tandem_list} > 8000 || ${#__tandem_e} + ${#REPLY} > 1024 )); then __tandem_flags+=t; break; fi
    __tandem_list+=";$__tandem_e;$REPLY"
    (( __tandem_nh++ ))
  done
  # Builtins loaded since the startup files ran (enable -f).
  # shellcheck disable=SC2206  # split on purpose (IFS set, globbing off)
  __tandem_names=($__tandem_bilist)
  for __tandem_k in "${__tandem_names[@]}"; do
    [[ -z $__tandem_k || $__tandem_builtins0 == *$'\n'"$__tandem_k"$'\n'* ]] && continue
    __tandem_esc "$__tandem_k"
    if (( ${#__tandem_list} > 8000 || ${#REPLY} > 1024 )); then __tandem_flags+=t; break; fi
    __tandem_list+=";$REPLY"
    (( __tandem_nb++ ))
  done
  # shellcheck disable=SC2206  # split on purpose (IFS set, globbing off)
  __tandem_names=($__tandem_fnlist)
  for __tandem_k in "${__tandem_names[@]}"; do
    [[ -z $__tandem_k || $__tandem_k == _* ]] && continue
    __tandem_esc "$__tandem_k"
    if (( ${#__tandem_list} > 8000 || ${#REPLY} > 1024 )); then __tandem_flags+=t; break; fi
    __tandem_list+=";$REPLY"
  done
  builtin printf '%sD;%s;%s;%s;0;%s;%s%s\a' "$__tandem_osc" "$__tandem_seq" "$__tandem_flags" "$__tandem_na" "$__tandem_nh" "$__tandem_nb" "$__tandem_list"
}
# Output of builtins read back without a fork: bash 5.2 has no other way to capture it than a
# subshell (`$(...)`), and forking bash costs about 4 ms here, on every prompt, in front of the
# next command. The rc file names a regular file in a 0700 directory of this user's own (the
# terminal's rc directory, removed when it closes; a workspace-write confined terminal's own
# /tmp); it is used only while that still holds (another user may have made a directory of the
# same name after ours went: nothing is opened through it), else a subshell as before. Any
# process of the same user reaches either medium (the subshell's pipe too, through
# /proc/PID/fd), so this takes nothing from the report's trust. What was written counts only
# whole: each write succeeded and the NUL after them was read back (compgen reports no write
# error, so a full disk would otherwise cut the function list short). Only a regular file is
# opened: a FIFO put in its place would block the prompt. `>|` writes through noclobber.
# Status 1: the producer failed either way.
__tandem_sdir=${__tandem_scratch%/*}
__tandem_usable() {
  [[ -n $__tandem_scratch && ! -L $__tandem_sdir && -O $__tandem_sdir && ( ! -e $__tandem_scratch || ( -f $__tandem_scratch && ! -L $__tandem_scratch ) ) ]]
}
# A write past a `ulimit -f` raises SIGXFSZ, which ends a shell that does not catch it: caught,
# the write fails instead (and the subshell takes over). A trap that runs a command, unlike an
# ignored signal, is not handed down to the programs the shell starts.
[[ -n ${__tandem_scratch-} && -z $(builtin trap -p XFSZ) ]] && builtin trap -- 'builtin :' XFSZ
if [[ -n ${__tandem_scratch-} ]] && __tandem_usable && { builtin true >|"$__tandem_scratch"; } 2>/dev/null; then :; else __tandem_scratch=; fi
__tandem_capture() {
  if __tandem_usable && [[ -f $__tandem_scratch ]]; then
    if { "$@" && builtin printf '\0'; } 2>/dev/null >|"$__tandem_scratch" && IFS= builtin read -r -d '' REPLY <"$__tandem_scratch"; then
      builtin true >|"$__tandem_scratch"
      REPLY=${REPLY%$'\n'}
      builtin return 0
    fi
    { builtin true >|"$__tandem_scratch"; } 2>/dev/null
  fi
  REPLY=$("$@")
}
# The builtin and function lists of the redirect report and the history line, one capture. The
# lists must come whole; the history line may be missing (`enable -n history`), then only the
# line is lost, not the report. The line comes last, so a \x1f typed in it splits nothing.
__tandem_lists() {
  builtin compgen -b && builtin printf '\x1f' && builtin compgen -A function && builtin printf '\x1f' || builtin return
  HISTTIMEFORMAT='' builtin history 1 2>/dev/null
  builtin return 0
}
# REPLY of __tandem_lists into its three parts. Word splitting on \x1f (linear), not pattern
# removal: `${h##*$'\x1f'}` matches every prefix against the pattern, about 0.3 ms a prompt for
# the lists of a bare bash.
__tandem_split() {
  local - IFS=$'\x1f' __tandem_parts
  set -f
  # shellcheck disable=SC2206  # split on purpose (IFS set, globbing off)
  __tandem_parts=($REPLY)
  __tandem_bilist=${__tandem_parts[0]-}
  __tandem_fnlist=${__tandem_parts[1]-}
  __tandem_h=${REPLY:${#__tandem_bilist}+${#__tandem_fnlist}+2}
  __tandem_fnlist=${__tandem_fnlist%$'\n'}
}
# The exported names for the rc file's scrub (src/main/shells/bash.ts), without its subshell.
builtin declare -F __tandem_enames >/dev/null && __tandem_enames() { __tandem_capture builtin compgen -e; }
__tandem_seq=0
__tandem_lined=0
__tandem_histnum=
__tandem_osc=$'\e]7771;'"$__tandem_secret;"
__tandem_ps0="\e]7771;$__tandem_secret;S;\$((__tandem_seq+=1))\a"
__tandem_ps2="\[\e]7771;$__tandem_secret;C\a\]"
__tandem_status() { return "$1"; }
__tandem_user_pc=("${PROMPT_COMMAND[@]}")
__tandem_reassert() {
  [[ $PS0 == *"$__tandem_ps0"* ]] || PS0=$__tandem_ps0$PS0
  [[ $PS2 == *"$__tandem_ps2"* ]] || PS2=$__tandem_ps2$PS2
}
# Agent terminals: what a program left unread is emptied at the prompt (tandem-drain.bash).
builtin . "${BASH_SOURCE[0]%/*}/tandem-drain.bash"
__tandem_precmd() {
  local __tandem_ret=$? REPLY __tandem_h __tandem_cmd
  if [[ -n ${__tandem_drains-} ]]; then
    builtin printf '%sP;%s\a' "$__tandem_osc" "$__tandem_seq"
    [[ ! -e $__tandem_drains ]] || __tandem_drain
  fi
  [[ -n ${__tandem_lastsig+x} ]] || __tandem_redirects
  __tandem_esc "$PWD"
  builtin printf '%sE;%s;%s;;%s\a' "$__tandem_osc" "$__tandem_seq" "$__tandem_ret" "$REPLY"
  if [[ $__tandem_seq != "$__tandem_lined" ]]; then
    __tandem_lined=$__tandem_seq
    # Lists that did not come (a builtin disabled with `enable -n`) make the report incomplete.
    __tandem_blind=
    __tandem_capture __tandem_lists || __tandem_blind=t
    __tandem_split
    if [[ $__tandem_h =~ ^\ *([0-9]+)\*?\ \ (.*)$ ]] && [[ ${BASH_REMATCH[1]} != "$__tandem_histnum" ]]; then
      __tandem_histnum=${BASH_REMATCH[1]}
      __tandem_esc "${BASH_REMATCH[2]:0:4096}"
      builtin printf '%sL;%s;%s\a' "$__tandem_osc" "$__tandem_seq" "$REPLY"
    fi
    __tandem_redirects
  fi
  __tandem_reassert
  local __tandem_pc __tandem_snap=
  # Agent terminals: what the person's prompt hooks export (direnv) goes through the scrub
  # (the rc file's); what was exported before them (the agent's own commands) stays.
  if [[ ${#__tandem_user_pc[@]} -gt 0 ]] && builtin declare -F __tandem_envscrub >/dev/null; then __tandem_envsnap; __tandem_snap=$REPLY; fi
  for __tandem_pc in "${__tandem_user_pc[@]}"; do
    __tandem_status "$__tandem_ret"
    eval "$__tandem_pc"
  done
  # Nothing exported or changed by the hooks (the usual prompt): nothing for the scrub to judge.
  [[ -z $__tandem_snap ]] || { __tandem_envsnap; [[ $REPLY == "$__tandem_snap" ]]; } || __tandem_envscrub "$__tandem_snap"
  __tandem_status "$__tandem_ret"
}
# Quoted: bash expands aliases in its prompt commands, and an alias of this name would run first.
PROMPT_COMMAND=('\__tandem_precmd')
__tandem_reassert
