import { join } from 'node:path';
import { shellScriptPath } from '../resources.js';
import type { LaunchContext, LaunchPlan, ShellDialect } from './dialect.js';
import { shQuote } from './dialect.js';
import { killCharLineClear } from './line-clear.js';
import { credentialCasePattern, credentialValueCasePattern, exportLines, gitHookUnsetLine, keptCasePattern } from './posix-snippets.js';

/**
 * POSIX sh (dash) has no pre-command hook: the integration (resources/shell/tandem.sh) is an
 * end marker in PS1. The rc file reaches the shell through $ENV; it deletes itself, unsets
 * ENV, and sources the integration last.
 */
function shRc(ctx: LaunchContext, userEnvFile: string | undefined): string {
  const lines: string[] = [`__tandem_secret=${shQuote(ctx.secret)}`, `rm -rf -- ${shQuote(ctx.rcDir)} 2>/dev/null`, 'unset ENV'];
  if (ctx.startupFiles === 'user' && userEnvFile) lines.push(`ENV=${shQuote(userEnvFile)}; [ -r "$ENV" ] && . "$ENV"`);
  if (ctx.agent) {
    lines.push(gitHookUnsetLine, exportLines(ctx.reapplyEnv));
    lines.push(
      `for __tandem_v in $(export -p | sed -n 's/^export \\([A-Za-z_][A-Za-z0-9_]*\\)=.*/\\1/p'); do eval "__tandem_x=\\"\\\${$__tandem_v}\\""; case "$(printf %s "$__tandem_v" | tr a-z A-Z)" in ${keptCasePattern()}) ;; ${credentialCasePattern()}) unset "$__tandem_v";; *) case "$__tandem_x" in ${credentialValueCasePattern()}) unset "$__tandem_v";; esac;; esac; done; unset __tandem_v __tandem_x`,
    );
  }
  lines.push(`. ${shQuote(shellScriptPath('tandem.sh'))}`);
  return `${lines.join('\n')}\n`;
}

export const shDialect: ShellDialect = {
  name: 'sh',
  integration: 'end-only',
  bracketedPaste: false,
  canonicalLine: true,
  processCwd: true,
  // The integration reports nothing after commands (tandem.sh).
  judge: { grammar: 'bash', words: 'posix', reportsRedirects: false, reportsHash: false },
  lineClear: () => killCharLineClear,
  plan(_shellPath: string, ctx: LaunchContext): LaunchPlan {
    const rcPath = join(ctx.rcDir, 'shrc');
    const env = { ...ctx.env, ENV: rcPath };
    return { args: ['-i'], env, files: [{ path: rcPath, content: shRc(ctx, ctx.env.ENV) }] };
  },
};
