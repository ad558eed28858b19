/**
 * The desktop app's system opener for clicked paths: Electron's `shell.openPath`, which
 * resolves with an error message (empty on success) instead of rejecting. Passed in so a test
 * runs this without Electron; this module does not import electron.
 */
import { TandemError } from '../../shared/errors.js';

export function electronSystemOpen(openPath: (path: string) => Promise<string>): (path: string) => Promise<void> {
  return async (path) => {
    const problem = await openPath(path);
    if (problem) throw new TandemError('not_found', `Could not open ${path}: ${problem}`);
  };
}
