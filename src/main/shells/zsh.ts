import { join } from 'node:path';
import type { LaunchContext, LaunchPlan, ShellDialect } from './dialect.js';
import { shQuote } from './dialect.js';
import { zshRedirects } from './redirect-snippets.js';
import { credentialCasePattern, credentialValueCasePattern, escapeFunction, exportLines, gitHookUnsetLine, keptCasePattern } from './posix-snippets.js';

/**
 * zsh reads its startup files from $ZDOTDIR: Tandem points it at a private directory whose
 * files read the person's own (from their ZDOTDIR or HOME), then add preexec/precmd hooks.
 */
function zshenv(ctx: LaunchContext): string {
  return [
    'if [[ -n ${TANDEM_USER_ZDOTDIR+x} ]]; then __tandem_had_zd=1; ZDOTDIR=$TANDEM_USER_ZDOTDIR; else __tandem_had_zd=; ZDOTDIR=$HOME; fi',
    'unset TANDEM_USER_ZDOTDIR',
    ctx.startupFiles === 'user' ? '[[ -r $ZDOTDIR/.zshenv ]] && . $ZDOTDIR/.zshenv' : '',
    '__tandem_user_zd=$ZDOTDIR',
    `ZDOTDIR=${shQuote(ctx.rcDir)}`,
    '',
  ].join('\n');
}

function zprofile(ctx: LaunchContext): string {
  return ctx.startupFiles === 'user' ? '[[ -r $__tandem_user_zd/.zprofile ]] && ZDOTDIR=$__tandem_user_zd . $__tandem_user_zd/.zprofile\n' : '';
}

function zshrc(ctx: LaunchContext): string {
  const lines: string[] = [
    `typeset -g __tandem_secret=${shQuote(ctx.secret)}`,
    `command rm -rf -- ${shQuote(ctx.rcDir)} 2>/dev/null`,
    'if [[ -n $__tandem_had_zd || $__tandem_user_zd != $HOME ]]; then ZDOTDIR=$__tandem_user_zd; else unset ZDOTDIR; fi',
    'unset __tandem_had_zd',
  ];
  if (ctx.startupFiles === 'user') lines.push('[[ -r ${ZDOTDIR:-$HOME}/.zshrc ]] && . ${ZDOTDIR:-$HOME}/.zshrc');
  if (ctx.agent) {
    lines.push(gitHookUnsetLine, exportLines(ctx.reapplyEnv));
    if (ctx.historyFile) lines.push(`HISTFILE=${shQuote(ctx.historyFile)}`);
    lines.push(
      'zmodload zsh/parameter 2>/dev/null',
      `for __tandem_v in \${(k)parameters[(R)*export*]}; do case \${(U)__tandem_v} in (${keptCasePattern()}) ;; (${credentialCasePattern()}) unset $__tandem_v;; (*) case \${(P)__tandem_v} in (${credentialValueCasePattern()}) unset $__tandem_v;; esac;; esac; done; unset __tandem_v`,
      // History expansion would turn `!` in an allowed line into another command.
      'unsetopt BANG_HIST',
      // The partial-line mark would land inside the command's output, before precmd runs.
      'unsetopt prompt_sp',
    );
  }
  lines.push(
    escapeFunction,
    // Baseline of the redirect report: the PATH the startup files left.
    'zmodload zsh/parameter 2>/dev/null',
    'typeset -g __tandem_path0=$PATH',
    zshRedirects,
    'typeset -gi __tandem_seq=0',
    'typeset -g __tandem_cmd=',
    `typeset -g __tandem_osc=$'\\e]7771;'"$__tandem_secret;"`,
    `typeset -g __tandem_ps2="%{"$'\\e]7771;'"$__tandem_secret;C"$'\\a'"%}"`,
    String.raw`__tandem_reassert() {
  (( \${precmd_functions[(Ie)__tandem_precmd]} )) || precmd_functions=(__tandem_precmd $precmd_functions)
  (( \${preexec_functions[(Ie)__tandem_preexec]} )) || preexec_functions+=(__tandem_preexec)
  [[ $PS2 == *"$__tandem_ps2"* ]] || PS2=$__tandem_ps2$PS2
}`,
    String.raw`__tandem_preexec() {
  local REPLY
  (( __tandem_seq++ ))
  __tandem_esc "\${1[1,4096]}"
  __tandem_cmd=$REPLY
  print -rn -- "\${__tandem_osc}S;\${__tandem_seq};\${__tandem_cmd}"$'\a'
  __tandem_reassert
}`,
    String.raw`__tandem_precmd() {
  local __tandem_ret=$? REPLY
  __tandem_redirects
  __tandem_esc "$PWD"
  print -rn -- "\${__tandem_osc}E;\${__tandem_seq};\${__tandem_ret};\${__tandem_cmd};$REPLY"$'\a'
  __tandem_reassert
  return $__tandem_ret
}`,
    '__tandem_reassert',
  );
  return `${lines.join('\n').replace(/\\\$/g, '$')}\n`;
}

export const zshDialect: ShellDialect = {
  name: 'zsh',
  integration: 'full',
  bracketedPaste: true,
  plan(_shellPath: string, ctx: LaunchContext): LaunchPlan {
    const env: Record<string, string> = { ...ctx.env, ZDOTDIR: ctx.rcDir };
    delete env.TANDEM_USER_ZDOTDIR;
    if (ctx.env.ZDOTDIR !== undefined) env.TANDEM_USER_ZDOTDIR = ctx.env.ZDOTDIR;
    const files = [
      { path: join(ctx.rcDir, '.zshenv'), content: zshenv(ctx) },
      { path: join(ctx.rcDir, '.zprofile'), content: zprofile(ctx) },
      { path: join(ctx.rcDir, '.zshrc'), content: zshrc(ctx) },
    ];
    return { args: ctx.platform === 'darwin' ? ['-l', '-i'] : ['-i'], env, files };
  },
};
