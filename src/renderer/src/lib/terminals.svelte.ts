import type { OpArgs, OpName, OpResult, TandemApi, TerminalView } from '../../../shared/contract';
import { plural } from './format';
import { type Problem, toProblem } from './problem';
import { setHostWindowsPty } from '../terminal/xterm-view';
import { moveTo, TabOrder } from './tab-order';

export type Environment = OpResult<'environment'>;
export type MachineState = OpResult<'machines'>['machines'][number];

/** Local terminals first, then each machine's together (machines in the order the host lists them), each group in tab order. */
export function groupByMachine(list: readonly TerminalView[], machines: readonly MachineState[]): TerminalView[] {
  const key = (terminal: TerminalView): string => (terminal.machine && terminal.machine !== 'local' ? terminal.machine : '');
  const names = ['', ...machines.map((machine) => machine.name)];
  for (const terminal of list) if (!names.includes(key(terminal))) names.push(key(terminal));
  return names.flatMap((name) => list.filter((terminal) => key(terminal) === name));
}

export type CloseState = { phase: 'closing' } | { phase: 'failed'; message: string };

/** Survives a reload of this window (or browser tab), not a new one. */
const activeKey = 'tandem.activeTerminal';

function readActive(): string | null {
  try {
    return sessionStorage.getItem(activeKey);
  } catch {
    return null;
  }
}

function writeActive(id: string | null): void {
  try {
    if (id) sessionStorage.setItem(activeKey, id);
    else sessionStorage.removeItem(activeKey);
  } catch {
    // Storage can be unavailable (privacy settings); the active tab is then not remembered.
  }
}

/**
 * The host's terminals as tabs: the roster (the host keeps terminals; this mirrors them), the
 * active tab, and the person's operations on them with their progress and failures.
 */
export class TerminalsStore {
  list = $state.raw<TerminalView[]>([]);
  activeId = $state<string | null>(readActive());
  /** True once the roster has been read from the host at least once. */
  loaded = $state(false);
  environment = $state.raw<Environment | null>(null);
  /** Remote machines (`tandem serve --machine`): read again on every roster event, which follows their state. */
  machines = $state.raw<MachineState[]>([]);
  closing = $state<Record<string, CloseState>>({});
  creating = $state(false);
  /** The latest failed operation, shown until dismissed. */
  notice = $state<Problem | null>(null);
  readonly active = $derived(this.list.find((terminal) => terminal.id === this.activeId) ?? null);

  private api: TandemApi | null = null;
  private readonly order = new TabOrder();
  private offRoster = (): void => undefined;

  /** Reads the roster and environment from a (new) connection and follows the roster. */
  async bind(api: TandemApi): Promise<void> {
    this.offRoster();
    this.api = api;
    this.offRoster = api.on('roster', ({ terminals }) => {
      this.applyRoster(terminals);
      void this.readMachines(api);
    });
    const [{ terminals }, environment] = await Promise.all([api.call('list', {}), api.call('environment', {}), this.readMachines(api)]);
    if (this.api !== api) return;
    setHostWindowsPty(environment.windowsPty);
    this.applyRoster(terminals);
    this.environment = environment;
    this.loaded = true;
  }

  /** Reads the machines again (their agents change with the agents event, not the roster). */
  async refreshMachines(): Promise<void> {
    if (this.api) await this.readMachines(this.api);
  }

  private async readMachines(api: TandemApi): Promise<void> {
    try {
      const { machines } = await api.call('machines', {});
      if (this.api !== api) return;
      this.machines = machines;
      this.list = groupByMachine(this.list, machines);
    } catch {
      // An older host without the operation: no machines to show.
    }
  }

  private applyRoster(terminals: TerminalView[]): void {
    const previous = this.list;
    this.list = groupByMachine(this.order.apply(terminals), this.machines);
    const listed = (id: string | null): boolean => terminals.some((terminal) => terminal.id === id);
    for (const id of Object.keys(this.closing)) if (!listed(id)) delete this.closing[id];
    if (listed(this.activeId)) return;
    // The active tab went away: its right neighbour, else its left one.
    const index = previous.findIndex((terminal) => terminal.id === this.activeId);
    const survivors = previous.filter((terminal) => listed(terminal.id));
    const neighbour = index >= 0 ? (previous.slice(index + 1).find((terminal) => listed(terminal.id)) ?? survivors.at(-1)) : undefined;
    this.select(neighbour?.id ?? terminals[0]?.id ?? null);
  }

  /** The host that ran these terminals is gone (stopped or replaced): drops every tab; returns how many there were. */
  forgetAll(): number {
    const count = this.list.length;
    this.list = [];
    this.closing = {};
    this.select(null);
    return count;
  }

  private upsert(view: TerminalView): void {
    const index = this.list.findIndex((terminal) => terminal.id === view.id);
    this.list = index >= 0 ? this.list.with(index, view) : [...this.list, view];
  }

  /** Drag and drop: the tab goes to `index` among the others. */
  move(id: string, index: number): void {
    this.list = groupByMachine(moveTo(this.list, id, index), this.machines);
    this.order.remember(this.list);
  }

  select(id: string | null): void {
    this.activeId = id;
    writeActive(id);
  }

  /** Moves to the next (1) or previous (-1) tab, wrapping around. */
  cycle(step: 1 | -1): void {
    if (this.list.length === 0) return;
    const index = this.list.findIndex((terminal) => terminal.id === this.activeId);
    const next = (index + step + this.list.length) % this.list.length;
    this.select(this.list[next]?.id ?? null);
  }

  /** Runs an operation; a failure becomes the notice and the result null. */
  async run<K extends OpName>(op: K, args: OpArgs<K>): Promise<OpResult<K> | null> {
    const api = this.api;
    if (!api) return null;
    try {
      return await api.call(op, args);
    } catch (error) {
      this.notice = toProblem(error);
      return null;
    }
  }

  /** Opens a terminal (in `cwd`, else the home directory) and selects its tab; false when it could not be opened. */
  async create(shell?: string, size?: { cols: number; rows: number } | null, cwd?: string | null, machine?: string): Promise<boolean> {
    if (this.creating) return false;
    this.creating = true;
    try {
      const view = await this.run('create', { ...(shell ? { shell } : {}), ...(size ?? {}), ...(cwd ? { cwd } : {}), ...(machine ? { machine } : {}) });
      if (!view) return false;
      this.upsert(view);
      this.list = groupByMachine(this.list, this.machines);
      this.select(view.id);
      return true;
    } finally {
      this.creating = false;
    }
  }

  /** Adds a remote machine (the settings' form): null when added (its progress then shows in `machines`), else why not. */
  async addMachine(name: string, destination: string): Promise<string | null> {
    const api = this.api;
    if (!api) return 'Tandem is not connected.';
    try {
      await api.call('addMachine', { name: name.trim(), destination: destination.trim() });
      await this.readMachines(api);
      return null;
    } catch (error) {
      return toProblem(error).message;
    }
  }

  /** Close awaits the host's teardown; survivors keep the tab, with the reason and a retry. */
  async close(id: string): Promise<void> {
    const api = this.api;
    if (!api || this.closing[id]?.phase === 'closing') return;
    this.closing[id] = { phase: 'closing' };
    try {
      const result = await api.call('close', { id });
      if (result.closed) {
        delete this.closing[id];
        this.applyRoster(this.list.filter((terminal) => terminal.id !== id));
        return;
      }
      const names = result.orphans.map((orphan) => `${orphan.comm} (${orphan.pid})`).join(', ');
      this.closing[id] = { phase: 'failed', message: `${plural(result.orphans.length, 'process', 'processes')} could not be stopped: ${names}.` };
    } catch (error) {
      const problem = toProblem(error);
      if (problem.code === 'not_found') {
        delete this.closing[id];
        this.applyRoster(this.list.filter((terminal) => terminal.id !== id));
        return;
      }
      this.closing[id] = { phase: 'failed', message: problem.message };
    }
  }

  /** Removes a transcript tab (a closed terminal kept read-only). */
  async dismiss(id: string): Promise<void> {
    const api = this.api;
    if (!api) return;
    try {
      await api.call('dismiss', { id });
    } catch (error) {
      const problem = toProblem(error);
      if (problem.code !== 'not_found') {
        this.notice = problem;
        return;
      }
    }
    this.applyRoster(this.list.filter((terminal) => terminal.id !== id));
  }

  /** A new terminal of the person's own in a transcript's last directory, beside it. */
  async openShellHere(info: TerminalView): Promise<boolean> {
    return this.create(undefined, null, info.cwd, info.machine && info.machine !== 'local' ? info.machine : undefined);
  }

  dismissCloseFailure(id: string): void {
    delete this.closing[id];
  }

  async rename(id: string, title: string): Promise<void> {
    const trimmed = title.trim();
    const current = this.list.find((terminal) => terminal.id === id);
    if (!trimmed || trimmed === current?.title) return;
    const view = await this.run('rename', { id, title: trimmed.slice(0, 120) });
    if (view) this.upsert(view);
  }

  /**
   * A fresh shell under the same id. The view then attaches again: the new shell's first
   * output (its prompt) precedes the host's switch to it, so only a new snapshot shows it.
   */
  async reset(id: string, view: { attach(): Promise<void> }): Promise<void> {
    if (await this.update('reset', { id })) await view.attach();
  }

  /** Operations whose result is the terminal's new view. */
  async update<K extends 'share' | 'handToAgent' | 'takeControl' | 'handBack' | 'reset'>(op: K, args: OpArgs<K>): Promise<boolean> {
    const view = (await this.run(op, args)) as TerminalView | null;
    if (view) this.upsert(view);
    return view !== null;
  }
}

export const terminals = new TerminalsStore();
