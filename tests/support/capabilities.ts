/**
 * What a test needs from the machine, checked as the capability itself (a /proc, a shell on PATH,
 * bubblewrap that may create namespaces, file modes that stick), never as the OS name, so each
 * CI job runs what its runner can do and says why it skips the rest.
 *
 * - `TANDEM_REQUIRE_SHELL_LINT`, `TANDEM_REQUIRE_SANDBOX` and `TANDEM_CHROMIUM` (like
 *   `TANDEM_REQUIRE_PWSH` in tests/integration/pwsh-helpers.ts) mark a capability as required: a
 *   gate then runs its tests even where it is missing, so they fail instead of skipping (.ci/run
 *   sets them all; each CI job sets those it installs).
 * - `TANDEM_TEST_HIDE=procfs,zsh,...` (test runs only: nothing outside tests reads it) makes the
 *   named capabilities look missing, to check on a full machine that a suite skips cleanly
 *   where one is absent. Names: the `name` of each capability below, or a command's name.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { which } from '../../src/main/shells/resolve.js';

export interface Capability {
  /** The name TANDEM_TEST_HIDE uses. */
  readonly name: string;
  readonly present: boolean;
  /** What the capability is and how to get it, for the skip message. */
  readonly needs: string;
  /** Set by a TANDEM_REQUIRE_* variable: a gate runs the tests anyway, so the absence fails them. */
  readonly required: boolean;
}

export interface CommandCapability extends Capability {
  /** Where the command is, or null when it is missing (or hidden). */
  readonly path: string | null;
}

const hidden = new Set(
  (process.env.TANDEM_TEST_HIDE ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean),
);

const required = (variable: string): boolean => process.env[variable] === '1';

/** Probed on first use, so a file pays only for the checks it gates on (bubblewrap starts a process). */
function capability(name: string, needs: string, probe: () => boolean, isRequired = false): Capability {
  let present: boolean | undefined;
  return {
    name,
    get present() {
      present ??= !hidden.has(name) && probe();
      return present;
    },
    needs: hidden.has(name) ? `${needs} [hidden by TANDEM_TEST_HIDE]` : needs,
    required: isRequired,
  };
}

const commands = new Map<string, CommandCapability>();

/** A program on PATH (with PATHEXT on Windows). `hint` says how to install it. */
export function command(name: string, hint = '', isRequired = false): CommandCapability {
  const key = `${name}\0${isRequired}`;
  let found = commands.get(key);
  if (!found) {
    const path = hidden.has(name) ? null : which(name);
    found = {
      name,
      path,
      present: path !== null,
      required: isRequired,
      needs: `${name} on PATH${hint ? ` (${hint})` : ''}${hidden.has(name) ? ' [hidden by TANDEM_TEST_HIDE]' : ''}`,
    };
    commands.set(key, found);
  }
  return found;
}

/** A file that must exist, such as a loadable builtin. */
export function file(path: string, hint = ''): Capability {
  return capability(path, `${path}${hint ? ` (${hint})` : ''}`, () => existsSync(path));
}

/** Linux's procfs: process stats, fds, syscalls and environments of other processes. */
export const procfs = capability('procfs', '/proc with per-process entries (Linux procfs; macOS and Windows have none)', () => existsSync('/proc/self/stat'));

/**
 * A Unix pseudo-terminal (node-pty's forkpty, with process groups and signals). Windows has
 * ConPTY instead, which tests/windows covers.
 */
export const unixPty = capability('unix-pty', 'a Unix pseudo-terminal (/dev/ptmx; Windows has ConPTY, tested in tests/windows)', () => existsSync('/dev/ptmx'));

/** chmod sets the permission bits stat reads back (not on Windows, where only read-only sticks). */
export const posixModes = capability('posix-modes', 'POSIX file modes (chmod 0600 reads back as 0600; Windows keeps only a read-only flag)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-modes-'));
  try {
    const path = join(dir, 'probe');
    writeFileSync(path, '');
    chmodSync(path, 0o600);
    return (statSync(path).mode & 0o777) === 0o600;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Where bubblewrap is looked for: the path Tandem itself starts (src/main/sandbox/bwrap.ts). */
export const bwrapPath = '/usr/bin/bwrap';

/** bubblewrap is installed and may create its namespaces here (Ubuntu 24.04's AppArmor rule can forbid it). */
export const bubblewrap = capability(
  'bubblewrap',
  `bubblewrap that can create namespaces (${bwrapPath}, Debian package bubblewrap; on Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0 or a profile)`,
  () =>
    existsSync(bwrapPath) &&
    spawnSync(
      bwrapPath,
      [
        '--unshare-user',
        '--disable-userns',
        '--cap-drop',
        'ALL',
        '--unshare-pid',
        '--unshare-net',
        '--ro-bind',
        '/',
        '/',
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        '--',
        'true',
      ],
      { timeout: 5000 },
    ).status === 0,
  required('TANDEM_REQUIRE_SANDBOX'),
);

/** The shell linters the integration scripts are checked with (tests/unit/shell-scripts.test.ts). */
export const shellcheck = command('shellcheck', 'apt install shellcheck, brew install shellcheck', required('TANDEM_REQUIRE_SHELL_LINT'));
export const zshForLint = command('zsh', 'apt install zsh; macOS has /bin/zsh', required('TANDEM_REQUIRE_SHELL_LINT'));

const chromiumOverride = process.env.TANDEM_CHROMIUM;
/** Debian's Chromium, or the browser TANDEM_CHROMIUM names (which also makes it required). */
export const chromiumPath = chromiumOverride && chromiumOverride !== '1' && chromiumOverride !== 'true' ? chromiumOverride : '/usr/bin/chromium';
export const chromium = capability(
  'chromium',
  `Chromium at ${chromiumPath} (apt install chromium, or TANDEM_CHROMIUM=<a Chromium binary>)`,
  () => existsSync(chromiumPath),
  Boolean(chromiumOverride),
);

/**
 * The gate: true when every capability is present or required. When it is false it prints which
 * ones `what` lacks (vitest prints no reason for a runIf or skipIf skip), once per gate.
 */
export function runs(what: string, ...needs: Capability[]): boolean {
  const missing = needs.filter((cap) => !cap.present && !cap.required);
  if (missing.length === 0) return true;
  console.warn(`skipped: ${what}; needs ${missing.map((cap) => cap.needs).join(', and ')}.`);
  return false;
}

/** Running as root, which a test needs to hand its files to another user (chown) and become it. */
export const root = capability(
  'root',
  'root (to chown files to nobody and start a host as nobody; an unprivileged run confines its own terminals instead)',
  () => process.getuid?.() === 0,
);

/** setpriv (util-linux), with root: a test runs a process as another user through the public doors. */
export const setpriv = capability('setpriv', 'setpriv (util-linux), to run a process as another user', () => existsSync('/usr/bin/setpriv'));

/** Root allowed to mount a tmpfs here (not in every container): a small one fills up mid-write (tests/integration/bash-capture.test.ts). */
export const mountTmpfs = capability('mount-tmpfs', 'root allowed to mount a tmpfs (a container may forbid it)', () => {
  if (!root.present) return false;
  const dir = mkdtempSync(join(tmpdir(), 'tandem-mount-probe-'));
  try {
    return (
      spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', dir], { stdio: 'ignore' }).status === 0 &&
      spawnSync('umount', [dir], { stdio: 'ignore' }).status === 0
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Windows' pseudoconsole (CreatePseudoConsole, Windows 10 1809 and later; node-pty also bundles
 * conpty.dll): part of the OS, so the OS is the check here.
 */
export const conpty = capability('conpty', 'Windows ConPTY (the CI workflow runs it on windows-latest)', () => process.platform === 'win32');
