import { join } from 'node:path';
import { shellScriptPath } from '../resources.js';
import { capabilityNames } from './env.js';
import type { LaunchContext, LaunchPlan, ShellDialect } from './dialect.js';
import { shQuote } from './dialect.js';
import { emacsLineClear } from './line-clear.js';
import { credentialCasePattern, credentialValueCasePattern, exportLines, gitHookUnsetLine, keptCasePattern, keptNamesWord } from './posix-snippets.js';

/**
 * zsh reads its startup files from $ZDOTDIR: Tandem points it at a private directory whose
 * files read the person's own (from their ZDOTDIR or HOME); its .zshrc then sources the
 * integration, resources/shell/tandem.zsh (preexec/precmd hooks, the same for every terminal).
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

/** The startup files zsh reads from ZDOTDIR, which the plan writes into rcDir. */
const zshRcNames = ['.zshenv', '.zprofile', '.zshrc'] as const;

function zshrc(ctx: LaunchContext): string {
  const lines: string[] = [
    `typeset -g __tandem_secret=${shQuote(ctx.secret)}`,
    // The rc files go at once; an agent terminal's directory stays for its drain flag (tandem.zsh).
    ctx.drainFlag
      ? `command rm -f -- ${zshRcNames.map((name) => shQuote(join(ctx.rcDir, name))).join(' ')} 2>/dev/null`
      : `command rm -rf -- ${shQuote(ctx.rcDir)} 2>/dev/null`,
    'if [[ -n $__tandem_had_zd || $__tandem_user_zd != $HOME ]]; then ZDOTDIR=$__tandem_user_zd; else unset ZDOTDIR; fi',
    'unset __tandem_had_zd',
  ];
  if (ctx.startupFiles === 'user') lines.push('[[ -r ${ZDOTDIR:-$HOME}/.zshrc ]] && . ${ZDOTDIR:-$HOME}/.zshrc');
  if (ctx.agent) {
    lines.push(gitHookUnsetLine, exportLines(ctx.reapplyEnv));
    if (ctx.historyFile) lines.push(`HISTFILE=${shQuote(ctx.historyFile)}`);
    lines.push(
      'zmodload zsh/parameter 2>/dev/null',
      // The scrub, run now and again before each command (tandem.zsh's preexec), after the
      // person's precmd hooks that may export (direnv). What the startup files exported beyond
      // the kept names stays only as existing absolute paths (env.ts agentKeptNames); then
      // credentials by name and value. A readonly parameter cannot be unset, and trying aborts
      // the rc file (found black-box): it is left (README, Known limitations).
      `typeset -g __tandem_keep=${keptNamesWord(ctx.keepEnv)} __tandem_caps=${keptNamesWord(capabilityNames)}`,
      // `__tandem_envsnap` lists every exported NAME=value (in __tandem_snap); the scrub given one
      // leaves what is unchanged since (the agent's own exports), so after hooks it judges only what they set.
      "typeset -g __tandem_us=$'\\037' __tandem_snap=",
      '__tandem_envsnap() {',
      '  emulate -L zsh',
      '  local __tandem_v',
      '  __tandem_snap=$__tandem_us',
      '  for __tandem_v in ${(k)parameters[(R)*export*]}; do __tandem_snap+="$__tandem_v=${(P)__tandem_v}$__tandem_us"; done',
      '}',
      '__tandem_envscrub() {',
      '  emulate -L zsh',
      '  local __tandem_v __tandem_ok __tandem_e',
      '  for __tandem_v in ${(k)parameters[(R)*export*]}; do [[ -n $1 && $1 == *"$__tandem_us$__tandem_v=${(P)__tandem_v}$__tandem_us"* ]] && continue; [[ $__tandem_keep == *" $__tandem_v "* ]] && continue; [[ ${parameters[$__tandem_v]} == *readonly* ]] && continue; if [[ $__tandem_caps == *" $__tandem_v "* ]]; then unset $__tandem_v; continue; fi; [[ $__tandem_v == LC_* ]] && continue; __tandem_ok=${(P)__tandem_v:+1}; for __tandem_e in "${(@s.:.)${(P)__tandem_v}}"; do [[ $__tandem_e == /* && -e $__tandem_e ]] || __tandem_ok=; done; [[ -n $__tandem_ok ]] || unset $__tandem_v 2>/dev/null; done',
      `  for __tandem_v in \${(k)parameters[(R)*export*]}; do [[ -n $1 && $1 == *"$__tandem_us$__tandem_v=\${(P)__tandem_v}$__tandem_us"* ]] && continue; [[ \${parameters[$__tandem_v]} == *readonly* ]] && continue; case \${(U)__tandem_v} in (${keptCasePattern()}) ;; (${credentialCasePattern()}) unset $__tandem_v;; (*) case \${(P)__tandem_v} in (${credentialValueCasePattern()}) unset $__tandem_v;; esac;; esac; done`,
      '}',
      '__tandem_envscrub',
      // History expansion would turn `!` in an allowed line into another command.
      'unsetopt BANG_HIST',
      // Input a program left unread is emptied at the prompt, never run (tandem.zsh `__tandem_drain`).
      ...(ctx.drainFlag ? [`typeset -g __tandem_drains=${shQuote(ctx.drainFlag)}`] : []),
      // The partial-line mark would land inside the command's output, before precmd runs.
      'unsetopt prompt_sp',
    );
  }
  lines.push(`builtin . ${shQuote(shellScriptPath('tandem.zsh'))}`);
  return `${lines.join('\n')}\n`;
}

export const zshDialect: ShellDialect = {
  name: 'zsh',
  integration: 'full',
  bracketedPaste: true,
  rawLineEditor: true,
  processCwd: true,
  drainsUnread: () => true,
  fencesDrain: true,
  // zsh is read with the bash grammar's structure and the literal-word rule (parse-line.ts); its hash table is not reported.
  judge: { grammar: 'bash', words: 'posix', reportsRedirects: true, reportsHash: false },
  lineClear: () => emacsLineClear,
  plan(_shellPath: string, ctx: LaunchContext): LaunchPlan {
    const env: Record<string, string> = { ...ctx.env, ZDOTDIR: ctx.rcDir };
    delete env.TANDEM_USER_ZDOTDIR;
    if (ctx.env.ZDOTDIR !== undefined) env.TANDEM_USER_ZDOTDIR = ctx.env.ZDOTDIR;
    const content = { '.zshenv': zshenv, '.zprofile': zprofile, '.zshrc': zshrc };
    const files = zshRcNames.map((name) => ({ path: join(ctx.rcDir, name), content: content[name](ctx) }));
    return { args: ctx.platform === 'darwin' ? ['-l', '-i'] : ['-i'], env, files, keepsDir: Boolean(ctx.drainFlag) };
  },
};
