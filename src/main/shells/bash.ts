import { join } from 'node:path';
import { shellScriptPath } from '../resources.js';
import type { LaunchContext, LaunchPlan, ShellDialect } from './dialect.js';
import { shQuote } from './dialect.js';
import { credentialCasePattern, credentialValueCasePattern, exportLines, gitHookUnsetLine, keptCasePattern } from './posix-snippets.js';

/**
 * bash: the per-terminal rc file (the marker secret, the person's startup files, and for agent
 * terminals the re-applied variables and the credential scrub), which then sources the
 * integration, resources/shell/tandem.bash: the same for every terminal.
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
  lines.push(`builtin . ${shQuote(shellScriptPath('tandem.bash'))}`);
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
