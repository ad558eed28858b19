import { posix, resolve, win32 } from 'node:path';

/**
 * How agents start Tandem's stdio bridge, for each kind of install. The bridge runs as Node
 * everywhere: Electron's browser process replaces stdin with an empty stream on Windows
 * (electron lib/common/init.ts), so the app binary runs the CLI with ELECTRON_RUN_AS_NODE=1
 * (the runAsNode fuse stays on for that), the way VS Code's `code` command runs its CLI.
 */
export interface InstallFacts {
  platform: NodeJS.Platform;
  /** Running inside Electron (the desktop app or `npm start`), not plain Node. */
  electron: boolean;
  /** Electron's `app.isPackaged`: an installed app. */
  packaged: boolean;
  /** process.execPath: the app binary, the development Electron, or node. */
  execPath: string;
  /** The absolute path of this copy's bin/tandem.js (inside app.asar for an installed app). */
  binScript: string;
  /** $APPIMAGE: the AppImage file an AppImage run was started from. */
  appImage: string | undefined;
  /** An absolute `node` found on PATH (for `npm start` from a checkout), or null. */
  nodeOnPath: string | null;
  /** Whether `tandem` on PATH is this copy's bin/tandem.js (a global npm install). */
  tandemOnPath: boolean;
}

export type InstallKind = 'appimage' | 'app' | 'source' | 'npm-global' | 'npm-local';

export function installKind(facts: InstallFacts): InstallKind {
  if (facts.electron && facts.packaged) return facts.platform === 'linux' && facts.appImage ? 'appimage' : 'app';
  if (facts.electron) return 'source';
  return facts.tandemOnPath ? 'npm-global' : 'npm-local';
}

/** How an MCP client starts the stdio bridge: a command, its arguments, and variables it needs besides the agent's token. */
export interface BridgeCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

const runAsNode = { ELECTRON_RUN_AS_NODE: '1' } as const;

export function bridgeCommand(facts: InstallFacts): BridgeCommand {
  switch (installKind(facts)) {
    case 'appimage':
      // The AppImage mounts at a new /tmp/.mount_* path on every start, so no path inside it
      // outlives this run: the AppImage file itself is started, and finds its own CLI.
      return { command: facts.appImage!, args: ['--mcp'] };
    case 'app':
      return { command: facts.execPath, args: [facts.binScript, 'mcp'], env: { ...runAsNode } };
    case 'source':
      // Electron's own binary would open its default app without ELECTRON_RUN_AS_NODE.
      return facts.nodeOnPath
        ? { command: facts.nodeOnPath, args: [facts.binScript, 'mcp'] }
        : { command: facts.execPath, args: [facts.binScript, 'mcp'], env: { ...runAsNode } };
    case 'npm-global':
      return { command: 'tandem', args: ['mcp'] };
    case 'npm-local':
      return { command: facts.execPath, args: [facts.binScript, 'mcp'] };
  }
}

/** bin/tandem.js of an app whose code lives at `appPath` (Electron's app.getAppPath()). */
export function binScriptOf(appPath: string, platform: NodeJS.Platform): string {
  return (platform === 'win32' ? win32 : posix).join(appPath, 'bin', 'tandem.js');
}

/**
 * The bridge command as this host's configurations print it: a host started with its own
 * TANDEM_HOME is found only through that variable (an agent's bridge starts with the agent's
 * environment, not the host's), so the configuration carries it.
 */
export function forThisHost(bridge: BridgeCommand, hostEnv: NodeJS.ProcessEnv): BridgeCommand {
  if (!hostEnv.TANDEM_HOME) return bridge;
  return { ...bridge, env: { ...bridge.env, TANDEM_HOME: resolve(hostEnv.TANDEM_HOME) } };
}
