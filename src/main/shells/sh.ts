import { join } from 'node:path';
import type { LaunchContext, LaunchPlan, ShellDialect } from './dialect.js';
import { shQuote } from './dialect.js';
import { credentialCasePattern, credentialValueCasePattern, exportLines, gitHookUnsetLine, keptCasePattern } from './posix-snippets.js';

/**
 * POSIX sh (dash) has no pre-command hook: the integration is an end marker in PS1, whose
 * arithmetic expansion advances a per-prompt sequence number. The rc file reaches the shell
 * through $ENV; it deletes itself and unsets ENV.
 */
function shRc(ctx: LaunchContext, userEnvFile: string | undefined): string {
  const lines: string[] = [
    `__tandem_secret=${shQuote(ctx.secret)}`,
    `rm -rf -- ${shQuote(ctx.rcDir)} 2>/dev/null`,
    'unset ENV',
  ];
  if (ctx.startupFiles === 'user' && userEnvFile) lines.push(`ENV=${shQuote(userEnvFile)}; [ -r "$ENV" ] && . "$ENV"`);
  if (ctx.agent) {
    lines.push(gitHookUnsetLine, exportLines(ctx.reapplyEnv));
    lines.push(
      `for __tandem_v in $(export -p | sed -n 's/^export \\([A-Za-z_][A-Za-z0-9_]*\\)=.*/\\1/p'); do eval "__tandem_x=\\"\\\${$__tandem_v}\\""; case "$(printf %s "$__tandem_v" | tr a-z A-Z)" in ${keptCasePattern()}) ;; ${credentialCasePattern()}) unset "$__tandem_v";; *) case "$__tandem_x" in ${credentialValueCasePattern()}) unset "$__tandem_v";; esac;; esac; done; unset __tandem_v __tandem_x`,
    );
  }
  // Literal ESC and BEL: dash does not decode backslash escapes in prompts.
  lines.push('__tandem_seq=0', `PS1='\x1b]7771;'"$__tandem_secret"';R;$((__tandem_seq+=1));$?;$PWD\x07'"\${PS1-\\$ }"`);
  return `${lines.join('\n')}\n`;
}

export const shDialect: ShellDialect = {
  name: 'sh',
  integration: 'end-only',
  bracketedPaste: false,
  plan(_shellPath: string, ctx: LaunchContext): LaunchPlan {
    const rcPath = join(ctx.rcDir, 'shrc');
    const env = { ...ctx.env, ENV: rcPath };
    return { args: ['-i'], env, files: [{ path: rcPath, content: shRc(ctx, ctx.env.ENV) }] };
  },
};
