import type { TerminalView } from '../../../shared/contract';

/** A path with the home directory shown as `~`. */
export function shortPath(path: string | null, home: string | null): string {
  if (!path) return '';
  if (home && (path === home || path.startsWith(`${home}/`))) return `~${path.slice(home.length)}`;
  return path;
}

export function statusLabel(info: TerminalView): string {
  switch (info.status) {
    case 'starting':
      return 'Starting';
    case 'idle':
      return 'Idle';
    case 'running':
      return 'Running';
    case 'waiting_input':
      return 'Waiting for input';
    case 'exited':
      return info.exitCode === null ? 'Exited' : `Exited with code ${info.exitCode}`;
  }
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
