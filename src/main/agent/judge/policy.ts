import { defaultAllowList as argumentAwareDefaults } from './allow-entries.js';
import { judgeAllowed, type LineContext } from './judge-line.js';

/**
 * Approval of agent commands: `always` runs everything, `ask` asks for every write, and
 * `ask-unless-allowed` (the default) runs allow-listed command lines and asks for the rest.
 * The deny list overrides all three and is refused without asking.
 */
import type { SandboxMode } from '../../sandbox/types.js';

export type ApprovalPolicy = 'always' | 'ask' | 'ask-unless-allowed';

export interface PolicySettings {
  policy: ApprovalPolicy;
  allow: string[];
  deny: string[];
  /** Unset: the default for new pairings (src/main/sandbox/agent-sandbox.ts). */
  sandbox?: SandboxMode;
  network?: boolean;
  /** Paths of the person's home a confined terminal may read beyond the defaults (`~/x`). */
  homeReadable?: string[];
  /** Hosts a confined terminal's proxy lets through; unset or empty: any public host (src/main/sandbox/proxy.ts). */
  networkDomains?: string[];
  /**
   * The agent's project (a real path): the folder the person confirmed on the pairing card, set
   * in the agents panel, or the first acceptable folder a bridge of the agent claimed
   * (open-workspace.ts `notAProject`). Unset: none yet, and every open asks.
   */
  project?: string;
}

/** Read-only commands, their arguments checked, that run without asking under `ask-unless-allowed` (judge/allow-entries.ts). */
export const defaultAllowList: string[] = [...argumentAwareDefaults];

/** Refused outright; the person can extend the list. */
export const defaultDenyList = ['sudo', 'su', 'rm -rf /', 'mkfs', 'dd', 'shutdown', 'reboot', 'halt', 'poweroff', 'chmod -R 777 /'];

export const defaultPolicy: PolicySettings = { policy: 'ask-unless-allowed', allow: defaultAllowList, deny: defaultDenyList };

export type Judgement = { verdict: 'run' } | { verdict: 'ask'; why: string } | { verdict: 'deny' };

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
    while (
      start < have.length &&
      (/^[A-Za-z_][A-Za-z0-9_]*=/.test(have[start]!) || ['env', 'command', 'exec', 'nohup', 'time'].includes(have[start]!)) &&
      have[start] !== want[0]
    )
      start++;
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
 * Judges exactly what will be typed: the text, and named keys if any. Keys can erase and
 * retype a line, so a send with keys is allowed only under `always`. The deny list is checked
 * first on a rough split of the line (a convenience, not a boundary: see the README).
 */
export function judge(commandLine: string, settings: PolicySettings, context: LineContext & { hasKeys?: boolean }): Judgement {
  const parts = segments(commandLine.replace(/[\r\x00-\x1f]/g, '\n'));
  if (settings.deny.some((entry) => parts.some((part) => startsWithEntry(part, entry, true)))) return { verdict: 'deny' };
  if (settings.policy === 'always') return { verdict: 'run' };
  if (settings.policy === 'ask') return { verdict: 'ask', why: 'this agent asks for every command' };
  if (context.hasKeys) return { verdict: 'ask', why: 'named keys can edit the line as it is typed' };
  return judgeAllowed(commandLine, settings.allow, context);
}
