import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../pty/proc.js';
import { localStateDir } from '../state-dir.js';
import { lockWitness, ownerIsLive, ownStartTime, parseLockOwner, processStartTime } from './process-start.js';
import { hostPlatform } from '../pty/platform.js';
import { pointerPathFor, removePointer, writePointer } from './discovery.js';

/**
 * The discovery file's content. No credential in it: `instanceKey` grants nothing, it only lets
 * this run prove to a bridge that it is the run the file names (instance-proof.ts).
 */
export interface InstanceInfo {
  pid: number;
  /** The host process's start time (process-start.ts), so a reused pid is not taken for it; absent on Windows. */
  started?: string;
  /** Random per run: the HMAC key of POST /prove (instance-proof.ts). */
  instanceKey?: string;
  version: string;
  mcpUrl: string;
  pairUrl: string;
  uiUrl?: string;
  /** The stdio bridge's channel (mcp-socket.ts): a Unix-domain socket or a named pipe; absent on older hosts. */
  bridgeSocket?: string;
  /** Where waiting detection reads processes (pty/ps-tier.ts); filled in by `publish`. */
  evidence?: 'proc' | 'ps' | 'none';
}

/**
 * Where instance.json lives: $TANDEM_HOME, else $XDG_RUNTIME_DIR/tandem, else the machine-local
 * state directory (%LOCALAPPDATA%\Tandem on Windows, never the roaming profile).
 */
export function discoveryDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TANDEM_HOME) return localStateDir({ platform: hostPlatform.os, env, home: '' });
  if (env.XDG_RUNTIME_DIR && existsSync(env.XDG_RUNTIME_DIR)) return join(env.XDG_RUNTIME_DIR, 'tandem');
  return localStateDir();
}

/** Whether a process of this user exists (pty/proc.ts, shared with the rc directory sweep). */
export { isAlive };

/**
 * Whether instance.json still names a running Tandem: its pid is a live process of this user
 * and, where the host records one, that process started when the host did (a pid reused by
 * another process of this user is not it). A file without a start time on POSIX (an older host)
 * is not trusted; Windows records none (reading one costs a PowerShell start), and there the
 * bridge's channel is a named pipe with a random name that dies with its host.
 */
export function isRunOf(
  info: Pick<InstanceInfo, 'pid' | 'started'>,
  platform: NodeJS.Platform = hostPlatform.os,
  startOf: (pid: number) => string | null = (pid) => processStartTime(pid, platform),
  alive: (pid: number) => boolean = isAlive,
): boolean {
  if (!Number.isInteger(info.pid) || info.pid <= 0 || !alive(info.pid)) return false;
  if (platform === 'win32') return true;
  if (typeof info.started !== 'string') return false;
  return startOf(info.pid) === info.started;
}

export function readInstance(path: string): InstanceInfo | null {
  try {
    return parseInstance(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

export function parseInstance(text: string): InstanceInfo | null {
  try {
    const info = JSON.parse(text) as InstanceInfo;
    return typeof info?.pid === 'number' && typeof info.mcpUrl === 'string' ? info : null;
  } catch {
    return null;
  }
}

export class InstanceConflictError extends Error {
  constructor(readonly running: { pid: number; path: string; uiUrl?: string }) {
    super(`Tandem is already running (pid ${running.pid}, ${running.path}); use it, or set TANDEM_HOME to run another instance.`);
  }
}

/**
 * One live instance per state directory. The lock file holds the owner's pid and start time; a
 * lock whose owner is gone (or whose pid now names another process) is stale and replaced. instance.json is written (0600, in a 0700 directory) once the
 * host is ready and removed on clean exit.
 */
export class InstanceLock {
  readonly dir: string;
  readonly path: string;
  private readonly lockPath: string;
  /** Where instance.json is outside the state directory: a pointer there, for bridges without $XDG_RUNTIME_DIR (discovery.ts). */
  private readonly pointer: string | null;
  private held = false;
  /** Published in instance.json (0600, so only this user reads it); POST /prove answers with it. */
  readonly instanceKey = randomBytes(32).toString('base64url');

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.dir = discoveryDir(env);
    this.path = join(this.dir, 'instance.json');
    this.lockPath = join(this.dir, 'instance.lock');
    this.pointer = pointerPathFor(env, this.dir, hostPlatform.os);
  }

  acquire(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(this.lockPath, 'wx', 0o600);
        writeFileSync(fd, JSON.stringify({ pid: process.pid, started: ownStartTime() }));
        closeSync(fd);
        this.held = true;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const owner = parseLockOwner(readFileSync(this.lockPath, 'utf8'));
        if (owner && owner.pid !== process.pid && ownerIsLive(owner, isAlive, (pid) => processStartTime(pid), lockWitness(this.lockPath))) {
          throw new InstanceConflictError({ pid: owner.pid, path: this.path, uiUrl: readInstance(this.path)?.uiUrl });
        }
        // Stale: its owner is gone, or its pid belongs to another process now.
        rmSync(this.lockPath, { force: true });
        rmSync(this.path, { force: true });
      }
    }
    throw new Error(`Could not take the instance lock ${this.lockPath}.`);
  }

  /** Publishes instance.json atomically once the host is ready. */
  publish(info: InstanceInfo): void {
    const tmp = `${this.path}.${process.pid}.tmp`;
    const started = info.started ?? ownStartTime() ?? undefined;
    const record = {
      ...info,
      ...(started ? { started } : {}),
      instanceKey: info.instanceKey ?? this.instanceKey,
      evidence: info.evidence ?? hostPlatform.evidence ?? 'none',
    };
    writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
    if (this.pointer) writePointer(this.pointer, this.path);
  }

  /**
   * Takes instance.json (and the pointer) down while the lock is still held: the first step of a
   * shutdown, so no new bridge finds an instance that is closing. Removes only a file that still
   * names this process.
   */
  unpublish(): void {
    if (!this.held) return;
    if (readInstance(this.path)?.pid === process.pid) rmSync(this.path, { force: true });
    if (this.pointer) removePointer(this.pointer, this.path);
  }

  release(): void {
    if (!this.held) return;
    this.unpublish();
    this.held = false;
    rmSync(this.lockPath, { force: true });
  }
}
