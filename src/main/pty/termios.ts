/**
 * The terminal's line discipline modes, read from outside with stty. This works even when the
 * foreground program is setuid (sudo, passwd) and /proc/<pid>/syscall is denied: echo off with
 * canonical mode on is a password prompt; ISIG off means raw mode (send ^C as a byte).
 */
import { execFile } from 'node:child_process';

export interface TtyModes {
  echo: boolean;
  icanon: boolean;
  isig: boolean;
}

const STTY_TIMEOUT_MS = 500;

export function readTtyModes(ttyPath: string): Promise<TtyModes | null> {
  // GNU stty names the device with -F, BSD/macOS stty with -f. stty runs as a non-session-leader
  // child, so opening the slave cannot make it anyone's controlling terminal.
  const args = ['-a', process.platform === 'linux' ? '-F' : '-f', ttyPath];
  return new Promise((resolve) => {
    execFile('stty', args, { timeout: STTY_TIMEOUT_MS }, (err, stdout) => {
      if (err) return resolve(null);
      const flags = new Map<string, boolean>();
      for (const token of stdout.split(/[\s;]+/)) {
        const m = /^(-?)(echo|icanon|isig)$/.exec(token);
        if (m) flags.set(m[2]!, m[1] === '');
      }
      const echo = flags.get('echo');
      const icanon = flags.get('icanon');
      const isig = flags.get('isig');
      resolve(echo === undefined || icanon === undefined || isig === undefined ? null : { echo, icanon, isig });
    });
  });
}
