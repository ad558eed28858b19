/**
 * A real OpenSSH server for the remote-machine tests: Debian's sshd on a free port of
 * 127.0.0.1 with its own host key and config (keys only, `AllowTcpForwarding no`), for a
 * second local user (one per test file) created with `useradd` whose ~/.bashrc prints junk (to prove the link's
 * framing). The remote command runs this checkout's built CLI with node, which the other user
 * can read (the checkout is world-readable here; `remoteTandem` says when it is not).
 *
 * Needs root (useradd, sshd's privilege separation). `sshdUnavailable()` says why not, so the
 * tests skip with that message, or fail when TANDEM_REQUIRE_SSH=1 (.ci/run).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const sshdPath = '/usr/sbin/sshd';
/**
 * Each test file gets its own remote user: files run in parallel, and one user would share
 * its authorized_keys (each start writes its own key) and its single remote daemon, so two
 * files reaching it together refuse each other.
 */
export type RemoteUser = 'tandemremote' | 'tandemremset' | 'tandemremui' | 'tandemrembench';
const root = resolve(import.meta.dirname, '..', '..');

/** Why a real sshd cannot run here, or null when it can. */
export function sshdUnavailable(): string | null {
  if (process.platform !== 'linux') return 'the remote-machine tests need Linux';
  if (process.getuid?.() !== 0) return 'the remote-machine tests need root (useradd and sshd)';
  if (!existsSync(sshdPath)) return `${sshdPath} is missing (apt-get install -y openssh-server)`;
  if (!existsSync('/usr/bin/ssh')) return '/usr/bin/ssh is missing (apt-get install -y openssh-client)';
  if (!existsSync(join(root, 'out', 'main', 'cli.js'))) return 'the CLI is not built (npm run build)';
  return null;
}

/** `describe.skip` with the reason, unless TANDEM_REQUIRE_SSH=1 makes it a failure. */
export function requireSsh(): { skip: boolean; reason: string | null } {
  const reason = sshdUnavailable();
  if (reason && process.env.TANDEM_REQUIRE_SSH === '1') throw new Error(`TANDEM_REQUIRE_SSH=1 but ${reason}.`);
  return { skip: reason !== null, reason };
}

/** What the remote user's ~/.bashrc prints: a half start line and the frame magic's raw bytes among it. */
export const bashrcJunk = 'Welcome to the test box! ##tandem-link/ fortune:';

export interface Sshd {
  port: number;
  /** `ssh` with every option the tests need; append the destination and command. */
  ssh: string[];
  destination: string;
  user: string;
  home: string;
  /** The remote command that runs this checkout's `tandem host --stdio` as the other user. */
  remoteTandem: string;
  /** Runs a command on the remote user (through ssh) and returns its stdout. */
  run(command: string): string;
  /** The remote user's host daemon's pid (from its log), or null when none started. */
  daemonPid(): number | null;
  /** Ends the remote user's daemon (by its pid) and waits for it to go. */
  stopDaemon(): Promise<void>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The second user, its key and junk-printing rc file (idempotent: the user is kept between runs). */
function ensureUser(remoteUser: RemoteUser, dir: string): { home: string; uid: number; gid: number; key: string } {
  if (spawnSync('id', ['-u', remoteUser]).status !== 0) execFileSync('useradd', ['-m', '-s', '/bin/bash', remoteUser]);
  // `!` (locked) is refused by sshd without PAM; `*` has no password and is not locked.
  execFileSync('usermod', ['-p', '*', remoteUser]);
  const uid = Number(execFileSync('id', ['-u', remoteUser], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', remoteUser], { encoding: 'utf8' }).trim());
  const home = execFileSync('getent', ['passwd', remoteUser], { encoding: 'utf8' }).split(':')[5]!;
  const key = join(dir, 'id_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const sshDir = join(home, '.ssh');
  mkdirSync(sshDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(sshDir, 'authorized_keys'), execFileSync('cat', [`${key}.pub`]), { mode: 0o600 });
  // Debian's bash reads ~/.bashrc for `ssh host command`: this junk lands before the link's start line.
  writeFileSync(join(home, '.bashrc'), `echo '${bashrcJunk}'\nprintf '\\033[1mmotd\\033[0m \\376TL\\001 half a frame header\\n'\n`);
  for (const path of [home, sshDir, join(sshDir, 'authorized_keys'), join(home, '.bashrc')]) chownSync(path, uid, gid);
  chmodSync(home, 0o755);
  return { home, uid, gid, key };
}

export async function startSshd(remoteUser: RemoteUser): Promise<Sshd> {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sshd-'));
  chmodSync(dir, 0o755);
  const { home, key } = ensureUser(remoteUser, dir);
  const hostKey = join(dir, 'host_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  const port = await freePort();
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'AllowTcpForwarding no',
      'AllowStreamLocalForwarding no',
      'PermitTunnel no',
      'X11Forwarding no',
      'PermitUserEnvironment no',
      `AllowUsers ${remoteUser}`,
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(
    knownHosts,
    `[127.0.0.1]:${port} ${execFileSync('cat', [`${hostKey}.pub`], { encoding: 'utf8' })
      .split(' ')
      .slice(0, 2)
      .join(' ')}\n`,
  );
  const sshd: ChildProcess = spawn(sshdPath, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  sshd.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const ssh = [
    'ssh',
    '-i',
    key,
    '-p',
    String(port),
    '-o',
    `UserKnownHostsFile=${knownHosts}`,
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'BatchMode=yes',
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'ConnectTimeout=20',
  ];
  const destination = `${remoteUser}@127.0.0.1`;
  const run = (command: string) => execFileSync(ssh[0]!, [...ssh.slice(1), '-T', destination, command], { encoding: 'utf8', timeout: 60_000 });
  // Ready once a command runs through it (bounded: sshd starts in milliseconds).
  let ready = false;
  for (let i = 0; i < 200 && !ready; i++) {
    if (sshd.exitCode !== null) throw new Error(`sshd exited: ${log}`);
    ready = spawnSync(ssh[0]!, [...ssh.slice(1), '-T', destination, 'true'], { timeout: 30_000 }).status === 0;
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  if (!ready) throw new Error(`sshd on port ${port} did not accept the test key: ${log}`);
  const remoteTandem = `${process.execPath} ${join(root, 'bin', 'tandem.js')} host --stdio`;
  const daemonLog = join(home, '.config', 'Tandem', 'link', 'daemon.log');
  const daemonPid = (): number | null => {
    const match = /listening on .* \(pid ([0-9]+)\)/.exec(existsSync(daemonLog) ? readFileSync(daemonLog, 'utf8') : '');
    return match ? Number(match[1]) : null;
  };
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const stopDaemon = async () => {
    const pid = daemonPid();
    if (pid === null || !alive(pid)) return;
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 300 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  };
  return {
    port,
    ssh,
    destination,
    user: remoteUser,
    home,
    remoteTandem,
    run,
    daemonPid,
    stopDaemon,
    stop: async () => {
      // The remote user's daemon the tests started (by its pid, from its log).
      await stopDaemon();
      sshd.kill('SIGTERM');
      await new Promise((r) => (sshd.exitCode !== null ? r(null) : sshd.once('exit', r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
