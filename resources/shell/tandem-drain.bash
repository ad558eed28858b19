# shellcheck shell=bash
# shellcheck disable=SC2154  # __tandem_osc, __tandem_seq and __tandem_drains come from the script that sources this one
# The prompt's drain of agent terminals, sourced by tandem.bash and tandem-legacy.bash (it parses
# in bash 3.2 too).
# Agent terminals, while the host's flag file exists (`__tandem_drains` names it: made just before
# an agent's input, or the emulator's answer to a program's question, goes to a running program):
# input a program left unread goes, not to this shell's line. A program that read part of a line
# (`head -c 6`) or none of it leaves the rest in the terminal, and the line editor would take a
# whole line left there as a command that nobody judged, and an answer's escape sequence as keys
# (readline's M-p for DECRQSS's ESC P: black-box rounds 13 and 14). Emptied up to a fence, not for
# a while: the F marker asks the host for the flag's nonce after a newline and an RS, and what the
# host wrote before it (all it wrote for the command) comes first. `read -n` reads with the line
# mode off, so a part line counts too; the newline ends a line the line mode overflowed, so the
# nonce waits in the terminal instead of being dropped (n_tty keeps one overflowing line's last
# character only). The P marker before it says the command ended: the host writes nothing more for
# it, and nothing it wrote after making the flag can come after this look at the flag.
__tandem_drain() {
  # bash 3 is not known to read to a delimiter with the line mode off: there nothing is emptied
  # (README, Known limitations). Only tandem-legacy.bash runs on a bash that old.
  (( BASH_VERSINFO[0] >= 4 )) || builtin return 0
  local __tandem_x __tandem_t='' __tandem_f='' __tandem_n=0
  IFS= builtin read -r __tandem_f < "$__tandem_drains" 2>/dev/null
  builtin printf '%sF;%s\a' "$__tandem_osc" "$__tandem_seq"
  # Reads of 4096 characters, each within 5 s: bash's -t bounds a whole read, and bash reads the
  # terminal a byte a call (black-box round 15 outlasted one read of a million 4-byte characters).
  # The host bounds what it writes unread (session.ts `maxUnreadInputBytes`); the nonce may
  # straddle two reads, so the last few characters count with the next.
  while (( __tandem_n++ < 4096 )) && IFS= builtin read -r -s -d $'\x1e' -n 4096 -t 5 __tandem_x; do
    __tandem_t=${__tandem_t: -64}$__tandem_x
    [[ -n $__tandem_f && $__tandem_t != *"$__tandem_f" ]] || builtin return 0
  done
}
