/**
 * A confined terminal may write anywhere in its workspace (its cwd at open), so a workspace
 * wider than the agent's project is the person's call: the home directory (or a directory
 * holding it), `/`, or anything outside the bridge's project makes the open ask, whatever the
 * agent's policy (under `always` the sandbox is the only boundary left).
 */
import { closeSync, constants, lstatSync, openSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { posix } from 'node:path';
import { TandemError } from '../../../shared/errors.js';
import type { SandboxRequest } from '../../sandbox/launch.js';
import { within } from '../../sandbox/types.js';
import { type Clock, waitFor } from '../../clock.js';
import type { ApprovalPolicy } from '../judge/policy.js';
import type { ApprovalDecision, ApprovalRequestInfo } from '../types.js';

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return posix.resolve(path);
  }
}

/** What Tandem keeps in its state folder (runtime.ts, sandbox/launch.ts, state-dir.ts). */
const tandemsOwn = ['agents', 'sandbox', 'recordings', 'transcripts', 'state-dirs'];

/** Folders of the system: never a project without the person's explicit choice. */
const systemRoots = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/run',
  '/sbin',
  '/snap',
  '/sys',
  '/usr',
  '/var',
  '/System',
  '/Library',
  '/private',
  '/Applications',
];

/**
 * Why a folder cannot be an agent's project unless the person names it (agent-api.md: "the home
 * directory, `/`, system directories and home's dot-directories are never a project without an
 * explicit choice"), or null: `/`, the shared temp folder itself, a folder holding the home
 * directory, the home directory, a dot-folder of home or anything in one, and the system's own
 * folders. Judged on the real path (a link named `proj` to `~/.ssh` is `~/.ssh`).
 */
export function notAProject(path: string, home: string, tandemDirs: readonly string[] = [], searchPath = process.env.PATH ?? ''): string | null {
  if (!posix.isAbsolute(path)) return 'it is not an absolute path';
  const folder = real(path);
  const temp = real(tmpdir());
  if (folder === '/' || folder === '/tmp' || folder === temp) return `${folder} is shared by everything on this computer`;
  // HOME, and the account's own home where HOME names another folder.
  const homes = [...new Set([home, ...accountHome()].filter(Boolean).map(real))];
  for (const realHome of homes) {
    if (within(realHome, folder)) return folder === realHome ? 'it is your home directory' : 'it holds your home directory';
    if (within(folder, realHome) && posix.relative(realHome, folder).startsWith('.')) return "it is in one of your home's dot-folders";
  }
  // What the person's own, unconfined tools run by themselves: a folder on their PATH (an
  // agent's `ls` there runs when they type `ls`: black-box round 9, `~/bin`), where a startup
  // file of theirs links to (a dotfiles folder), macOS's ~/Library (LaunchAgents).
  const runs = runsByItself(folder, homes, searchPath);
  if (runs) return runs;
  // Tandem's state folders: one, what holds one, and what Tandem keeps in one (transcripts,
  // recordings, agents' homes); other folders a state folder happens to hold stay the person's.
  const inHome = homes.some((realHome) => within(folder, realHome));
  for (const dir of tandemDirs.map(real)) {
    if (within(dir, folder) || tandemsOwn.some((name) => within(folder, posix.join(dir, name)))) return `it is or holds Tandem's own folder ${dir}`;
  }
  // The user's own temp folder lies under a system one on macOS (/private/var/folders/...).
  const root = systemRoots.find((dir) => within(folder, dir));
  if (root && !inHome && !within(folder, temp)) return `it is a system folder (${root})`;
  return null;
}

/** Entries of a home (its dot-entries, and those of its `.config`) looked at for links, at most. */
const maxLinkedEntries = 512;

/**
 * Why what lies in `folder` would run by itself in the person's own shell or session, or null:
 * it is or holds a folder of `searchPath` (inside a home: the system's own are refused as
 * system folders already), or the target of a link among a home's dot-entries or `.config`
 * entries (a dotfiles folder: `~/.bashrc` linked into it), or it is in macOS's ~/Library.
 */
function runsByItself(folder: string, homes: readonly string[], searchPath: string): string | null {
  const named = namedByStartupFiles(folder, homes);
  if (named) return named;
  // ~/bin too: a stock ~/.profile puts it on PATH once it exists, whatever PATH says now.
  for (const entry of [...searchPath.split(':'), ...homes.map((home) => posix.join(home, 'bin'))]) {
    if (!posix.isAbsolute(entry)) continue;
    const dir = real(entry);
    if (homes.some((home) => within(dir, home)) && within(dir, folder))
      return `it is or holds ${dir}, a folder on your PATH: a program an agent puts there runs when you type its name`;
  }
  for (const home of homes) {
    if (process.platform === 'darwin' && within(folder, posix.join(home, 'Library'))) return "it is in your home's Library (login items, launch agents)";
    let seen = 0;
    for (const dir of [home, posix.join(home, '.config')]) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        if (dir === home && !name.startsWith('.')) continue;
        if (++seen > maxLinkedEntries) return null;
        const path = posix.join(dir, name);
        try {
          if (!lstatSync(path).isSymbolicLink()) continue;
        } catch {
          continue;
        }
        const target = real(path);
        if (target !== path && within(target, folder))
          return `it holds ${target}, which your ${path} links to: what an agent writes there, your own shell or tools read`;
      }
    }
  }
  return null;
}

/** The person's files their shell, git and tools read at start, relative to a home. */
const startupFiles = [
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.gitconfig',
  '.config/git/config',
  '.npmrc',
  '.inputrc',
  '.vimrc',
  '.tmux.conf',
  '.config/fish/config.fish',
];
/** Files read while following what startup files name (what they source or include), at most, and bytes of each. */
const maxNamedFiles = 32;
const maxNamedBytes = 256 << 10;

/**
 * Why `folder` holds a path one of the person's startup files names (or a file they name in
 * turn, two levels on): `export PATH=$HOME/go/bin:$PATH`, `. ~/dotfiles/bashrc`, git's
 * `[include] path = ~/dotfiles/gitconfig` (black-box round 10: each let a confined agent plant
 * what the person's own shell or git then ran). Paths are read as text: `~/`, `$HOME/`,
 * `${HOME}/` and absolute ones.
 */
function namedByStartupFiles(folder: string, homes: readonly string[]): string | null {
  for (const home of homes) {
    const queue = startupFiles.map((name) => ({ file: posix.join(home, name), depth: 0 }));
    const seen = new Set<string>();
    while (queue.length > 0 && seen.size < maxNamedFiles) {
      const { file, depth } = queue.shift()!;
      if (seen.has(file)) continue;
      seen.add(file);
      let text: string;
      try {
        // A regular file only, opened without waiting: a FIFO put in its place would hold the host.
        if (!statSync(file).isFile()) continue;
        const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
        try {
          const buffer = Buffer.alloc(maxNamedBytes);
          text = buffer.subarray(0, readSync(fd, buffer, 0, maxNamedBytes, 0)).toString('utf8');
        } finally {
          closeSync(fd);
        }
      } catch {
        continue;
      }
      for (const match of text.matchAll(/(?:~|\$HOME|\$\{HOME\})(\/[^\s'"`:;=)]*)|(?<![\w.$~}-])(\/[^\s'"`:;=)]+)/g)) {
        const mentioned = match[1] !== undefined ? posix.join(home, match[1]) : posix.normalize(match[2]!);
        const path = real(mentioned);
        // Only what lies in a home: the system's own folders are refused as such already.
        if (!homes.some((each) => within(path, each) || within(mentioned, each))) continue;
        if (within(path, folder) || within(mentioned, folder)) return `your ${file} names ${mentioned}: what an agent puts there, your own shell or tools read`;
        if (depth < 2) queue.push({ file: path, depth: depth + 1 });
      }
    }
  }
  return null;
}

/** The account's home from the user database, where there is one (HOME may name another folder). */
export function accountHome(): string[] {
  try {
    return [userInfo().homedir];
  } catch {
    return [];
  }
}

/** The folder as a project (its real path), or null where it cannot be one without the person (`notAProject`). */
export function acceptableProject(path: string | null, home: string, tandemDirs: readonly string[] = []): string | null {
  return path && notAProject(path, home, tandemDirs) === null ? real(path) : null;
}

/**
 * Why this workspace needs the person's yes, for their eyes; null when it is the project's.
 * Unconfined, the workspace is where allow-listed commands may read without asking. An agent
 * with no project has every open asked.
 */
export function workspaceConcern(cwd: string, project: string | null, home: string, confined = true): string | null {
  const workspace = real(cwd);
  const grants = confined ? 'writable in the sandbox' : 'where allowed commands read without asking';
  if (workspace === '/') return `its workspace would be the whole filesystem (/), ${grants}`;
  if (home && within(real(home), workspace)) return `its workspace would hold your home directory, all of it ${grants}`;
  if (!project) return 'the agent has no project yet (set one in the agents panel), so every workspace is your call';
  // The project is kept as the real path it had when it was decided: a folder later replaced by
  // a link (to /etc, say) no longer holds the workspace the link leads to.
  if (!within(workspace, project)) return `its workspace is outside the agent's project (${project})`;
  return null;
}

export interface WorkspaceQuestion {
  ask(info: ApprovalRequestInfo): { id: string; decision: Promise<ApprovalDecision> };
  withdraw(id: string): void;
  clock: Clock;
  /** The longest a call may wait: an unanswered question is withdrawn then. */
  waitMs: number;
}

/** What the open was allowed: its sandbox (none when unconfined) and the workspace's real path. */
export interface DecidedOpen {
  sandbox: SandboxRequest | undefined;
  /**
   * The real path the decision was about, resolved once: the sandbox binds exactly it, and the
   * judge keeps it as the terminal's workspace and never resolves it again (a folder later
   * replaced by a link would otherwise widen what allowed commands may read).
   */
  workspace: string;
}

/**
 * The sandbox the open runs under, asking the person first when its workspace is too wide.
 * The mode is read again after the answer: the person may have changed it meanwhile, and the
 * open must run under what the settings say when it is counted as opening.
 */
export async function confirmedSandbox(
  question: WorkspaceQuestion,
  open: { agent: string; title: string; shell?: string; cwd: string; project: string | null; home: string; policy: ApprovalPolicy },
  current: () => SandboxRequest | undefined,
  signal?: AbortSignal,
): Promise<DecidedOpen> {
  const sandbox = current();
  // Resolved once: the sandbox must bind the folder this decision was about, so it is told the
  // real path decided on and refuses the open if the cwd resolves elsewhere by then (a folder
  // swapped for a link to the home as the open ran: black-box round s39).
  let decided: string;
  try {
    decided = realpathSync(open.cwd);
  } catch {
    throw new TandemError('invalid_argument', `cwd "${open.cwd}" is not an existing directory.`);
  }
  // Unconfined under `always` the workspace grants nothing: every command runs anyway.
  if (!sandbox && open.policy === 'always') return { sandbox, workspace: decided };
  const why = workspaceConcern(decided, open.project, open.home, sandbox !== undefined);
  if (!why) return { sandbox: sandbox && { ...sandbox, decidedWorkspace: decided }, workspace: decided };
  const request = question.ask({
    kind: 'open',
    agent: open.agent,
    terminalId: '',
    title: open.title,
    command: `open "${open.title}"${open.shell ? ` in ${open.shell}` : ''} at ${open.cwd} (${sandbox ? `${sandbox.mode} sandbox` : 'no sandbox'})`,
    env: [],
    why,
  });
  const outcome = await waitFor(question.clock, { ms: question.waitMs, signal, until: request.decision });
  if (outcome.kind !== 'met') {
    question.withdraw(request.id);
    if (outcome.kind === 'aborted') throw outcome.reason ?? new Error('aborted');
    throw new TandemError('rejected', `The person did not approve a workspace at ${open.cwd} in time; open in your project, or ask the person first.`);
  }
  if (outcome.value.state === 'rejected')
    throw new TandemError(
      'rejected',
      outcome.value.reason || `The person did not let a terminal open with its workspace at ${open.cwd}; open in your project instead.`,
    );
  const now = current();
  return { sandbox: now && { ...now, decidedWorkspace: decided }, workspace: decided };
}
