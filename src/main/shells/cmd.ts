import { win32 } from 'node:path';
import { credentialNames, credentialSuffixes, credentialValueGlobs } from './credentials.js';
import type { LaunchContext, LaunchPlan, ShellDialect } from './dialect.js';

/** The variable that carries the rc file's quoted path into `cmd /k` (cmd cannot take quoted argv from node-pty). */
export const cmdRcVariable = 'TANDEM_CMD_RC';

/**
 * Text inside `set "NAME=value"` in a batch file: `%` doubled; quotes, `&`, `|`, `<`, `>` and `^`
 * are literal inside the quotes. Line breaks cannot be represented.
 */
export function batchValue(value: string): string {
  if (/[\r\n]/.test(value)) throw new Error('A batch file cannot set a value with a line break.');
  return value.replace(/%/g, '%%');
}

/**
 * The end marker cmd prints with every prompt. PROMPT can print the secret, `$E` (ESC), a literal
 * BEL and the cwd (`$P`), but it cannot count or show %ERRORLEVEL% (expanded once, when PROMPT is
 * set): the sequence field is a constant (the session has to number these prompts itself) and
 * the exit code is empty, so `exitCode` is null on cmd.
 * `R` keeps the cwd raw and last, so a `;` in a Windows path stays in the cwd.
 */
export function cmdMarkerPrompt(secret: string): string {
  return `$E]7771;${secret};R;0;;$P\x07`;
}

/** findstr patterns matching `set` output lines of credential variables (the same list as the POSIX shells). */
function credentialFindstr(): string {
  const values = credentialValueGlobs.map((glob) => `^[^=]*=${glob.replace(/\./g, '\\.').replace(/\*/g, '.*')}`);
  const patterns = [...credentialNames.map((name) => `^${name}=`), ...credentialSuffixes.map((suffix) => `^[^=]*${suffix}=`), ...values];
  return patterns.map((pattern) => `/c:"${pattern}"`).join(' ');
}

/**
 * The rc batch file. Every line starts with `@` (no `echo off`, which would hide the interactive
 * prompt). It runs after the person's AutoRun commands, wraps their PROMPT, and finally deletes
 * its own directory: `(goto)` ends the batch first, so cmd never looks for the deleted file.
 */
export function cmdRc(ctx: LaunchContext): string {
  const lines: string[] = [`@set "${cmdRcVariable}="`];
  if (ctx.agent) {
    // Native programs that write bytes use the console code page: make it UTF-8.
    lines.push('@chcp 65001 >nul');
    for (const [name, value] of Object.entries({ ...ctx.reapplyEnv, NO_COLOR: '1' })) {
      // `set "X="` deletes X in cmd: an empty value set at spawn stays as it is.
      if (value !== '') lines.push(`@set "${batchValue(name)}=${batchValue(value)}"`);
    }
    lines.push(`@for /f "delims==" %%V in ('set ^| findstr /i /r ${credentialFindstr()}') do @set "%%V="`);
  }
  lines.push(
    '@if not defined PROMPT set "PROMPT=$P$G"',
    `@set "PROMPT=${cmdMarkerPrompt(ctx.secret)}%PROMPT%"`,
    `@(goto) 2>nul & rmdir /s /q "${batchValue(ctx.rcDir)}"`,
  );
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Windows cmd.exe: end markers only, with weaker evidence than the other shells. There is no
 * command-start hook, no exit code and no sequence number, and PROMPT is an ordinary environment
 * variable, so the secret in it is visible to the programs cmd starts.
 */
export const cmdDialect: ShellDialect = {
  name: 'cmd',
  integration: 'end-only',
  bracketedPaste: false,
  lineClear: () => null,
  plan(_shellPath: string, ctx: LaunchContext): LaunchPlan {
    const rcPath = win32.join(ctx.rcDir, 'tandem.cmd');
    // cmd expands the variable while it parses the /k command, quotes included, so a path with
    // spaces or `&` needs no argv quoting (node-pty would escape quotes as \" , which cmd keeps).
    const args = [...(ctx.startupFiles === 'clean' ? ['/d'] : []), '/k', `%${cmdRcVariable}%`];
    const env: Record<string, string> = { ...ctx.env, [cmdRcVariable]: `"${rcPath}"` };
    if (ctx.agent) env.NO_COLOR = '1';
    return { args, env, files: [{ path: rcPath, content: cmdRc(ctx) }] };
  },
};
