/**
 * Every remote machine of this host, as the Dispatcher sees them: `RemoteMachines` routes the
 * UI's operations on remote terminals, views and recordings to their machine (ids carry the
 * machine's name: `NAME:id`), puts their terminals in the roster with `machine: NAME`, and adds
 * and forgets machines as the person does in the app.
 */
import type { AgentsState, OpName, OpResult, TerminalView } from '../../shared/contract.js';
import { TandemError } from '../../shared/errors.js';
import type { FrameSink } from '../host/attachment.js';
import { machineNamePattern, type MachineEntry } from '../../shared/settings.js';
import { type MachineStatus, RemoteMachine } from './machine.js';

/** The terminal operations a remote terminal takes by its id. */
const byTerminalId: ReadonlySet<OpName> = new Set<OpName>(['rename', 'close', 'share', 'handToAgent', 'takeControl', 'handBack', 'reset', 'clearScrollback']);

/** Makes a machine the way this Tandem reaches machines (its ssh, remote command, version and log). */
export type MachineFactory = (name: string, destination: string) => RemoteMachine;

/** Where machines added in the app are kept: the person's settings (src/main/host/settings-store.ts). */
export interface MachineSettings {
  get(): { machines: MachineEntry[] };
  update(patch: { machines: MachineEntry[] }): unknown;
  onChange(listener: (settings: { machines: MachineEntry[] }) => void): () => void;
}

/** Every machine of this host, as the Dispatcher sees them. */
export class RemoteMachines {
  readonly machines = new Map<string, RemoteMachine>();
  private readonly listeners = new Set<() => void>();
  private readonly agentListeners = new Set<() => void>();
  private readonly offs = new Map<string, () => void>();
  /** Names of the machines that come from the settings (kept across restarts); the rest were given (`--machine`). */
  private readonly saved = new Set<string>();
  private settings: MachineSettings | null = null;
  private settingsOff: (() => void) | null = null;
  private started = false;

  /** `factory`: how `addMachine` and the settings make one (none: machines are only added in code). */
  constructor(
    private readonly factory: MachineFactory | null = null,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /**
   * Keeps the machines added in the app in `settings` (its `machines` list) and follows that list:
   * an entry added there starts a machine, one removed stops it. A name already given with
   * `--machine` stays the given one.
   */
  keepIn(settings: MachineSettings): void {
    if (!this.factory) throw new Error('RemoteMachines without a factory cannot follow settings.');
    this.settingsOff?.();
    this.settings = settings;
    this.settingsOff = settings.onChange((values) => this.follow(values.machines));
    this.follow(settings.get().machines);
  }

  private follow(entries: readonly MachineEntry[]): void {
    const wanted = new Map(entries.map((entry) => [entry.name, entry.destination]));
    let changed = false;
    for (const name of [...this.saved]) {
      const machine = this.machines.get(name);
      if (!wanted.has(name) || (machine && machine.destination !== wanted.get(name))) {
        this.drop(name, `${name} was removed from Tandem's machines.`);
        changed = true;
      }
    }
    for (const [name, destination] of wanted) {
      const given = this.machines.get(name);
      if (given) {
        if (!this.saved.has(name)) this.log(`the saved machine ${name} (${destination}) is not used: --machine ${name}=${given.destination} is given.`);
        continue;
      }
      const machine = this.factory!(name, destination);
      this.add(machine);
      this.saved.add(name);
      if (this.started) machine.start();
      changed = true;
    }
    if (changed) this.emit();
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }

  /** Stops a machine, ends its views and takes it (and its terminals) out of the roster. */
  private drop(name: string, why: string): void {
    const machine = this.machines.get(name);
    this.saved.delete(name);
    if (!machine) return;
    this.offs.get(name)?.();
    this.offs.delete(name);
    this.machines.delete(name);
    machine.stop();
    machine.closeViews(why);
  }

  /** A machine added while Tandem runs (the `addMachine` operation): checked as `--machine` is, started at once, kept in the settings when they are followed. */
  addMachine({ name, destination }: { name: string; destination: string }): {
    name: string;
    destination: string;
    status: MachineStatus;
    problem: string | null;
  } {
    if (!this.factory) throw new TandemError('not_running', 'This Tandem cannot add remote machines while it runs.');
    if (!machineNamePattern.test(name) || name === 'local')
      throw new TandemError('invalid_argument', `The name must be 1-32 letters, digits, '.', '_' or '-' (not "local"), as in dev.`);
    if (destination.startsWith('-') || /\s/.test(destination))
      throw new TandemError('invalid_argument', 'The destination must be an ssh destination such as me@devbox or a Host of ~/.ssh/config.');
    if (this.machines.has(name)) throw new TandemError('invalid_argument', `A machine is already named ${name}.`);
    let machine: RemoteMachine | undefined;
    if (this.settings) {
      // Saved first: following the settings starts it (and every window's settings hear of it).
      const list = this.settings.get().machines;
      this.settings.update({ machines: [...list.filter((entry) => entry.name !== name), { name, destination }] });
      machine = this.machines.get(name);
    }
    if (!machine) {
      machine = this.factory(name, destination);
      this.add(machine);
      if (this.settings) this.saved.add(name);
      machine.start();
      // Every UI reads the machines again on the roster that follows.
      this.emit();
    }
    return { name, destination, status: machine.status, problem: machine.problem };
  }

  /**
   * Removes a machine (the `removeMachine` operation): its link stops, its views end, its
   * terminals leave the roster (they go on running on the machine, under its daemon's idle
   * bound), and a saved one is taken out of the settings. A `--machine` one is gone for this run.
   */
  removeMachine({ name }: { name: string }): Record<string, never> {
    if (!this.machines.has(name)) throw new TandemError('not_found', `No machine named "${name}".`);
    if (this.settings && this.saved.has(name)) this.settings.update({ machines: this.settings.get().machines.filter((entry) => entry.name !== name) });
    // Following the settings dropped it already, unless they did not tell their listeners at once.
    if (this.machines.has(name)) {
      this.drop(name, `${name} was removed from Tandem's machines.`);
      this.emit();
    }
    return {};
  }

  /** A machine made as this Tandem makes them (not added). */
  make(name: string, destination: string): RemoteMachine {
    if (!this.factory) throw new Error('RemoteMachines without a factory cannot make machines.');
    return this.factory(name, destination);
  }

  add(machine: RemoteMachine): void {
    if (this.machines.has(machine.name)) throw new Error(`Two machines are named ${machine.name}.`);
    this.machines.set(machine.name, machine);
    const changeOff = machine.onChange(() => this.emit());
    const agentsOff = machine.onAgents(() => {
      for (const listener of this.agentListeners) listener();
    });
    this.offs.set(machine.name, () => {
      changeOff();
      agentsOff();
    });
  }

  onAgents(listener: () => void): () => void {
    this.agentListeners.add(listener);
    return () => this.agentListeners.delete(listener);
  }

  /**
   * The local agents panel with every machine's questions in it: pairing requests, approvals and
   * handoffs with ids and terminal ids as `NAME:<remote id>`, the agent as `agent@NAME` (so a
   * policy change meant for it never lands on a local agent of the same name).
   */
  agentsOverlay(local: AgentsState): AgentsState {
    const approvals = [...local.approvals];
    const handoffs = [...local.handoffs];
    const pairings = [...local.pairings];
    for (const machine of this.machines.values()) {
      const remote = machine.agents;
      if (!remote) continue;
      const at = (id: string) => `${machine.name}:${id}`;
      for (const approval of remote.approvals)
        approvals.push({ ...approval, id: at(approval.id), terminalId: at(approval.terminalId), agent: `${approval.agent}@${machine.name}` });
      for (const pairing of remote.pairings) pairings.push({ ...pairing, id: at(pairing.id), name: `${pairing.name}@${machine.name}` });
      for (const handoff of remote.handoffs)
        handoffs.push({ ...handoff, id: at(handoff.id), terminalId: at(handoff.terminalId), agent: `${handoff.agent}@${machine.name}` });
    }
    return { ...local, pairings, approvals, handoffs };
  }

  start(): void {
    this.started = true;
    for (const machine of this.machines.values()) machine.start();
  }

  stop(): void {
    this.settingsOff?.();
    this.settingsOff = null;
    for (const machine of this.machines.values()) machine.stop();
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Each machine's name, destination, link state and why it is down, and the agents paired there
   * as its host last told (the `machines` operation).
   */
  machineStates(): OpResult<'machines'>['machines'] {
    return [...this.machines.values()].map((machine) => ({
      name: machine.name,
      destination: machine.destination,
      status: machine.status,
      problem: machine.status === 'connected' ? null : machine.problem,
      agents: machine.agents?.paired ?? [],
      allowedOnce: machine.agents?.allowedOnce ?? [],
      deniedClaims: machine.agents?.deniedClaims ?? [],
      sandboxProblem: machine.agents?.sandboxProblem ? { message: machine.agents.sandboxProblem.message } : null,
    }));
  }

  /** Every remote terminal, with its machine, as the roster shows it. */
  roster(): TerminalView[] {
    const all: TerminalView[] = [];
    for (const machine of this.machines.values()) for (const terminal of machine.terminals) all.push(this.mapped(machine, terminal));
    return all;
  }

  private mapped(machine: RemoteMachine, terminal: TerminalView): TerminalView {
    return {
      ...terminal,
      id: `${machine.name}:${terminal.id}`,
      machine: machine.name,
      machineLink: machine.status === 'connected' ? 'connected' : machine.status === 'failed' ? 'failed' : 'reconnecting',
    };
  }

  owns(terminalId: string): boolean {
    return this.split(terminalId) !== null;
  }

  private split(id: string): { machine: RemoteMachine; remoteId: string } | null {
    const at = id.indexOf(':');
    if (at <= 0) return null;
    const machine = this.machines.get(id.slice(0, at));
    return machine ? { machine, remoteId: id.slice(at + 1) } : null;
  }

  private viewOf(attachmentId: string, clientId: string): { machine: RemoteMachine; view: NonNullable<ReturnType<RemoteMachine['view']>> } | null {
    for (const machine of this.machines.values()) {
      const view = machine.view(attachmentId, clientId);
      if (view) return { machine, view };
    }
    return null;
  }

  /** Runs `op` when it is about a remote terminal or view; null when it is this machine's. */
  route(op: OpName, args: Record<string, unknown>, clientId: string, sink: FrameSink): Promise<unknown> | null {
    if (op === 'create') {
      const name = args.machine as string | undefined;
      if (name === undefined || name === 'local') return null;
      const machine = this.machines.get(name);
      if (!machine) return Promise.reject(new TandemError('not_found', `No machine named "${name}"; add it with tandem serve --machine ${name}=DESTINATION.`));
      const { machine: _drop, ...rest } = args;
      return machine.call('create', rest).then((view) => {
        machine.created(view as TerminalView);
        return this.mapped(machine, view as TerminalView);
      });
    }
    if (op === 'attach' || byTerminalId.has(op) || op === 'openPath') {
      const target = this.split(args.id as string);
      if (!target) return null;
      const { machine, remoteId } = target;
      if (op === 'openPath')
        return Promise.reject(new TandemError('invalid_argument', `That path is on ${machine.name}; Tandem opens only this computer's files.`));
      if (op === 'attach') {
        return machine
          .attach(remoteId, clientId, sink, { cols: args.cols as number | undefined, rows: args.rows as number | undefined })
          .then((result) => ({ ...result, info: this.mapped(machine, result.info) }));
      }
      return machine.call(op, { ...args, id: remoteId }).then((value) => (isView(value) ? this.mapped(machine, value) : value));
    }
    if (op === 'timeline' && typeof args.terminalId === 'string') {
      const target = this.split(args.terminalId);
      if (!target) return null;
      const { machine, remoteId } = target;
      return machine.call(op, { ...args, terminalId: remoteId }).then((value) => {
        const read = value as OpResult<'timeline'>;
        return {
          ...read,
          records: read.records.map((r) => ({ ...r, recordingId: `${machine.name}:${r.recordingId}`, terminalId: `${machine.name}:${r.terminalId}` })),
          chains: read.chains.map((c) => ({ ...c, recordingId: `${machine.name}:${c.recordingId}`, terminalId: `${machine.name}:${c.terminalId}` })),
        };
      });
    }
    if (op === 'exportRecording' || op === 'readRecordingCast') {
      const target = this.split(args.id as string);
      if (!target) return null;
      const { machine, remoteId } = target;
      return machine
        .call(op, { ...args, id: remoteId })
        .then((value) => ({ ...(value as { id: string }), id: `${machine.name}:${(value as { id: string }).id}` }));
    }
    if (op === 'setAgentPolicy' || op === 'revokeAgent' || op === 'revokeAllowedOnce' || op === 'liftPairingDenial') {
      // An agent paired on a machine: the person changes or revokes it there, as that host's own
      // panel would (their ssh session is their authority there). Its token never crosses.
      const name = args.machine as string | undefined;
      if (name === undefined || name === 'local') return null;
      const machine = this.machines.get(name);
      if (!machine) return Promise.reject(new TandemError('not_found', `No machine named "${name}".`));
      const { machine: _drop, ...rest } = args;
      return machine.call(op, rest);
    }
    if (op === 'answerApproval' || op === 'answerHandoff' || op === 'answerPairing') {
      const target = this.split(args.requestId as string);
      if (!target) return null;
      return target.machine.call(op, { ...args, requestId: target.remoteId });
    }
    if (op === 'detach' || op === 'input' || op === 'resize' || op === 'ack') {
      const found = this.viewOf(args.attachmentId as string, clientId);
      if (!found) return null;
      const { machine, view } = found;
      if (op === 'detach') {
        machine.detach(view.localId);
        return Promise.resolve({});
      }
      if (op === 'ack') {
        const seq = machine.acknowledged(view, args.seq as number);
        return seq === null ? Promise.resolve({}) : machine.call('ack', { attachmentId: view.remoteId, seq });
      }
      return machine.call(op, { ...args, attachmentId: view.remoteId });
    }
    return null;
  }

  detachClient(clientId: string): void {
    for (const machine of this.machines.values()) machine.detachClient(clientId);
  }

  /** "Deny all" on every connected machine whose pairing requests wait in the panel. */
  async denyAllPairings(): Promise<void> {
    const asking = [...this.machines.values()].filter((machine) => machine.status === 'connected' && (machine.agents?.pairings.length ?? 0) > 0);
    await Promise.allSettled(asking.map((machine) => machine.call('denyAllPairings', {})));
  }

  /** The recordings of every connected machine, their ids with the machine's name; a machine that does not answer is left out. */
  async recordings(): Promise<OpResult<'listRecordings'>['recordings']> {
    const connected = [...this.machines.values()].filter((machine) => machine.status === 'connected');
    const lists = await Promise.allSettled(connected.map((machine) => machine.call('listRecordings', {})));
    return lists.flatMap((list, i) => {
      if (list.status !== 'fulfilled') return [];
      const name = connected[i]!.name;
      return (list.value as OpResult<'listRecordings'>).recordings.map((r) => ({ ...r, id: `${name}:${r.id}`, terminalId: `${name}:${r.terminalId}` }));
    });
  }
}

function isView(value: unknown): value is TerminalView {
  return typeof value === 'object' && value !== null && 'id' in value && 'status' in value && 'shell' in value;
}
