import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe } from 'vitest';

/** bubblewrap is installed and may create its namespaces here. */
export const sandboxAvailable =
  process.platform === 'linux' &&
  existsSync('/usr/bin/bwrap') &&
  spawnSync('/usr/bin/bwrap', ['--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--unshare-pid', '--unshare-net', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', 'true'], { timeout: 5000 }).status === 0;

/** CI sets TANDEM_REQUIRE_SANDBOX=1 so that a missing bubblewrap fails the run instead of skipping it. */
export const sandboxRequired = process.env.TANDEM_REQUIRE_SANDBOX === '1';

if (!sandboxAvailable && !sandboxRequired) {
  console.warn('sandbox tests: skipped, bubblewrap is missing or cannot create namespaces here (set TANDEM_REQUIRE_SANDBOX=1 to fail instead).');
}

/**
 * A suite that needs bubblewrap: under TANDEM_REQUIRE_SANDBOX=1 it runs wherever it is, so a
 * missing or forbidden bubblewrap fails its tests (sandbox_unavailable) instead of skipping them.
 */
export const describeSandbox = sandboxRequired ? describe : describe.runIf(sandboxAvailable);

/** A tool a confined test needs is present, or the run requires it (so its absence fails the test). */
export const needed = (present: boolean): boolean => present || sandboxRequired;
