import { scrubCredentials } from './credentials.js';

export interface ShellEnvOptions {
  base: NodeJS.ProcessEnv;
  agent: boolean;
  terminalId: string;
  instancePath: string | null;
  /** Variables the caller asked for; applied last (an agent's explicit choice). */
  extra?: Record<string, string>;
  platform?: NodeJS.Platform;
}

/** Variables agent terminals always get, re-applied after the person's startup files run. */
export const agentEnv: Readonly<Record<string, string>> = {
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
};

/** Variables from the host process that must not leak into shells. */
const hostOnly = ['ELECTRON_RUN_AS_NODE', 'ELECTRON_NO_ATTACH_CONSOLE', 'TANDEM_USER_ZDOTDIR', 'TANDEM_E2E'];

export function buildShellEnv(opts: ShellEnvOptions): Record<string, string> {
  const platform = opts.platform ?? process.platform;
  let env: Record<string, string> = {};
  for (const [name, value] of Object.entries(opts.base)) if (value !== undefined) env[name] = value;
  for (const name of hostOnly) delete env[name];
  if (opts.agent) env = { ...scrubCredentials(env), ...agentEnv };
  env.TERM = 'xterm-256color';
  env.COLORTERM = 'truecolor';
  env.TERM_PROGRAM = 'Tandem';
  if (!env.LC_ALL && !env.LC_CTYPE && !env.LANG) env.LANG = platform === 'darwin' ? 'en_US.UTF-8' : 'C.UTF-8';
  env.TANDEM_TERMINAL_ID = opts.terminalId;
  if (opts.instancePath) env.TANDEM_INSTANCE = opts.instancePath;
  else delete env.TANDEM_INSTANCE;
  return { ...env, ...(opts.extra ?? {}) };
}
