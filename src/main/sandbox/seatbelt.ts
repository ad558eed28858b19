/**
 * The sandbox-exec (Seatbelt) profile of a confined terminal (macOS). Pure text. Seatbelt
 * applies the last rule that matches an operation, so the profile goes from broad to narrow:
 * allow by default, refuse every file write, hide the hidden directories that hold what the
 * terminal uses (Tandem's state holds its temporary directory and caches) and allow that back,
 * allow writes to the workspace, the temporary directory, the caches and the terminal devices,
 * hide every other hidden path, refuse again what stays read-only in the workspace, and cut the
 * network, except (network on) the terminal's own proxy port on loopback. (The hidden state used to come last, after the caches it holds: no temp directory.)
 *
 * sandbox-exec runs the shell in the same process and session, so the controlling terminal
 * and job control are untouched. What it cannot do that bubblewrap does: a private process
 * table (`ps` still lists the machine's processes) and a private /dev.
 */
import { type HiddenPath, type SandboxSpec, within } from './types.js';

export const sandboxExecPath = '/usr/bin/sandbox-exec';

/** A string literal of the profile language (a Scheme dialect). */
export function sbString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function pathFilter(entry: HiddenPath): string {
  return `(${entry.dir ? 'subpath' : 'literal'} ${sbString(entry.path)})`;
}

function regexEscape(path: string): string {
  return path.replace(/[.*+?^${}()|[\]\\"]/g, '\\$&');
}

/** Unix-socket connects name the socket's path: a directory covers every socket below it. */
function socketFilter(entry: HiddenPath): string {
  return entry.dir ? `(remote unix-socket (path-regex #"^${regexEscape(entry.path)}/"))` : `(remote unix-socket (path-literal ${sbString(entry.path)}))`;
}

export function seatbeltProfile(spec: SandboxSpec): string {
  const lines = ['(version 1)', '(allow default)', '(deny file-write*)'];
  const devices = ['(literal "/dev/null")', '(literal "/dev/zero")', '(literal "/dev/tty")', '(regex #"^/dev/ttys[0-9]+$")', '(literal "/dev/dtracehelper")'];
  // The agent's own places: the temporary directory and caches live inside Tandem's state, which is hidden.
  const own = [spec.workspace, spec.tmpDir, ...spec.writable];
  const shown = [...own, ...spec.readable];
  // The last matching rule wins: a hidden directory holding what the terminal uses is denied
  // first, what it uses is allowed after it, and every other hidden path is denied after that.
  const holds = (entry: HiddenPath) => entry.dir && shown.some((path) => within(path, entry.path));
  const holders = spec.hidden.filter(holds);
  const others = spec.hidden.filter((entry) => !holds(entry));
  if (holders.length > 0) {
    lines.push(`(deny file-read* file-write* ${holders.map(pathFilter).join(' ')})`);
    lines.push(`(allow file-read* ${shown.map((path) => `(subpath ${sbString(path)})`).join(' ')})`);
  }
  const writable = spec.mode === 'workspace-write' ? own.map((path) => `(subpath ${sbString(path)})`) : [];
  lines.push(`(allow file-write* ${[...devices, ...writable].join(' ')})`);
  if (others.length > 0) lines.push(`(deny file-read* file-write* ${others.map(pathFilter).join(' ')})`);
  if (spec.protectedPaths.length > 0) {
    lines.push(`(deny file-write* ${spec.protectedPaths.map(pathFilter).join(' ')})`);
  }
  if (spec.hidden.length > 0) lines.push(`(deny network-outbound ${spec.hidden.map(socketFilter).join(' ')})`);
  // No private network on macOS: every connection is refused, except (network on) the one to the
  // terminal's proxy on loopback, which checks each target (proxy.ts). Unix sockets are refused too.
  lines.push('(deny network*)');
  if (spec.network && spec.proxy && 'port' in spec.proxy) lines.push(`(allow network-outbound (remote ip ${sbString(`localhost:${spec.proxy.port}`)}))`);
  return `${lines.join('\n')}\n`;
}
