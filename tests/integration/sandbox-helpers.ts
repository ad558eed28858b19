import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

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
