/**
 * Which source of process evidence this host uses, chosen once: /proc on Linux, ps where there
 * is no /proc (macOS) or where TANDEM_EVIDENCE=ps asks for it (so Linux runs the macOS code
 * path), none when neither works (then waiting is only the end marker and the continuation
 * prompt). instance.json names the choice (`evidence`).
 */
import fs from 'node:fs';
import { psWorks } from './ps-source.js';

export type EvidenceTier = 'proc' | 'ps' | 'none';

export interface TierChecks {
  procfs: () => boolean;
  ps: () => boolean;
}

const hostChecks: TierChecks = { procfs: () => fs.existsSync('/proc/self/stat'), ps: () => psWorks() };

export function chooseEvidence(os: NodeJS.Platform, env: NodeJS.ProcessEnv, checks: TierChecks = hostChecks): EvidenceTier {
  if (os === 'win32') return 'none';
  const asked = env.TANDEM_EVIDENCE?.trim().toLowerCase() || undefined;
  if (asked !== undefined && asked !== 'proc' && asked !== 'ps' && asked !== 'none') {
    process.stderr.write(`tandem: TANDEM_EVIDENCE=${env.TANDEM_EVIDENCE} is not proc, ps or none; using the default\n`);
  }
  if (asked === 'none') return 'none';
  if (asked === 'ps') return checks.ps() ? 'ps' : 'none';
  if (os === 'linux' && checks.procfs()) return 'proc';
  return checks.ps() ? 'ps' : 'none';
}

let chosen: EvidenceTier | undefined;

/** This host's tier (process.env at first use decides). */
export function hostEvidence(): EvidenceTier {
  chosen ??= chooseEvidence(process.platform, process.env);
  return chosen;
}
