import { gitHookEnv, gitHookUnset } from './git-hooks.js';

export interface ShellEnvOptions {
  base: NodeJS.ProcessEnv;
  agent: boolean;
  terminalId: string;
  instancePath: string | null;
  /** Variables the caller asked for; applied after Tandem's defaults (an agent's explicit choice). */
  extra?: Record<string, string>;
  /** Names the person added to what agent terminals get from the host (settings `agentEnvAllow`). */
  agentAllow?: readonly string[];
  platform?: NodeJS.Platform;
}

/**
 * What an agent terminal takes from the host's environment: these names (and the `LC_*`
 * locale family), nothing else, whatever the rest is called. Locations and preferences only:
 * the shell's own startup-file locators (ZDOTDIR, ENV) and the XDG base directories so the
 * person's tools find their configuration. Left out on purpose: SSH_AUTH_SOCK (a key agent
 * is a credential), DISPLAY, WAYLAND_DISPLAY and XAUTHORITY (typing into and reading the
 * person's other windows and clipboard), DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR (the
 * keyring and the session's sockets), proxies (their URLs often hold a password). The person
 * adds any of them in settings.
 */
export const agentEnvAllowPosix: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'EDITOR',
  'VISUAL',
  'ZDOTDIR',
  'ENV',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_STATE_HOME',
  'XDG_CONFIG_DIRS',
  'XDG_DATA_DIRS',
];

/** Windows programs fail without these (the system root, the profile folders, the temp folder, PowerShell's module path). */
export const agentEnvAllowWindows: readonly string[] = [
  'SystemRoot',
  'SystemDrive',
  'windir',
  'ComSpec',
  'PATHEXT',
  'USERPROFILE',
  'USERNAME',
  'USERDOMAIN',
  'HOMEDRIVE',
  'HOMEPATH',
  'APPDATA',
  'LOCALAPPDATA',
  'ProgramData',
  'ProgramFiles',
  'ProgramFiles(x86)',
  'ProgramW6432',
  'CommonProgramFiles',
  'CommonProgramFiles(x86)',
  'CommonProgramW6432',
  'ALLUSERSPROFILE',
  'PUBLIC',
  'TEMP',
  'TMP',
  'PSModulePath',
  'OS',
  'PROCESSOR_ARCHITECTURE',
  'NUMBER_OF_PROCESSORS',
  'COMPUTERNAME',
];

/** Whether the host's variable `name` goes into an agent terminal (Windows names ignore case, as Windows does). */
export function agentMayInherit(name: string, added: readonly string[] = [], platform: NodeJS.Platform = process.platform): boolean {
  if (name.startsWith('LC_')) return true;
  const names = platform === 'win32' ? [...agentEnvAllowPosix, ...agentEnvAllowWindows, ...added] : [...agentEnvAllowPosix, ...added];
  if (platform === 'win32') {
    const upper = name.toUpperCase();
    return names.some((allowed) => allowed.toUpperCase() === upper);
  }
  return names.includes(name);
}

/**
 * Capabilities rather than secrets, left out of the allow list on purpose (a key agent, the
 * display, the session bus, a Kerberos ticket cache): a startup file that exports one does not
 * pass it to agents for being a path (found black-box: `ssh-add -l` listed the person's key).
 * The person's additions still let one through.
 */
export const capabilityNames: readonly string[] = [
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'GPG_AGENT_INFO',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'DBUS_SESSION_BUS_ADDRESS',
  'XDG_RUNTIME_DIR',
  'KRB5CCNAME',
];

/** Set by the shells themselves (pwsh sets PSModulePath on every platform), and NO_COLOR by the pwsh rc. */
const shellSetNames = ['PWD', 'OLDPWD', 'SHLVL', '_', 'PSModulePath', 'NO_COLOR'];

/**
 * What an agent terminal keeps of the variables its person's startup files export, whatever
 * their values: the names it was started with (Tandem's allow list already chose them), the
 * allow list and the person's additions (settings `agentEnvAllow`), the `LC_*` family (matched
 * by the shells) and what the shell sets itself. Any other variable a startup file exports
 * stays only when its value is a list of existing absolute paths (JAVA_HOME, NVM_DIR, a
 * virtualenv): a path is no secret, and reading what it names is judged. An `export
 * STRIPE_LIVE=sk_live_…` in `.bashrc` never reaches the agent, however it is named (issue 23 F).
 * Only names a shell variable can have.
 */
export function agentKeptNames(launchNames: Iterable<string>, added: readonly string[] = [], platform: NodeJS.Platform = process.platform): string[] {
  const names = new Set([...launchNames, ...agentEnvAllowPosix, ...added, ...shellSetNames, ...(platform === 'win32' ? agentEnvAllowWindows : [])]);
  return [...names].filter((name) => platform === 'win32' || /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)).sort();
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
  for (const [name, value] of Object.entries(opts.base)) {
    // An allow list, not a deny list: a secret under a name nobody thought of stays out.
    if (value !== undefined && (!opts.agent || agentMayInherit(name, opts.agentAllow, platform))) env[name] = value;
  }
  for (const name of hostOnly) delete env[name];
  if (opts.agent) {
    env = { ...env, ...agentEnv };
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
