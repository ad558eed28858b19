# shellcheck shell=sh
# shellcheck disable=SC2154  # __tandem_secret comes from the rc file that sources this script
# Tandem's shell integration for POSIX sh (dash), sourced by the per-terminal rc file Tandem
# generates (src/main/shells/sh.ts), which holds the per-terminal data. sh has no pre-command
# hook: the integration is an end marker in PS1, whose arithmetic expansion advances a
# per-prompt sequence number.
# The ESC and BEL below are literal bytes: dash does not decode backslash escapes in prompts.
__tandem_seq=0
# shellcheck disable=SC2025  # dash has no \[ \] in prompts; the marker is zero-width in the terminal
PS1=']7771;'"$__tandem_secret"';R;$((__tandem_seq+=1));$?;$PWD'"${PS1-\$ }"
