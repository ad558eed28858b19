/** Sandbox modes of agent terminals (agent-api.md, "Sandboxed agent terminals"). */
export const SANDBOX_MODES = ['off', 'workspace-write', 'read-only'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];
export type ConfinedMode = Exclude<SandboxMode, 'off'>;

/** What a terminal runs under, as `TerminalInfo.sandbox` tells it. */
export interface SandboxInfo {
  mode: ConfinedMode;
  network: boolean;
}

/** A path to hide: a directory becomes an empty read-only directory, anything else /dev/null. */
export interface HiddenPath {
  path: string;
  dir: boolean;
}

/** Everything a platform builder needs, resolved on the host (paths exist, symlinks followed). */
export interface SandboxSpec extends SandboxInfo {
  /** The terminal's cwd at open: writable under `workspace-write`. */
  workspace: string;
  /** The private temporary directory (host side), seen as /tmp and TMPDIR inside. */
  tmpDir: string;
  /** Per-agent caches and history (host side, same path inside): writable under `workspace-write`. */
  writable: string[];
  /** Host paths the shell must read at startup (its rc directory), same path inside. */
  readable: string[];
  hidden: HiddenPath[];
  /** Inside the workspace and kept read-only: `.git/config`, `.git/hooks`. */
  protectedPaths: HiddenPath[];
}

/** True when `path` is `dir` or inside it (both absolute and normalized). */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}
