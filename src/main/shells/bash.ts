import { join } from 'node:path';
import { shellScriptPath } from '../resources.js';
import type { LaunchContext, LaunchPlan, ShellDialect } from './dialect.js';
import { shQuote } from './dialect.js';
import { emacsLineClear } from './line-clear.js';
import { bashVersion, legacyForced, needsLegacyIntegration } from './bash-version.js';
import { capabilityNames } from './env.js';
import { credentialCasePattern, credentialValueCasePattern, exportLines, gitHookUnsetLine, keptCasePattern, keptNamesWord } from './posix-snippets.js';

const rcName = 'bashrc';

/** Which integration script the rc file sources: chosen by the shell's own BASH_VERSINFO unless forced. */
export type BashIntegration = 'by-version' | 'legacy';

/**
 * bash: the per-terminal rc file (the marker secret, the person's startup files, and for agent
 * terminals the re-applied variables and the credential scrub), which then sources the
 * integration, resources/shell/tandem.bash: the same for every terminal.
 */
export function bashRc(ctx: LaunchContext, integration: BashIntegration = 'by-version'): string {
  // The rc file goes at once; its directory stays for the prompt's scratch file (tandem.bash
  // `__tandem_capture`, LaunchContext.scratch) and is removed when the terminal closes.
  const lines: string[] = [
    `__tandem_secret=${shQuote(ctx.secret)}`,
    `builtin command rm -f -- ${shQuote(join(ctx.rcDir, rcName))} 2>/dev/null`,
    `__tandem_scratch=${shQuote(ctx.scratch ?? '')}`,
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
      // The scrub, run now and again after each prompt's hooks (tandem.bash), which may export
      // later (direnv). What the startup files exported beyond the kept names stays only as
      // existing absolute paths (env.ts agentKeptNames); then credentials by name and value.
      // Names split on the default IFS, whatever a startup file set (found black-box: IFS=' '
      // kept every secret); names match credentials in any case (nocasematch is bash 3.1: bash
      // NEWS, bash-3.1 item p; `${v^^}` is 4.0).
      `__tandem_keep=${keptNamesWord(ctx.keepEnv)}; __tandem_caps=${keptNamesWord(capabilityNames)}`,
      '__tandem_paths() { local r=$1 e; [[ -n $r ]] || return 1; while :; do e=${r%%:*}; [[ $e == /* && -e $e ]] || return 1; [[ $r == *:* ]] || return 0; r=${r#*:}; done; }',
      // `__tandem_envsnap` puts every exported NAME=value in REPLY; the scrub given one leaves
      // what is unchanged since (the agent's own exports), so after hooks it judges only what
      // they set. `__tandem_enames` lists the exported names in REPLY: here in a subshell,
      // redefined by tandem.bash to read them back from its scratch file (no fork: with the
      // person's prompt hooks, three forks a prompt cost about 2.5 ms).
      "__tandem_us=$'\\037'",
      '__tandem_enames() { REPLY=$(builtin compgen -e); }',
      '__tandem_envsnap() { local IFS=$\' \\t\\n\' __tandem_v __tandem_s=$__tandem_us; __tandem_enames; for __tandem_v in $REPLY; do __tandem_s+="$__tandem_v=${!__tandem_v}$__tandem_us"; done; REPLY=$__tandem_s; }',
      '__tandem_envscrub() {',
      "  local IFS=$' \\t\\n' __tandem_v __tandem_nc= REPLY",
      '  __tandem_enames',
      '  for __tandem_v in $REPLY; do [[ -n $1 && $1 == *"$__tandem_us$__tandem_v=${!__tandem_v}$__tandem_us"* ]] && continue; case "$__tandem_keep" in *" $__tandem_v "*) continue;; esac; case "$__tandem_caps" in *" $__tandem_v "*) unset "$__tandem_v" 2>/dev/null; continue;; esac; case "$__tandem_v" in LC_*) continue;; esac; __tandem_paths "${!__tandem_v}" || unset "$__tandem_v" 2>/dev/null; done',
      '  shopt -q nocasematch && __tandem_nc=1; shopt -s nocasematch',
      '  __tandem_enames',
      `  for __tandem_v in $REPLY; do [[ -n $1 && $1 == *"$__tandem_us$__tandem_v=\${!__tandem_v}$__tandem_us"* ]] && continue; case "$__tandem_v" in ${keptCasePattern()}) ;; ${credentialCasePattern()}) unset "$__tandem_v" 2>/dev/null;; *) case "\${!__tandem_v}" in ${credentialValueCasePattern()}) unset "$__tandem_v" 2>/dev/null;; esac;; esac; done`,
      '  [[ -n $__tandem_nc ]] || shopt -u nocasematch',
      '}',
      '__tandem_envscrub',
      // History expansion would turn `!` in an allowed line into another command.
      'set +H',
      // Input a program left unread is emptied at the prompt, never run (tandem.bash `__tandem_drain`).
      ...(ctx.drainFlag ? [`__tandem_drains=${shQuote(ctx.drainFlag)}`] : []),
    );
  }
  // tandem.bash itself hands a bash older than 4.4 to tandem-legacy.bash (its first lines).
  lines.push(`builtin . ${shQuote(shellScriptPath(integration === 'legacy' ? 'tandem-legacy.bash' : 'tandem.bash'))}`);
  return `${lines.join('\n')}\n`;
}

function bashPlan(ctx: LaunchContext, integration: BashIntegration): LaunchPlan {
  const rcPath = join(ctx.rcDir, rcName);
  // Debian's bash reads /etc/bash.bashrc even with --rcfile; a clean shell skips only the person's files.
  const args = ctx.startupFiles === 'clean' ? ['--noprofile', '--rcfile', rcPath, '-i'] : ['--rcfile', rcPath, '-i'];
  // The directory stays for the prompt's scratch file (not the legacy script's) and the drain flag.
  return { args, env: ctx.env, files: [{ path: rcPath, content: bashRc(ctx, integration) }], keepsDir: integration !== 'legacy' || Boolean(ctx.drainFlag) };
}

export const bashDialect: ShellDialect = {
  name: 'bash',
  integration: 'full',
  bracketedPaste: true,
  rawLineEditor: true,
  processCwd: true,
  drainsUnread: () => true,
  fencesDrain: true,
  judge: { grammar: 'bash', words: 'posix', reportsRedirects: true, reportsHash: true },
  lineClear: () => emacsLineClear,
  plan(_shellPath: string, ctx: LaunchContext): LaunchPlan {
    return bashPlan(ctx, 'by-version');
  },
};

/**
 * bash before 4.4 (macOS's /bin/bash is 3.2): resources/shell/tandem-legacy.bash, and no
 * bracketed paste, which readline gained with bash 4.4 (bash CHANGES, bash-4.4-alpha,
 * readline item b): multi-line text goes in with Ctrl+V before each newline instead.
 */
export const bashLegacyDialect: ShellDialect = {
  name: 'bash',
  integration: 'full',
  bracketedPaste: false,
  quotedInsert: true,
  rawLineEditor: true,
  processCwd: true,
  judge: { grammar: 'bash', words: 'posix', reportsRedirects: true, reportsHash: true },
  lineClear: () => emacsLineClear,
  plan(_shellPath: string, ctx: LaunchContext): LaunchPlan {
    return bashPlan(ctx, 'legacy');
  },
};

/** The bash dialect for this executable: legacy below 4.4, or when a test forces it. */
export function bashDialectFor(path: string): ShellDialect {
  if (legacyForced()) return bashLegacyDialect;
  const version = bashVersion(path);
  return version && needsLegacyIntegration(version) ? bashLegacyDialect : bashDialect;
}
