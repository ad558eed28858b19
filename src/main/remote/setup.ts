/**
 * How a Tandem (the desktop app, `tandem serve`) starts its remote machines: the ones given
 * (`--machine NAME=DESTINATION`) and the ones the person added in the app, kept in the settings'
 * `machines` list. `TANDEM_SSH` (the ssh command and options, split at spaces) and
 * `TANDEM_REMOTE_COMMAND` (what runs there) change how they are reached, for tests.
 */
import type { MachineEntry } from '../../shared/settings.js';
import { systemClock } from '../clock.js';
import { RemoteMachine } from './machine.js';
import { type MachineFactory, type MachineSettings, RemoteMachines } from './machines.js';

export function machineFactory(env: NodeJS.ProcessEnv, version: string, log: (line: string) => void): MachineFactory {
  const ssh = env.TANDEM_SSH?.trim() ? env.TANDEM_SSH.trim().split(/\s+/) : undefined;
  return (name, destination) =>
    new RemoteMachine({ name, destination, clock: systemClock, version, ssh, remoteCommand: env.TANDEM_REMOTE_COMMAND || undefined, log });
}

export interface RemoteSetup {
  env: NodeJS.ProcessEnv;
  version: string;
  /** Lines for the person (serve: stderr). */
  log: (line: string) => void;
  /** `--machine` ones: this run only. */
  given: readonly MachineEntry[];
  /** Where the app's machines are kept and followed (null: nowhere, addMachine lasts for this run). */
  settings: MachineSettings | null;
  /** Sentences about saved entries that were refused (malformed settings.json), logged once. */
  refused?: readonly string[];
}

/** Every machine, started: always present (maybe empty), since machines can be added while it runs. */
export function startRemoteMachines(setup: RemoteSetup): RemoteMachines {
  const log = (line: string) => setup.log(`tandem: ${line}`);
  const all = new RemoteMachines(machineFactory(setup.env, setup.version, log), log);
  for (const { name, destination } of setup.given) all.add(all.make(name, destination));
  for (const sentence of setup.refused ?? []) log(sentence);
  if (setup.settings) all.keepIn(setup.settings);
  all.start();
  return all;
}
