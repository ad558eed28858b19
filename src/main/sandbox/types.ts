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

/** A read entry of the person's home: `source` on the host shown at `dest` (a path under the person's home). */
export interface HomeBind {
  source: string;
  dest: string;
  dir: boolean;
}

/**
 * The agent's own home (Linux, src/main/sandbox/agent-home.ts): `$HOME` inside is `agentHome`,
 * the same path inside as on the host; the person's home is an empty read-only directory
 * except the workspace and the read entries, each shown both at its own path (absolute paths
 * in startup files) and at the same place in the agent's home (`$HOME/.cargo/env`).
 */
export interface HomeSpec {
  /** The person's home. */
  path: string;
  /** `<state>/sandbox/<agent>/home`. */
  agentHome: string;
  /** Read-only: the read list and the filtered git config. */
  read: HomeBind[];
  /** Per-agent writable directories over paths inside read entries (pyenv's shims). */
  writable: HomeBind[];
}

/** Where `dest` (under the person's home) appears in the agent's home. */
export function inAgentHome(home: HomeSpec, dest: string): string {
  return dest === home.path ? home.agentHome : `${home.agentHome}/${dest.slice(home.path.length + 1)}`;
}

/** Everything a platform builder needs, resolved on the host (paths exist, symlinks followed). */
export interface SandboxSpec extends SandboxInfo {
  /** The terminal's cwd at open: writable under `workspace-write`. */
  workspace: string;
  /**
   * The descriptor bubblewrap binds the workspace from (`--bind-fd`), opened by the launcher and
   * checked to be the directory Tandem checked; absent where bubblewrap cannot bind a descriptor
   * (before 0.7): then the path, as resolved when bubblewrap mounts it.
   */
  workspaceFd?: number;
  /** The private temporary directory (host side), seen as /tmp and TMPDIR inside. */
  tmpDir: string;
  /** Per-agent caches and history (host side, same path inside): writable under `workspace-write`. */
  writable: string[];
  /** Host paths the shell must read at startup (its rc directory), same path inside. */
  readable: string[];
  hidden: HiddenPath[];
  /** Inside the workspace and kept read-only: `.git/config`, `.git/hooks`, ... (git-protect.ts). */
  protectedPaths: HiddenPath[];
  /** Git directories and `.git` files bound onto themselves so they cannot be moved or replaced; before `protectedPaths`. */
  gitAnchors?: HiddenPath[];
  /**
   * The folders between the workspace and each of those paths, bound onto themselves too: a mount
   * point cannot be renamed, so no confined terminal can move a protected `.git` aside by renaming
   * a folder that holds it while another terminal opens (the mount would land on what it put there).
   */
  gitAncestors?: HiddenPath[];
  /**
   * The descriptors bubblewrap binds `gitAncestors`, `gitAnchors` and then `protectedPaths` from, one per entry in
   * that order, each opened by the launcher and checked to be what Tandem checked (as
   * `workspaceFd`): an agent's other terminal can write inside the workspace, so a path there
   * may be a link by the time bubblewrap mounts it. Absent: by path (bubblewrap before 0.7).
   */
  inWorkspaceFds?: number[];
  /** The agent's own home in place of the person's; absent where the person's home is the workspace, and on macOS. */
  home?: HomeSpec;
  /**
   * Network on (src/main/sandbox/proxy.ts): on Linux the proxy's Unix `socket` (host path), to
   * which the forwarder relays the sandbox's loopback port from outside (forwarder.ts; nothing of
   * it is bound inside); macOS lets only `port` on loopback through.
   */
  proxy?: { socket: string } | { port: number };
}

/** True when `path` is `dir` or inside it (both absolute and normalized). */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}
