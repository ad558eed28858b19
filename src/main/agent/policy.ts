/**
 * Approval of agent commands: `always` runs everything, `ask` asks for every write, and
 * `ask-unless-allowed` (the default) runs allow-listed command lines and asks for the rest.
 * The deny list overrides all three and is refused without asking.
 */
import type { SandboxMode } from '../sandbox/types.js';

export type ApprovalPolicy = 'always' | 'ask' | 'ask-unless-allowed';

export interface PolicySettings {
  policy: ApprovalPolicy;
  allow: string[];
  deny: string[];
  /** Unset: the default for new pairings (src/main/sandbox/agent-sandbox.ts). */
  sandbox?: SandboxMode;
  network?: boolean;
}

/** Read-only commands that run without asking under `ask-unless-allowed`. */
export const defaultAllowList = ['ls', 'pwd', 'cat', 'echo', 'head', 'tail', 'wc', 'which', 'whoami', 'date', 'git status', 'git diff', 'git show'];

/** Refused outright; the person can extend the list. */
export const defaultDenyList = ['sudo', 'su', 'rm -rf /', 'mkfs', 'dd', 'shutdown', 'reboot', 'halt', 'poweroff', 'chmod -R 777 /'];

export const defaultPolicy: PolicySettings = { policy: 'ask-unless-allowed', allow: defaultAllowList, deny: defaultDenyList };

export type Verdict = 'run' | 'ask' | 'deny';

function words(text: string): string[] {
  return text.trim().split(/\s+/).filter(Boolean);
}

/**
 * Whether `entry` (a command and optional leading arguments) starts `segment`, by whole words.
 * For the deny list, wrappers and assignments are skipped (`env X=1 sudo` still runs sudo); the
 * allow list matches the line as it stands, so `PATH=/tmp/x ls` or `env sh` is never allowed.
 */
function startsWithEntry(segment: string, entry: string, skipWrappers: boolean): boolean {
  const have = words(segment);
  const want = words(entry);
  if (want.length === 0 || want.length > have.length) return false;
  let start = 0;
  if (skipWrappers) {
    while (start < have.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(have[start]!) || ['env', 'command', 'exec', 'nohup', 'time'].includes(have[start]!)) && have[start] !== want[0]) start++;
  }
  return want.every((word, i) => have[start + i] === word || (skipWrappers && i === 0 && have[start + i]?.endsWith(`/${word}`)));
}

/** Splits a command line at the shell's command separators and substitutions. */
export function segments(commandLine: string): string[] {
  return commandLine
    .split(/\|\||&&|[;|&\n]|\$\(|`|\(|\)/)
    .map((part) => part.trim())
    .filter(Boolean);
}

/**
 * Characters that make a line more than the single command its first words name: separators,
 * redirections, substitutions, expansions, and any control character (a carriage return in
 * the text submits a second line; other controls edit the line as it is typed).
 */
const compound = /[;&|`<>$\x00-\x1f\x7f]/;

/**
 * Judges exactly what will be typed: the text, and named keys if any. Keys can erase and
 * retype a line, so a send with keys is allowed only under `always`.
 */
export function judge(commandLine: string, settings: PolicySettings, hasKeys = false): Verdict {
  const parts = segments(commandLine.replace(/[\r\x00-\x1f]/g, '\n'));
  if (settings.deny.some((entry) => parts.some((part) => startsWithEntry(part, entry, true)))) return 'deny';
  if (settings.policy === 'always') return 'run';
  if (settings.policy === 'ask' || hasKeys) return 'ask';
  if (compound.test(commandLine)) return 'ask';
  return settings.allow.some((entry) => startsWithEntry(commandLine, entry, false)) ? 'run' : 'ask';
}
