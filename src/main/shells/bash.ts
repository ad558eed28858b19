import { join } from 'node:path';
import type { LaunchContext, LaunchPlan, ShellDialect } from './dialect.js';
import { shQuote } from './dialect.js';
import { bashRedirects } from './redirect-snippets.js';
import { credentialCasePattern, credentialValueCasePattern, escapeFunction, exportLines, gitHookUnsetLine, keptCasePattern } from './posix-snippets.js';

/**
 * bash: PS0 prints the start marker and advances the sequence number by arithmetic expansion
 * (which runs in the shell itself, no fork); PROMPT_COMMAND prints the end marker first, with
 * the exit status it captured before anything else ran, then the command line from history.
 */
export function bashRc(ctx: LaunchContext): string {
  const lines: string[] = [
    `__tandem_secret=${shQuote(ctx.secret)}`,
    `builtin command rm -rf -- ${shQuote(ctx.rcDir)} 2>/dev/null`,
  ];
  if (ctx.startupFiles === 'user') {
    if (ctx.platform === 'darwin') {
      // macOS terminals start login shells: read what a login bash would.
      lines.push(
        '[ -r /etc/profile ] && . /etc/profile',
        'if [ -r ~/.bash_profile ]; then . ~/.bash_profile; elif [ -r ~/.bash_login ]; then . ~/.bash_login; elif [ -r ~/.profile ]; then . ~/.profile; fi',
      );
    } else {
      lines.push('[ -r ~/.bashrc ] && . ~/.bashrc');
    }
  }
  if (ctx.agent) {
    lines.push(gitHookUnsetLine, exportLines(ctx.reapplyEnv));
    if (ctx.historyFile) lines.push(`HISTFILE=${shQuote(ctx.historyFile)}`);
    lines.push(
      `for __tandem_v in $(compgen -e); do case "\${__tandem_v^^}" in ${keptCasePattern()}) ;; ${credentialCasePattern()}) unset "$__tandem_v";; *) case "\${!__tandem_v}" in ${credentialValueCasePattern()}) unset "$__tandem_v";; esac;; esac; done; unset __tandem_v`,
      // History expansion would turn `!` in an allowed line into another command.
      'set +H',
    );
  }
  lines.push(
    escapeFunction,
    // Baselines of the redirect report: what the startup files left.
    '__tandem_path0=$PATH',
    '__tandem_fnlist=$(builtin compgen -A function)',
    bashRedirects,
    '__tandem_seq=0',
    '__tandem_lined=0',
    '__tandem_histnum=',
    `__tandem_osc=$'\\e]7771;'"$__tandem_secret;"`,
    `__tandem_ps0="\\e]7771;$__tandem_secret;S;\\$((__tandem_seq+=1))\\a"`,
    `__tandem_ps2="\\[\\e]7771;$__tandem_secret;C\\a\\]"`,
    '__tandem_status() { return "$1"; }',
    '__tandem_user_pc=("${PROMPT_COMMAND[@]}")',
    String.raw`__tandem_reassert() {
  [[ $PS0 == *"$__tandem_ps0"* ]] || PS0=$__tandem_ps0$PS0
  [[ $PS2 == *"$__tandem_ps2"* ]] || PS2=$__tandem_ps2$PS2
}`,
    String.raw`__tandem_precmd() {
  local __tandem_ret=$? REPLY __tandem_h __tandem_cmd
  [[ -n \${__tandem_lastsig+x} ]] || __tandem_redirects
  __tandem_esc "$PWD"
  builtin printf '%sE;%s;%s;;%s\a' "$__tandem_osc" "$__tandem_seq" "$__tandem_ret" "$REPLY"
  if [[ $__tandem_seq != "$__tandem_lined" ]]; then
    __tandem_lined=$__tandem_seq
    # One subshell for the history line and the function list of the redirect report.
    __tandem_h=$(HISTTIMEFORMAT= builtin history 1; builtin printf '\x1f'; builtin compgen -A function)
    __tandem_fnlist=\${__tandem_h##*$'\x1f'}
    __tandem_h=\${__tandem_h%$'\x1f'*}
    __tandem_h=\${__tandem_h%$'\n'}
    if [[ $__tandem_h =~ ^\ *([0-9]+)\*?\ \ (.*)$ ]] && [[ \${BASH_REMATCH[1]} != "$__tandem_histnum" ]]; then
      __tandem_histnum=\${BASH_REMATCH[1]}
      __tandem_esc "\${BASH_REMATCH[2]:0:4096}"
      builtin printf '%sL;%s;%s\a' "$__tandem_osc" "$__tandem_seq" "$REPLY"
    fi
    __tandem_redirects
  fi
  __tandem_reassert
  local __tandem_pc
  for __tandem_pc in "\${__tandem_user_pc[@]}"; do
    __tandem_status "$__tandem_ret"
    eval "$__tandem_pc"
  done
  __tandem_status "$__tandem_ret"
}`.replace(/\\\$/g, '$'),
    'PROMPT_COMMAND=(__tandem_precmd)',
    '__tandem_reassert',
  );
  return `${lines.join('\n')}\n`;
}

export const bashDialect: ShellDialect = {
  name: 'bash',
  integration: 'full',
  bracketedPaste: true,
  plan(_shellPath: string, ctx: LaunchContext): LaunchPlan {
    const rcPath = join(ctx.rcDir, 'bashrc');
    // Debian's bash reads /etc/bash.bashrc even with --rcfile; a clean shell skips only the person's files.
    const args = ctx.startupFiles === 'clean' ? ['--noprofile', '--rcfile', rcPath, '-i'] : ['--rcfile', rcPath, '-i'];
    return { args, env: ctx.env, files: [{ path: rcPath, content: bashRc(ctx) }] };
  },
};
