/**
 * Turning a shell's launch into a confined one, on the host: resolves the paths the builders
 * take, creates the per-agent caches and the private temporary directory, and finds the real
 * shell once bubblewrap has started it (node-pty's child is bubblewrap; the shell is the child
 * of the sandbox's init, whose pid bubblewrap reports on `--info-fd`).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { TandemError } from '../../shared/errors.js';
import { childrenOf, readStat } from '../pty/proc.js';
import { resourcesDir } from '../resources.js';
import { assertSandboxAvailable } from './availability.js';
import { O_PATH, removeLockedTree } from './locked-tree.js';
import { agentHome } from './agent-home.js';
import { adoptedFiles, bwrapArgs, bwrapBindsFds, bwrapPath, guardedMounts, launcherShell } from './bwrap.js';
import { gitProtection, releaseGitProtection } from './git-protect.js';
import { endOnLostMount, type MountGuard } from './mount-guard.js';
import { explainRefusal, type SandboxNote } from './refusal.js';
import { ToolFilesWatch } from './tool-files.js';
import { accountHomePaths, boundSockets, hiddenPathCandidates, scanSockets } from './hidden-paths.js';
import { NetForwarder } from './forwarder.js';
import { SandboxProxy } from './proxy.js';
import { sandboxExecPath, seatbeltProfile } from './seatbelt.js';
import { sandboxFilter } from './seccomp.js';
import { type HiddenPath, type HomeSpec, type SandboxInfo, type SandboxSpec, within } from './types.js';

/** What a terminal asks for: the mode, and where Tandem keeps what the sandbox must not see. */
export interface SandboxRequest extends SandboxInfo {
  agent: string;
  stateDir: string;
  discoveryDir: string;
  /** What the person adds to the read list of their home for this agent (`~/x` or absolute). */
  readable?: readonly string[];
  /** The agent's network domain list (empty or absent: any public host), for the proxy. */
  networkDomains?: readonly string[];
  /** The real path the open's workspace check decided on: the workspace must resolve to exactly it. */
  decidedWorkspace?: string;
}

export interface ConfineInput extends SandboxRequest {
  terminalId: string;
  workspace: string;
  shellName: string;
  rcDir: string;
  home: string;
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}

export interface Launch {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/** Variables naming sockets and displays the sandbox hides. */
const hiddenVariables = [
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'DBUS_SESSION_BUS_ADDRESS',
  'XDG_RUNTIME_DIR',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'TANDEM_INSTANCE',
];
const ptyPlaceholder = '@TANDEM_PTY@';
const infoFd = 3;
const seccompFd = 4;
const envFd = 5;
/** The workspace, opened by the launcher and bound by descriptor (`SandboxSpec.workspaceFd`). */
const workspaceFd = 6;
/** The first of the descriptors the in-workspace binds come from (`SandboxSpec.inWorkspaceFds`), one each. */
const firstInWorkspaceFd = 7;
/**
 * The whole environment of what runs outside the sandbox (the launcher bash; sandbox-exec on
 * macOS): fixed, nothing of the terminal's. A non-interactive bash sources BASH_ENV whatever
 * --norc says, the loader honours LD_PRELOAD, and so on: none of it may come from the agent.
 */
export const launcherEnv: Readonly<Record<string, string>> = { PATH: '/usr/bin:/bin', LC_ALL: 'C' };
/** How long the shell may take to appear inside the sandbox (bubblewrap's setup is milliseconds). */
const shellAppearMs = 5000;
/** How long the open waits for the forwarder to listen (a perl start; seconds on a loaded machine). */
const forwarderReadyMs = 10_000;
/** The sandbox's own loopback port the proxy variables name (its own network namespace: no clash with the machine's). */
export const proxyPortInside = 3128;
/** sun_path holds 108 bytes: a longer state path gets its socket in a fresh directory under the temp directory. */
const socketPathMax = 100;
const pollMs = 2;
/** The filter is the same for every terminal of this process: built once. */
let seccompProgram: Buffer | undefined;

/**
 * The node-pty child is this small bash script: it closes every descriptor it inherited beyond
 * the terminal (node-pty 1.1 leaks other terminals' PTY masters into children, upstream issue
 * 657: a confined shell holding one could type into an unconfined terminal), learns the
 * terminal's device (only known once node-pty has opened it), puts it into bubblewrap's
 * arguments at the index it is given, and execs bubblewrap with the info and seccomp
 * descriptors. exec keeps the pid: the PTY's child is bubblewrap itself.
 *
 * Nothing outside the sandbox sees the agent's environment (`terminal_open` `env` may hold
 * BASH_ENV, LD_PRELOAD, BASH_FUNC_*, PATH, GCONV_PATH…): this bash runs with `launcherEnv`
 * only and execs bubblewrap with an empty one (`exec -c`); the shell's variables reach
 * bubblewrap as `--setenv` pairs read from a 0600 file on descriptor 5 (`--args`: kept off the
 * world-readable command line), applied inside, to the confined process only.
 *
 * It forks nothing (each fork and exec cost milliseconds of every open): the device comes from
 * the terminal number in /proc/self/stat (devpts: major 136, minor N is /dev/pts/N), checked
 * against stdin with `-ef`, and `tty` runs only when that check fails.
 */
const launcher = [
  // No redirection on the loop: bash would park stderr in a high descriptor, which the loop closes.
  'for fd in /proc/self/fd/*; do fd=${fd##*/}; if [ "$fd" -gt 2 ] && [ -e "/proc/self/fd/$fd" ]; then exec {fd}>&-; fi; done',
  'info=$1 bpf=$2 envf=$3 ws=$4 wsref=$5 at=$6 k=$7; shift 7',
  // The workspace as a descriptor, and the directory Tandem checked (it holds it open: wsref is
  // /proc/<host>/fd/<n>), or the open stops: a path swapped for a link after the check binds nothing.
  'if [ -n "$wsref" ]; then exec 6<"$ws" && [ /proc/self/fd/6 -ef "$wsref" ] || exit 125; fi',
  // The same for each of the k paths bound inside the workspace (path, then Tandem's held one), on 7 and up.
  `n=${firstInWorkspaceFd}; ` +
    'while [ "$k" -gt 0 ]; do eval "exec $n<\\"\\$1\\"" && [ "/proc/self/fd/$n" -ef "$2" ] || exit 125; shift 2; n=$((n + 1)) k=$((k - 1)); done',
  'read -r stat </proc/self/stat || exit 125',
  'set -f; f=(${stat##*)}); set +f',
  'nr=${f[4]}; t=/dev/pts/$(( (nr & 0xff) | ((nr >> 12) & 0xfff00) ))',
  '[ $(( (nr >> 8) & 0xfff )) -eq 136 ] && [ "$t" -ef /proc/self/fd/0 ] || t=$(tty) || exit 125',
  // -c: bubblewrap starts with an empty environment; the shell's comes from the file, inside.
  'exec -c "${@:1:at}" "$t" "$t" "${@:at+3}" 3>"$info" 4<"$bpf" 5<"$envf"',
].join('\n');

/**
 * The keys' signals (Ctrl+C, Ctrl+\, Ctrl+Z) go to the terminal's whole foreground group. A shell
 * that takes no group of its own (pwsh) shares bubblewrap's, so a Ctrl+C the person typed
 * ended bubblewrap and with it the terminal. Bubblewrap therefore starts with them ignored (the
 * launcher's trap survives its exec) and the shell with them at their defaults again: GNU env's
 * `--default-signal` runs between bubblewrap and the shell and execs it (no process stays
 * behind). Without that option (coreutils before 8.31) nothing is ignored: the shell and every
 * program it ran would inherit the ignoring.
 */
const keySignals = 'INT,QUIT,TSTP';
const envPath = '/usr/bin/env';
let signalResetWorks: boolean | undefined;

function signalReset(): string[] {
  signalResetWorks ??= spawnSync(envPath, [`--default-signal=${keySignals}`, 'true'], { stdio: 'ignore', timeout: 5000 }).status === 0;
  return signalResetWorks ? [envPath, `--default-signal=${keySignals}`] : [];
}

function resolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function existing(paths: readonly string[]): HiddenPath[] {
  const out: HiddenPath[] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    try {
      // Most candidates do not exist: asking without an exception keeps each open cheap.
      const stat = statSync(path, { throwIfNoEntry: false });
      if (!stat) continue;
      const real = realpathSync(path);
      if (seen.has(real)) continue;
      seen.add(real);
      out.push({ path: real, dir: stat.isDirectory() });
    } catch {
      // Gone or unreadable since: nothing to hide.
    }
  }
  return out;
}

/** The agent's directory name under `<state>/sandbox` (its home, caches, history): readable, and unique by a hash. */
export function agentDirName(agent: string): string {
  return `${agent.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40)}-${createHash('sha256').update(agent).digest('hex').slice(0, 8)}`;
}

/** The folder of bash's prompt scratch file in a confined terminal's own /tmp. */
const promptScratchDir = '.tandem-prompt';

/** One confined terminal's launch, from preparation to teardown. */
export class Confinement {
  readonly info: SandboxInfo;
  /** The shell's history file (HISTFILE, PSReadLine), per agent and kept across terminals. */
  readonly historyFile: string;
  /** Where a confined bash writes its prompt's scratch file, as the shell sees it; null: it forks instead. */
  readonly promptScratch: string | null = null;
  private readonly spec: SandboxSpec;
  private readonly runDir: string;
  /**
   * The checked workspace, held open for the terminal's life (Linux with a bubblewrap that binds
   * descriptors): the launcher proves the directory it opens is this one (found black-box:
   * swapping the path for a link to the home between the check and the mount gave the agent the
   * person's whole home, writable).
   */
  private heldWorkspace: number | null = null;
  /** Descriptors of the paths bound inside the workspace (anchors, then read-only ones), held until bubblewrap has mounted them. */
  private heldInWorkspace: Array<{ path: string; fd: number }> = [];
  private cacheEnv: Record<string, string>;
  private readonly platform: NodeJS.Platform;
  /**
   * Changes to workspace files the person's tools run on their own (`.envrc`, `.vscode/`,
   * `.idea/`), each reported once; null under read-only (nothing can change). Not yet shown on
   * the tab: the host has no field for it.
   */
  readonly toolFiles: ToolFilesWatch | null;
  /** `commondir` files written to protect the repository, released on dispose. */
  private readonly gitWritten: string[];
  /** Keeps the mounts the host can replace (Linux); from when the shell runs. */
  private guard: MountGuard | null = null;
  /** Resolves when `wrap` may be called: the proxy's TCP port is known (macOS); at once elsewhere. */
  readonly prepared: Promise<void> = Promise.resolve();
  /** Network on: the host side of the terminal's only way out. */
  private readonly proxy: SandboxProxy | null = null;
  private readonly proxyDir: string | null = null;
  /** Network on (Linux): the relay into the sandbox's network namespace, from when the sandbox runs. */
  private forwarder: NetForwarder | null = null;

  /** Checks the platform first: nothing is created or spawned when confinement is impossible. */
  constructor(input: ConfineInput) {
    this.platform = input.platform ?? process.platform;
    assertSandboxAvailable(input.network, this.platform);
    // The integration scripts the rc file sources: an AppImage mounts them under /tmp, which is
    // private inside; inside the workspace they are there already (and stay writable).
    const scripts = resolved(resourcesDir());
    this.info = { mode: input.mode, network: input.network };
    const workspace = resolved(input.workspace);
    if (input.decidedWorkspace !== undefined && workspace !== input.decidedWorkspace)
      throw new TandemError(
        'sandbox_unavailable',
        `The workspace changed while the terminal opened: "${input.workspace}" now leads to ${workspace}, not ${input.decidedWorkspace} as when it was checked; nothing was opened.`,
      );
    const personHome = input.home === '' ? '' : resolved(input.home);
    // Held before the repository walk, which reads the tree by path and can take a while: a
    // folder renamed into the path meanwhile is not what the walk protected, and the open stops.
    this.heldWorkspace = this.platform === 'linux' && bwrapBindsFds() ? holdDirectory(workspace) : null;
    try {
      // May refuse (a link where git looks, too many repositories): before anything is created.
      const git = gitProtection(workspace, personHome);
      const ancestors = ancestorFolders(workspace, git);
      this.gitWritten = git.written;
      if (this.heldWorkspace !== null) {
        assertStillHeld(workspace, this.heldWorkspace);
        if (ancestors.length + git.anchors.length + git.readOnly.length > maxInWorkspaceBinds) {
          throw new TandemError(
            'sandbox_unavailable',
            `The repositories under ${workspace} need more than ${maxInWorkspaceBinds} protected paths; open the terminal in a smaller folder.`,
          );
        }
        this.heldInWorkspace = [...ancestors, ...git.anchors, ...git.readOnly].map((entry) => holdEntry(entry.path, entry.dir));
      }
      mkdirSync(join(input.stateDir, 'sandbox', agentDirName(input.agent)), { recursive: true, mode: 0o700 });
      const agentDir = resolved(join(input.stateDir, 'sandbox', agentDirName(input.agent)));
      this.runDir = join(input.stateDir, 'sandbox', 'run', input.terminalId);
      const tmpDir = join(this.runDir, 'tmp');
      mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
      const readable = [resolved(input.rcDir), ...(within(scripts, workspace) ? [] : [scripts])];
      const history = `.${input.shellName.replace(/[^A-Za-z0-9._-]/g, '_')}_history`;
      // The agent's own home where the person's was (Linux); not where the person made their
      // whole home the workspace (they approved that), nor for a home of / or none.
      const home =
        this.platform === 'linux' && personHome !== '' && personHome !== '/' && personHome !== workspace
          ? this.homeSpec(personHome, agentDir, workspace, input)
          : undefined;
      let writable: string[] = [];
      this.toolFiles = input.mode === 'workspace-write' ? new ToolFilesWatch(workspace) : null;
      if (home) {
        const at = (rel: string) => posix.join(home.agentHome, rel);
        this.historyFile = at(history);
        // The person's XDG directories (if set) point into their hidden home: the agent's own instead.
        this.cacheEnv = {
          HOME: home.agentHome,
          XDG_CACHE_HOME: at('.cache'),
          XDG_CONFIG_HOME: at('.config'),
          XDG_DATA_HOME: at('.local/share'),
          XDG_STATE_HOME: at('.local/state'),
          npm_config_cache: at('.npm'),
          PIP_CACHE_DIR: at('.cache/pip'),
        };
      } else {
        const caches = { cache: join(agentDir, 'cache'), npm: join(agentDir, 'npm'), pip: join(agentDir, 'pip'), history: join(agentDir, 'history') };
        for (const dir of Object.values(caches)) mkdirSync(dir, { recursive: true, mode: 0o700 });
        writable = Object.values(caches).map(resolved);
        this.historyFile = join(caches.history, input.shellName.replace(/[^A-Za-z0-9._-]/g, '_'));
        this.cacheEnv = { XDG_CACHE_HOME: caches.cache, npm_config_cache: caches.npm, PIP_CACHE_DIR: caches.pip };
      }
      this.spec = {
        mode: input.mode,
        network: input.network,
        workspace,
        ...(this.heldWorkspace !== null ? { workspaceFd, inWorkspaceFds: this.heldInWorkspace.map((_, i) => firstInWorkspaceFd + i) } : {}),
        tmpDir,
        writable,
        readable,
        // Path sockets of the machine outside the workspace (a database's, the journal's, LXD's), found at open:
        // under the usual roots, and every one the kernel lists as bound.
        hidden: existing([
          ...hiddenPathCandidates({ home: input.home, env: input.env, stateDir: input.stateDir, discoveryDir: input.discoveryDir }),
          ...(this.platform === 'linux' ? [...new Set([...scanSockets(), ...boundSockets()])].filter((path) => !within(path, workspace)) : []),
          ...accountHomePaths(personHome),
        ]),
        protectedPaths: git.readOnly,
        gitAnchors: git.anchors,
        gitAncestors: ancestors,
        ...(home ? { home } : {}),
      };
      const insideTmp = this.platform === 'linux' ? '/tmp' : tmpDir;
      this.cacheEnv = { TMPDIR: insideTmp, ...this.cacheEnv, TANDEM_SANDBOX: input.mode };
      // bash's prompt scratch file (LaunchContext.scratch): in the terminal's own /tmp, which only
      // a workspace-write terminal may write (a read-only one takes the subshell).
      if (input.mode === 'workspace-write') {
        mkdirSync(join(tmpDir, promptScratchDir), { mode: 0o700 });
        this.promptScratch = posix.join(insideTmp, promptScratchDir, 'prompt');
      }
      if (input.network) {
        const started = this.startProxy(input);
        this.proxy = started.proxy;
        this.proxyDir = started.dir;
        const proxyAt = (port: number) => {
          const http = `http://127.0.0.1:${port}`;
          const socks = `socks5h://127.0.0.1:${port}`;
          const none = 'localhost,127.0.0.1,::1';
          this.cacheEnv = {
            ...this.cacheEnv,
            HTTP_PROXY: http,
            HTTPS_PROXY: http,
            ALL_PROXY: socks,
            NO_PROXY: none,
            http_proxy: http,
            https_proxy: http,
            all_proxy: socks,
            no_proxy: none,
          };
        };
        if (started.spec) {
          this.spec.proxy = started.spec;
          proxyAt(proxyPortInside);
        } else {
          // macOS: the loopback port is known a tick later; the launch waits for `prepared`.
          const proxy = started.proxy;
          this.prepared = proxy.listening().then(() => {
            this.spec.proxy = { port: proxy.port ?? 0 };
            proxyAt(proxy.port ?? 0);
          });
          this.prepared.catch(() => {});
        }
      }
    } catch (error) {
      // Nothing of a failed open stays: descriptors, the run directory, commondir files, the proxy.
      this.undoFailedOpen();
      throw error;
    }
  }

  /**
   * The proxy of a terminal with the network on: a Unix socket on the host that the forwarder
   * relays the sandbox's loopback port to, once the sandbox runs (Linux, `startForwarder`), or a
   * loopback port (macOS).
   */
  private startProxy(input: ConfineInput): { proxy: SandboxProxy; dir: string | null; spec: NonNullable<SandboxSpec['proxy']> | null } {
    const domains = input.networkDomains ?? [];
    if (this.platform !== 'linux') {
      return { proxy: SandboxProxy.listen({ agent: input.agent, terminalId: input.terminalId, domains, listen: { tcp: true } }), dir: null, spec: null };
    }
    let socket = join(this.runDir, 'proxy.sock');
    let dir: string | null = null;
    if (Buffer.byteLength(socket) > socketPathMax) {
      dir = mkdtempSync(join(tmpdir(), 'tandem-px-'));
      socket = join(dir, 's');
    }
    const proxy = SandboxProxy.listen({ agent: input.agent, terminalId: input.terminalId, domains, listen: { path: socket } });
    return { proxy, dir, spec: { socket } };
  }

  /** The agent's home and what it shows of the person's; entries that would shadow the workspace are left to it. */
  private homeSpec(personHome: string, agentDir: string, workspace: string, input: ConfineInput): HomeSpec {
    const extra = [...(input.readable ?? []), ...(input.env.TANDEM_SANDBOX_READ ?? '').split(':').filter((entry) => entry.trim() !== '')];
    const built = agentHome({ home: personHome, agentDir, extra }, (dest) => within(dest, workspace) || within(workspace, dest));
    return { path: personHome, agentHome: built.agentHome, read: built.read, writable: built.writable };
  }

  /** The variables the confined launch sets for the shell (its caches, temp folder and network proxy). */
  get envNames(): string[] {
    const proxies = this.spec.network ? ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'all_proxy', 'no_proxy'] : [];
    return [...Object.keys(this.cacheEnv), ...proxies];
  }

  /** The confined launch of `file args` (the shell with its integration arguments). */
  wrap(file: string, args: string[], env: Record<string, string>): Launch {
    if (this.spec.network && !this.spec.proxy) throw new Error('Confinement.wrap before its proxy listens: await prepared first');
    const base = { ...env };
    for (const name of hiddenVariables) delete base[name];
    // setenv() refuses a name with '=' (bubblewrap would die on it); no real variable has one.
    for (const name of Object.keys(base)) if (name === '' || name.includes('=')) delete base[name];
    if (this.platform === 'darwin') {
      // sandbox-exec confines itself, then execs: what it runs before that (dyld, libmalloc's
      // MallocLogFile…) sees only launcherEnv; /usr/bin/env, already confined, sets the shell's.
      const shellEnv = Object.entries({ ...base, ...this.cacheEnv }).map(([name, value]) => `${name}=${value}`);
      return { file: sandboxExecPath, args: ['-p', seatbeltProfile(this.spec), envPath, '-i', '--', ...shellEnv, file, ...args], env: { ...launcherEnv } };
    }
    const envFile = join(this.runDir, 'env');
    writeFileSync(
      envFile,
      Object.entries(base)
        .flatMap(([name, value]) => ['--setenv', name, value])
        .map((arg) => `${arg}\0`)
        .join(''),
      { mode: 0o600 },
    );
    const bpf = join(this.runDir, 'seccomp.bpf');
    writeFileSync(bpf, (seccompProgram ??= sandboxFilter()), { mode: 0o600 });
    const info = join(this.runDir, 'info.json');
    closeSync(openSync(info, 'w', 0o600));
    // env would take a path with '=' for an assignment; no shell's path has one.
    const reset = file.includes('=') ? [] : signalReset();
    // `--args` first: the shell's variables are set before bwrapArgs' own --unsetenv/--setenv.
    const argv = [
      bwrapPath,
      '--args',
      String(envFd),
      ...bwrapArgs({
        spec: this.spec,
        pty: ptyPlaceholder,
        infoFd,
        seccompFd,
        unsetEnv: hiddenVariables,
        setEnv: this.cacheEnv,
        command: [...reset, file, ...args],
      }),
    ];
    // The device goes in as one source and destination pair; a path that merely contains the placeholder is never touched.
    const at = argv.indexOf(ptyPlaceholder);
    if (at < 0 || argv[at + 1] !== ptyPlaceholder) throw new Error('bubblewrap arguments lack the terminal device pair');
    const script = reset.length > 0 ? `trap '' ${keySignals.replaceAll(',', ' ')}\n${launcher}` : launcher;
    const held = this.heldWorkspace !== null;
    const wsref = this.spec.workspaceFd !== undefined && held ? `/proc/${process.pid}/fd/${this.heldWorkspace}` : '';
    const inWorkspace =
      this.spec.inWorkspaceFds !== undefined && held ? this.heldInWorkspace.flatMap(({ path, fd }) => [path, `/proc/${process.pid}/fd/${fd}`]) : [];
    return {
      file: launcherShell,
      args: [
        '--norc',
        '--noprofile',
        '-c',
        script,
        'tandem-sandbox',
        info,
        bpf,
        envFile,
        this.spec.workspace,
        wsref,
        String(at),
        String(inWorkspace.length / 2),
        ...inWorkspace,
        ...argv,
      ],
      env: { ...launcherEnv },
    };
  }

  /** Why a failed command's output names a path this sandbox refuses, or null. */
  explain(output: string, cwd: string | null): SandboxNote | null {
    return explainRefusal(this.spec, output, cwd);
  }

  /**
   * The real shell's pid as the host sees it. Resolves null when bubblewrap exited first (its
   * setup failed: the terminal's output says why).
   */
  async shellPid(ptyPid: number, tty: string | null = null): Promise<number | null> {
    if (this.platform !== 'linux') return ptyPid;
    try {
      return await this.awaitShell(ptyPid, tty);
    } finally {
      // bubblewrap has mounted everything by the time the shell runs, or never will.
      this.releaseInWorkspace();
    }
  }

  private async awaitShell(ptyPid: number, tty: string | null): Promise<number | null> {
    const deadline = Date.now() + shellAppearMs;
    let init: number | null = null;
    while (Date.now() < deadline) {
      const state = readStat(ptyPid)?.state;
      if (state === undefined || state === 'Z') return null;
      init ??= this.readInit();
      if (init !== null) {
        // bubblewrap has read its arguments: the shell's environment need not lie on disk.
        rmSync(join(this.runDir, 'env'), { force: true });
        const [child] = childrenOf(init);
        if (child !== undefined && readStat(child)?.comm !== 'bwrap') {
          this.keepMounts(init, ptyPid, tty);
          await this.forwarderReady(init);
          return child;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    return null;
  }

  private keepMounts(init: number, ptyPid: number, tty: string | null): void {
    this.guard = endOnLostMount({
      init,
      ptyPid,
      tty,
      mounts: guardedMounts(this.spec),
      adopt: adoptedFiles(this.spec),
    });
  }

  /**
   * The proxy variables lead somewhere only once the forwarder listens in the sandbox's network
   * namespace: it starts from outside now that bubblewrap's init runs, and the open waits for
   * it while the shell starts (bounded; past the bound the open goes on and a connection through
   * the variables is refused until it listens). One that cannot start leaves the terminal
   * without a network, said on Tandem's stderr.
   */
  private async forwarderReady(init: number): Promise<void> {
    const proxySpec = this.spec.proxy;
    if (!this.proxy || !proxySpec || !('socket' in proxySpec)) return;
    this.forwarder = new NetForwarder({ init, port: proxyPortInside, socket: proxySpec.socket });
    let timer: NodeJS.Timeout | undefined;
    const why = await Promise.race([this.forwarder.ready, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), forwarderReadyMs)))]);
    clearTimeout(timer);
    if (why !== null) console.error(`[tandem] a confined terminal has no network: ${why}`);
  }

  private readInit(): number | null {
    try {
      const match = /"child-pid":\s*(\d+)/.exec(readFileSync(join(this.runDir, 'info.json'), 'utf8'));
      return match ? Number(match[1]) : null;
    } catch {
      return null;
    }
  }

  /** What a constructor that threw had made, whatever it got to (fields not set yet are undefined). */
  private undoFailedOpen(): void {
    const made = this as unknown as { proxy?: SandboxProxy | null; proxyDir?: string | null; gitWritten?: string[]; runDir?: string };
    this.releaseHolds();
    made.proxy?.close();
    if (made.proxyDir) rmSync(made.proxyDir, { recursive: true, force: true });
    if (made.gitWritten) releaseGitProtection(made.gitWritten.splice(0));
    if (made.runDir) removeLockedTree(made.runDir);
  }

  private releaseInWorkspace(): void {
    for (const { fd } of this.heldInWorkspace.splice(0)) closeSync(fd);
  }

  private releaseHolds(): void {
    this.releaseInWorkspace();
    if (this.heldWorkspace !== null) closeSync(this.heldWorkspace);
    this.heldWorkspace = null;
  }

  /** Removes the private temporary directory and the launch files. */
  dispose(): void {
    this.guard?.dispose();
    this.forwarder?.close();
    this.releaseHolds();
    this.proxy?.close();
    if (this.proxyDir) rmSync(this.proxyDir, { recursive: true, force: true });
    releaseGitProtection(this.gitWritten.splice(0));
    removeLockedTree(this.runDir);
  }
}

/**
 * Holds the entry at `path` (a directory or a file, as git-protect.ts found it) as itself: not a
 * link at its end or on the way (the descriptor's path is `path`), of the kind found. The
 * launcher compares what it opens by path against it.
 */
function holdEntry(path: string, dir: boolean): { path: string; fd: number } {
  const changed = () => new TandemError('sandbox_unavailable', `${path} changed while the sandbox was set up; open the terminal again.`);
  let fd: number;
  try {
    fd = openSync(path, O_PATH | constants.O_NOFOLLOW);
  } catch {
    throw changed();
  }
  const st = fstatSync(fd);
  if (st.isSymbolicLink() || st.isDirectory() !== dir || readlinkSync(`/proc/self/fd/${fd}`) !== posix.resolve(path)) {
    closeSync(fd);
    throw changed();
  }
  return { path, fd };
}

/** The launcher opens each in-workspace bind on a descriptor of its own (7 and up): bash's limit is 1024. */
const maxInWorkspaceBinds = 900;

/** The folders strictly between the workspace and each protected path, not anchors themselves. */
function ancestorFolders(workspace: string, git: { anchors: HiddenPath[]; readOnly: HiddenPath[] }): HiddenPath[] {
  const anchors = new Set(git.anchors.map((entry) => entry.path));
  const found = new Set<string>();
  for (const entry of [...git.anchors, ...git.readOnly]) {
    for (let dir = posix.dirname(entry.path); dir !== workspace && within(dir, workspace) && !found.has(dir); dir = posix.dirname(dir)) {
      if (!anchors.has(dir)) found.add(dir);
    }
  }
  return [...found].map((path) => ({ path, dir: true }));
}

/** The workspace path still leads to the held directory (after the walk that read it by path), or the open stops. */
function assertStillHeld(path: string, fd: number): void {
  const now = statSync(path, { throwIfNoEntry: false });
  const held = fstatSync(fd);
  if (!now || now.dev !== held.dev || now.ino !== held.ino || readlinkSync(`/proc/self/fd/${fd}`) !== path) {
    throw new TandemError('sandbox_unavailable', `The workspace ${path} changed while the sandbox was set up; open the terminal again.`);
  }
}

/**
 * Opens the directory at `path` without following a link at its end, and checks that what was
 * opened is at `path` itself (no link on the way): the launcher compares against it.
 */
function holdDirectory(path: string): number {
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  if (readlinkSync(`/proc/self/fd/${fd}`) !== posix.resolve(path)) {
    closeSync(fd);
    throw new TandemError('sandbox_unavailable', `The workspace ${path} changed while the sandbox was set up; open the terminal again.`);
  }
  return fd;
}
