/**
 * Launching a shell: checks the request, writes the integration rc file (0600, in a fresh 0700
 * directory), builds the environment, confines it when asked and spawns it in a PTY.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TandemError } from '../../../shared/errors.js';
import { DEFAULT_LIMITS } from '../../../shared/limits.js';
import { hostPlatform } from '../../pty/platform.js';
import { type PtyProcess, spawnPty } from '../../pty/pump.js';
import { Confinement } from '../../sandbox/launch.js';
import { agentKeptNames, agentReapplyEnv, buildShellEnv } from '../../shells/env.js';
import { clampInt, type SessionOptions } from './session-types.js';
import { historyFileFor, makeHistoryDir, makeRcDir, removeHistoryDir } from '../../shells/rc-dir.js';

export interface LaunchedShell {
  id: string;
  /** The marker secret, known only to the rc file and this host. */
  secret: string;
  rcDir: string;
  /** What goes once the integration is up where the integration keeps rcDir (the plan's `keepsDir`); null: the whole directory. */
  rcFiles: string[] | null;
  historyFile: string | null;
  /** The drain flag's path (agent terminals; `LaunchContext.drainFlag`). */
  drainFlag: string | null;
  spawned: PtyProcess;
  confinement: Confinement | null;
  cols: number;
  rows: number;
  /** The environment the shell was started with (before a sandbox's own variables): the judge's git check reads it. */
  env: Record<string, string>;
}

function randomId(): string {
  return randomBytes(16).toString('base64url');
}

/** Spawns the shell; on failure nothing it created is left behind. */
export async function launchShell(opts: SessionOptions): Promise<LaunchedShell> {
  opts.signal?.throwIfAborted();
  const dialect = opts.shell.dialect;
  if (opts.origin === 'agent' && (!dialect || dialect.integration === 'none')) {
    throw new TandemError('shell_unsupported', `Agents can open terminals only in bash, zsh, sh or pwsh; "${opts.shell.name}" has no shell integration.`);
  }
  // A NUL cannot be in a process's environment; in the sandbox's argument file it would end one
  // argument and begin another (black-box round s39 added bubblewrap options that way).
  for (const [name, value] of Object.entries(opts.env ?? {}))
    if (name.includes('\0') || value.includes('\0'))
      throw new TandemError('invalid_argument', `env "${name.replace(/\0/g, '\\0')}" holds a NUL character: no process environment can carry one.`);
  try {
    if (!statSync(opts.cwd).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new TandemError('invalid_argument', `cwd "${opts.cwd}" is not an existing directory.`);
  }
  const id = opts.id ?? randomId();
  const secret = randomBytes(16).toString('hex');
  const rcDir = makeRcDir();
  let confinement: Confinement | null = null;
  try {
    confinement = opts.sandbox
      ? new Confinement({
          ...opts.sandbox,
          terminalId: id,
          workspace: opts.cwd,
          shellName: opts.shell.name,
          rcDir,
          home: (opts.baseEnv ?? process.env).HOME ?? '',
          env: opts.baseEnv ?? process.env,
        })
      : null;
  } catch (error) {
    rmSync(rcDir, { recursive: true, force: true });
    throw error;
  }
  const historyFile = confinement?.historyFile ?? (opts.origin === 'agent' ? historyFileFor(rcDir, id) : null);
  const agent = opts.origin === 'agent';
  const drainFlag = agent ? join(rcDir, 'drain') : null;
  const env = buildShellEnv({
    base: opts.baseEnv ?? process.env,
    agent,
    terminalId: id,
    instancePath: opts.instancePath ?? null,
    extra: opts.env,
    agentAllow: opts.agentEnvAllow,
  });
  let args: string[] = [];
  let rcFiles: string[] | null = null;
  let spawnEnv = env;
  if (dialect) {
    const plan = dialect.plan(opts.shell.path, {
      secret,
      rcDir,
      scratch: confinement ? confinement.promptScratch : join(rcDir, 'prompt'),
      startupFiles: opts.startupFiles ?? 'user',
      agent,
      historyFile,
      drainFlag,
      reapplyEnv: agent ? agentReapplyEnv(opts.env, env) : {},
      keepEnv: agent
        ? agentKeptNames(
            [...Object.keys(env), ...Object.keys(agentReapplyEnv(opts.env, env)), ...(confinement?.envNames ?? [])],
            opts.agentEnvAllow,
            (opts.platform ?? hostPlatform).os,
          )
        : [],
      env,
      platform: (opts.platform ?? hostPlatform).os,
    });
    for (const file of plan.files) writeFileSync(file.path, file.content, { mode: 0o600 });
    rcFiles = plan.keepsDir ? plan.files.map((file) => file.path) : null;
    args = plan.args;
    spawnEnv = plan.env;
  }
  const cols = clampInt(opts.cols, 120, 2, DEFAULT_LIMITS.maxCols);
  const rows = clampInt(opts.rows, 32, 2, DEFAULT_LIMITS.maxRows);
  // A confined terminal's proxy port (macOS) is known once it listens (src/main/sandbox/launch.ts).
  try {
    await confinement?.prepared;
  } catch (error) {
    rmSync(rcDir, { recursive: true, force: true });
    confinement?.dispose();
    throw new TandemError('sandbox_unavailable', `The sandbox's network proxy could not listen: ${(error as Error).message}.`);
  }
  const launch = confinement ? confinement.wrap(opts.shell.path, args, spawnEnv) : { file: opts.shell.path, args, env: spawnEnv };
  const ownHistory = historyFile !== null && !confinement;
  let spawned: PtyProcess;
  try {
    if (ownHistory) makeHistoryDir(historyFile);
    spawned = await (opts.spawn ?? spawnPty)(launch.file, launch.args, { name: 'xterm-256color', cols, rows, cwd: opts.cwd, env: launch.env });
  } catch (error) {
    rmSync(rcDir, { recursive: true, force: true });
    if (ownHistory) removeHistoryDir(historyFile);
    confinement?.dispose();
    throw new TandemError('shell_not_found', `The shell ${opts.shell.path} could not be started: ${(error as Error).message}.`);
  }
  return { id, secret, rcDir, rcFiles, historyFile, drainFlag, spawned, confinement, cols, rows, env };
}
