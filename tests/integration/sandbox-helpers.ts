import { describe } from 'vitest';
import { bubblewrap } from '../support/capabilities.js';

/** bubblewrap is installed and may create its namespaces here (the capability, not the OS name). */
export const sandboxAvailable = bubblewrap.present;

/** CI sets TANDEM_REQUIRE_SANDBOX=1 so that a missing bubblewrap fails the run instead of skipping it. */
export const sandboxRequired = bubblewrap.required;

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
