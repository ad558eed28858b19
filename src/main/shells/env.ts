import { scrubCredentials } from './credentials.js';
import { gitHookEnv, gitHookUnset } from './git-hooks.js';

export interface ShellEnvOptions {
  base: NodeJS.ProcessEnv;
  agent: boolean;
  terminalId: string;
  instancePath: string | null;
  /** Variables the caller asked for; applied after Tandem's defaults (an agent's explicit choice). */
  extra?: Record<string, string>;
  platform?: NodeJS.Platform;
}

/** Variables agent terminals always get, re-applied after the person's startup files run. */
export const agentEnv: Readonly<Record<string, string>> = {
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
  ...gitHookEnv,
};

/** Set by Tandem after everything else, whatever the caller asked: teardown finds a terminal's processes by its id. */
export const tandemOwnedEnv = ['TANDEM_TERMINAL_ID', 'TANDEM_INSTANCE'] as const;

/** Variables from the host process that must not leak into shells. */
const hostOnly = ['ELECTRON_RUN_AS_NODE', 'ELECTRON_NO_ATTACH_CONSOLE', 'TANDEM_USER_ZDOTDIR', 'TANDEM_E2E'];

function withoutTandemOwned(env: Record<string, string> | undefined): Record<string, string> {
  const out = { ...(env ?? {}) };
  for (const name of tandemOwnedEnv) delete out[name];
  return out;
}

export function buildShellEnv(opts: ShellEnvOptions): Record<string, string> {
  const platform = opts.platform ?? process.platform;
  let env: Record<string, string> = {};
  for (const [name, value] of Object.entries(opts.base)) if (value !== undefined) env[name] = value;
  for (const name of hostOnly) delete env[name];
  if (opts.agent) {
    env = { ...scrubCredentials(env), ...agentEnv };
    for (const name of gitHookUnset) delete env[name];
  }
  env.TERM = 'xterm-256color';
  env.COLORTERM = 'truecolor';
  env.TERM_PROGRAM = 'Tandem';
  if (!env.LC_ALL && !env.LC_CTYPE && !env.LANG) env.LANG = platform === 'darwin' ? 'en_US.UTF-8' : 'C.UTF-8';
  env = { ...env, ...withoutTandemOwned(opts.extra) };
  env.TANDEM_TERMINAL_ID = opts.terminalId;
  if (opts.instancePath) env.TANDEM_INSTANCE = opts.instancePath;
  else delete env.TANDEM_INSTANCE;
  return env;
}

/**
 * What an agent terminal's rc file re-applies after the person's startup files: Tandem's
 * defaults, then the caller's variables, then Tandem's own (`env` is the spawn environment).
 */
export function agentReapplyEnv(extra: Record<string, string> | undefined, env: Record<string, string>): Record<string, string> {
  const owned: Record<string, string> = {};
  for (const name of tandemOwnedEnv) if (env[name] !== undefined) owned[name] = env[name];
  return { ...agentEnv, ...withoutTandemOwned(extra), ...owned };
}
