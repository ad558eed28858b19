/**
 * The sandbox-exec (Seatbelt) profile of a confined terminal (macOS). Pure text. Seatbelt
 * applies the last rule that matches an operation, so the profile goes from broad to narrow:
 * allow by default, refuse every file write, allow the workspace, the private temporary
 * directory, the caches and the terminal devices, refuse again what stays read-only in the
 * workspace, then hide reads (and socket connects) of the hidden paths, and cut the network.
 *
 * sandbox-exec runs the shell in the same process and session, so the controlling terminal
 * and job control are untouched. What it cannot do that bubblewrap does: a private process
 * table (`ps` still lists the machine's processes) and a private /dev.
 */
import type { HiddenPath, SandboxSpec } from './types.js';

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
  return entry.dir
    ? `(remote unix-socket (path-regex #"^${regexEscape(entry.path)}/"))`
    : `(remote unix-socket (path-literal ${sbString(entry.path)}))`;
}

export function seatbeltProfile(spec: SandboxSpec): string {
  const lines = ['(version 1)', '(allow default)', '(deny file-write*)'];
  const devices = ['(literal "/dev/null")', '(literal "/dev/zero")', '(literal "/dev/tty")', '(regex #"^/dev/ttys[0-9]+$")', '(literal "/dev/dtracehelper")'];
  const writable = spec.mode === 'workspace-write' ? [spec.workspace, spec.tmpDir, ...spec.writable].map((path) => `(subpath ${sbString(path)})`) : [];
  lines.push(`(allow file-write* ${[...devices, ...writable].join(' ')})`);
  if (spec.protectedPaths.length > 0) {
    lines.push(`(deny file-write* ${spec.protectedPaths.map(pathFilter).join(' ')})`);
  }
  if (spec.hidden.length > 0) {
    lines.push(`(deny file-read* file-write* ${spec.hidden.map(pathFilter).join(' ')})`);
    lines.push(`(deny network-outbound ${spec.hidden.map(socketFilter).join(' ')})`);
  }
  if (!spec.network) lines.push('(deny network*)');
  return `${lines.join('\n')}\n`;
}
