/**
 * Approval of agent commands: `always` runs everything, `ask` asks for every write, and
 * `ask-unless-allowed` (the default) runs allow-listed command lines and asks for the rest.
 * The deny list overrides all three and is refused without asking.
 */
export type ApprovalPolicy = 'always' | 'ask' | 'ask-unless-allowed';

export interface PolicySettings {
  policy: ApprovalPolicy;
  allow: string[];
  deny: string[];
}

/** Read-only commands that run without asking under `ask-unless-allowed`. */
export const defaultAllowList = [
  'ls',
  'pwd',
  'cat',
  'echo',
  'head',
  'tail',
  'wc',
  'which',
  'whoami',
  'date',
  'env',
  'git status',
  'git diff',
  'git log',
  'git show',
  'git branch',
];

/** Refused outright; the person can extend the list. */
export const defaultDenyList = ['sudo', 'su', 'rm -rf /', 'mkfs', 'dd', 'shutdown', 'reboot', 'halt', 'poweroff', 'chmod -R 777 /'];

export const defaultPolicy: PolicySettings = { policy: 'ask-unless-allowed', allow: defaultAllowList, deny: defaultDenyList };

export type Verdict = 'run' | 'ask' | 'deny';

function words(text: string): string[] {
  return text.trim().split(/\s+/).filter(Boolean);
}

/** Whether `entry` (a command and optional leading arguments) starts `segment`, by whole words. */
function startsWithEntry(segment: string, entry: string): boolean {
  const have = words(segment);
  const want = words(entry);
  if (want.length === 0 || want.length > have.length) return false;
  // `env X=1 sudo ...` and `command sudo` still run sudo: skip wrappers and assignments.
  let start = 0;
  while (start < have.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(have[start]!) || ['env', 'command', 'exec', 'nohup', 'time'].includes(have[start]!)) && have[start] !== want[0]) start++;
  return want.every((word, i) => have[start + i] === word || (i === 0 && have[start + i]?.endsWith(`/${word}`)));
}

/** Splits a command line at the shell's command separators and substitutions. */
export function segments(commandLine: string): string[] {
  return commandLine
    .split(/\|\||&&|[;|&\n]|\$\(|`|\(|\)/)
    .map((part) => part.trim())
    .filter(Boolean);
}

/** Characters that make a line more than the single command its first words name. */
const compound = /[;&|`<>\n]|\$\(/;

export function judge(commandLine: string, settings: PolicySettings): Verdict {
  const parts = segments(commandLine);
  if (settings.deny.some((entry) => parts.some((part) => startsWithEntry(part, entry)))) return 'deny';
  if (settings.policy === 'always') return 'run';
  if (settings.policy === 'ask') return 'ask';
  if (compound.test(commandLine)) return 'ask';
  return settings.allow.some((entry) => startsWithEntry(commandLine, entry)) ? 'run' : 'ask';
}
