import { randomBytes } from 'node:crypto';
import { type FrameSink, type OutputText, outputString } from './attachment.js';
import {
  type AgentsState,
  describeIssue,
  type EventName,
  type EventPayload,
  isOpName,
  type OpArgs,
  type OpName,
  operations,
  type OpResult,
  type TerminalView,
} from '../../shared/contract.js';
import { TandemError } from '../../shared/errors.js';
import type { FrameMark } from '../../shared/command-marks.js';
import type { TerminalHost } from './host.js';
import { readTimelines } from '../record/timeline.js';
import { openResolved, type PathOpenerOptions, resolveClickedPath, startDetached, systemOpenerArgv } from './open-path.js';
import { agentFiles, agentRefusals, removeAgentFiles } from '../sandbox/agent-files.js';
import { onProxyRefusal } from '../sandbox/proxy.js';

/** One connected UI (a renderer, a browser tab): where its events go. */
export interface UiClient {
  readonly id: string;
  send<K extends EventName>(event: K, payload: EventPayload<K>): void;
  /** An output frame as the reads it was batched from; without this, `send('output')` gets them joined. */
  sendOutput?(attachmentId: string, seq: number, data: OutputText, marks?: readonly FrameMark[]): void;
}

type Handlers = { [K in OpName]: (args: ReturnType<(typeof operations)[K]['args']['parse']>) => Promise<OpResult<K>> | OpResult<K> };

/** The agents panel's operations, implemented by the agent layer (which depends on the host, not the reverse). */
export interface AgentPanel {
  state(): AgentsState;
  onChange(listener: (state: AgentsState) => void): () => void;
  pairAgent(args: OpArgs<'pairAgent'>): OpResult<'pairAgent'>;
  revokeAgent(args: OpArgs<'revokeAgent'>): void;
  setAgentPolicy(args: OpArgs<'setAgentPolicy'>): void;
  answerPairing(args: OpArgs<'answerPairing'>): void;
  denyAllPairings(): void;
  liftPairingDenial(args: OpArgs<'liftPairingDenial'>): void;
  revokeAllowedOnce(args: OpArgs<'revokeAllowedOnce'>): void;
  answerApproval(args: OpArgs<'answerApproval'>): void;
  answerHandoff(args: OpArgs<'answerHandoff'>): void;
}

/** The desktop app's ways of calling the person; `tandem serve` has none (the page uses the browser's). */
export interface DesktopAttention {
  /** A system notification; `onClick` runs when the person clicks it. */
  notify(notification: { title: string; body: string }, onClick: () => void): void;
  /** The count of what waits for the person (badge), and a flash of the window when it grew. */
  attention(count: number, flash: boolean): void;
}

export interface DispatchOptions {
  /** Only the browser transport can mint login links. */
  mintLink?: () => string;
  agents?: AgentPanel;
  /** Only the desktop app calls the person through the system. */
  desktop?: DesktopAttention;
  /** How a clicked path opens: the app passes Electron's shell.openPath as the system opener. */
  opener?: Pick<PathOpenerOptions, 'systemOpen' | 'start'>;
  /** Remote machines (src/main/remote): their terminals join the roster and their operations go over the link. */
  remote?: RemoteRouter;
  /** Tandem's state directory: the agents' own homes live under it (agentSandbox, openAgentHome, removeAgentHome). */
  stateDir?: string;
}

/** What the Dispatcher needs of remote machines (src/main/remote/machine.ts `RemoteMachines`). */
export interface RemoteRouter {
  roster(): TerminalView[];
  onChange(listener: () => void): () => void;
  /** The call's promise when it is about a remote terminal or view (remote machines), else null. */
  route(op: OpName, args: Record<string, unknown>, clientId: string, sink: FrameSink): Promise<unknown> | null;
  detachClient(clientId: string): void;
  /** The agents panel with the machines' questions (approvals, handoffs) in it, and when they change. */
  agentsOverlay(local: AgentsState): AgentsState;
  onAgents(listener: () => void): () => void;
  /** The connected machines' recordings, for the person's list (`listRecordings`). */
  recordings?(): Promise<OpResult<'listRecordings'>['recordings']>;
  /** "Deny all" on every connected machine with pairing requests waiting (a machine that does not answer is left as it is). */
  denyAllPairings?(): Promise<void>;
  /** Each machine's name, destination and link state (the `machines` operation). */
  machineStates?(): OpResult<'machines'>['machines'];
  /** Whether a terminal id names one of the machines' terminals (`NAME:id`). */
  owns?(terminalId: string): boolean;
  /** Adds and starts a machine (the `addMachine` operation). */
  addMachine?(args: OpArgs<'addMachine'>): OpResult<'addMachine'>;
  /** Stops and forgets a machine (the `removeMachine` operation). */
  removeMachine?(args: OpArgs<'removeMachine'>): OpResult<'removeMachine'>;
}

function noDesktop(): never {
  throw new TandemError('invalid_argument', 'System notifications exist only in the desktop app; the browser shows its own.');
}

function noAgents(): never {
  throw new TandemError('not_running', 'The agent layer is not running in this host.');
}

/**
 * The transport-independent side of the contract: validates a call against its schema, runs
 * it on the host for one client, and shapes errors as contract codes. Both transports use it.
 */
export class Dispatcher {
  private readonly handlers: Handlers;
  private rosterOff: () => void;
  private readonly remote: RemoteRouter | null;
  /** Where this client's views' frames go: this machine's terminals and remote ones alike (with their command marks). */
  private readonly sink: FrameSink;
  private agentsOff: () => void;
  private readonly settingsOff: () => void;
  private readonly refusalsOff: () => void;

  constructor(
    private readonly host: TerminalHost,
    readonly client: UiClient,
    opts: DispatchOptions = {},
  ) {
    this.sink = {
      frame: (attachmentId, seq, data, marks) =>
        client.sendOutput
          ? client.sendOutput(attachmentId, seq, data, marks)
          : client.send('output', { attachmentId, seq, data: outputString(data), ...(marks ? { marks: [...marks] } : {}) }),
      closed: (attachmentId, code, message) => client.send('attachmentClosed', { attachmentId, error: { code, message } }),
      writable: (attachmentId, writable) => client.send('writable', { attachmentId, writable }),
    };
    this.rosterOff = host.onRoster((terminals) => client.send('roster', { terminals }));
    const agents = opts.agents;
    this.agentsOff = agents?.onChange((state) => client.send('agents', state)) ?? (() => undefined);
    this.settingsOff = host.settings.onChange((settings) => client.send('settings', settings));
    this.refusalsOff = onProxyRefusal((refusal) => client.send('sandboxRefusal', { ...refusal }));
    const stateDir = (): string => {
      if (!opts.stateDir) throw new TandemError('not_running', 'This Tandem keeps no agent homes (no state directory was given to it).');
      return opts.stateDir;
    };
    /** Confined terminals of an agent open now on this machine (they mount its home). */
    const confinedOf = (name: string): number => host.list().filter((view) => view.agent === name && view.sandbox !== null && !view.transcript).length;
    this.handlers = {
      environment: () => host.environment(),
      list: () => ({ terminals: host.roster() }),
      create: (args) => host.create(args),
      rename: ({ id, title }) => host.rename(id, title),
      close: ({ id }) => host.close(id, 'person', { cause: 'ui', clientId: client.id }),
      dismiss: ({ id }) => (host.dismiss(id), {}),
      attach: async ({ id, cols, rows }) => {
        if (!host.has(id) && host.transcripts.has(id)) {
          const { attachmentId, snapshot, view } = host.attachTranscript(id, client.id);
          return { attachmentId, snapshot, seq: 0, writable: false, info: view };
        }
        const { attachment, snapshot, view, marks } = await host.attach(id, client.id, this.sink, { cols, rows });
        return { attachmentId: attachment.id, snapshot, seq: 0, writable: true, info: view, marks };
      },
      // A client acts only on its own views.
      detach: ({ attachmentId }) => {
        host.detach(attachmentId, client.id);
        return {};
      },
      input: async ({ attachmentId, data, typed }) => {
        await host.input(attachmentId, data, typed, client.id);
        return {};
      },
      resize: ({ attachmentId, cols, rows }) => {
        host.resize(attachmentId, cols, rows, client.id);
        return {};
      },
      ack: ({ attachmentId, seq }) => {
        host.ack(attachmentId, seq, client.id);
        return {};
      },
      share: ({ id, shared }) => host.share(id, shared),
      handToAgent: ({ id, agent }) => host.handToAgent(id, agent),
      takeControl: ({ id }) => host.takeControl(id),
      handBack: ({ id, note, shareOutput }) => host.handBack(id, { note, shareOutput }),
      reset: ({ id }) => host.reset(id),
      // The person's UI only: agents have MCP tools, and no tool clears a terminal.
      clearScrollback: async ({ id }) => {
        await host.get(id).clearScrollback();
        return {};
      },
      mintLink: () => {
        if (!opts.mintLink) throw new TandemError('invalid_argument', 'Login links exist only in the browser (tandem serve).');
        return { url: opts.mintLink() };
      },
      agents: () => (agents ? agents.state() : noAgents()),
      pairAgent: (args) => (agents ? agents.pairAgent(args) : noAgents()),
      revokeAgent: (args) => (agents ? (agents.revokeAgent(args), {}) : noAgents()),
      setAgentPolicy: (args) => (agents ? (agents.setAgentPolicy(args), {}) : noAgents()),
      answerPairing: (args) => (agents ? (agents.answerPairing(args), {}) : noAgents()),
      // "Deny all" is for a flood: the machines' waiting requests, listed in the same panel, go too.
      denyAllPairings: async () => {
        if (!agents) return noAgents();
        agents.denyAllPairings();
        await opts.remote?.denyAllPairings?.();
        return {};
      },
      liftPairingDenial: (args) => (agents ? (agents.liftPairingDenial(args), {}) : noAgents()),
      revokeAllowedOnce: (args) => (agents ? (agents.revokeAllowedOnce(args), {}) : noAgents()),
      answerApproval: (args) => (agents ? (agents.answerApproval(args), {}) : noAgents()),
      answerHandoff: (args) => (agents ? (agents.answerHandoff(args), {}) : noAgents()),
      getSettings: () => host.settings.get(),
      setSettings: (patch) => host.settings.update(patch),
      listRecordings: async () => ({ recordings: [...(await host.recordings().list()), ...((await opts.remote?.recordings?.()) ?? [])] }),
      exportRecording: ({ id }) => host.recordings().export(id),
      readRecordingCast: ({ id, offset }) => host.recordings().readCast(id, offset),
      timeline: (args) => readTimelines(host.recordings(), args),
      reportAppearance: ({ dark }) => (host.settings.setSystemAppearance(dark), {}),
      machines: () => ({ machines: opts.remote?.machineStates?.() ?? [] }),
      addMachine: (args) => {
        if (!opts.remote?.addMachine)
          throw new TandemError('not_running', 'This Tandem runs no remote machines (it is the remote end of another); add the machine in the Tandem you use.');
        return opts.remote.addMachine(args);
      },
      removeMachine: (args) => {
        if (!opts.remote?.removeMachine) throw new TandemError('not_found', `No machine named "${args.name}".`);
        return opts.remote.removeMachine(args);
      },
      agentSandbox: ({ name }) => {
        const files = agentFiles(stateDir(), name);
        return { home: files.home, exists: files.exists, openTerminals: confinedOf(name), refusals: agentRefusals(name) };
      },
      // The person's UI only: the path comes from the agent's name, never from the call.
      openAgentHome: async ({ name }) => {
        const files = agentFiles(stateDir(), name);
        if (!files.exists) throw new TandemError('not_found', `${name} has no home yet: it is made when a confined terminal of it opens.`);
        const at = files.home;
        if (opts.opener?.systemOpen) await opts.opener.systemOpen(at);
        else await (opts.opener?.start ?? startDetached)(systemOpenerArgv(at));
        return { path: at };
      },
      removeAgentHome: ({ name }) => ({ removed: removeAgentFiles(stateDir(), name, confinedOf(name)) }),
      notify: ({ title, body, terminalId }) => {
        if (!opts.desktop) noDesktop();
        opts.desktop.notify({ title, body }, () => client.send('notificationClicked', terminalId ? { terminalId } : {}));
        return {};
      },
      // Only a UI session reaches this (agents have MCP tools, not these operations); the
      // program comes from the person's settings, never from the call.
      openPath: async ({ id, path, line, column }) => {
        const full = resolveClickedPath(path, host.get(id).view().cwd, host.homeDir);
        await openResolved({ path: full, line: line ?? 1, column: column ?? 1 }, { editorCommand: () => host.settings.get().editorCommand, ...opts.opener });
        return { path: full };
      },
      attention: ({ count, flash }) => {
        if (!opts.desktop) noDesktop();
        opts.desktop.attention(count, flash);
        return {};
      },
    };
    // Remote machines: the roster is this machine's terminals and every machine's, whichever changed.
    this.remote = opts.remote ?? null;
    const remote = this.remote;
    if (remote) {
      this.rosterOff();
      let local: TerminalView[] | null = null;
      const localOff = host.onRoster((terminals) => {
        local = terminals;
        client.send('roster', { terminals: [...terminals, ...remote.roster()] });
      });
      const remoteOff = remote.onChange(() => client.send('roster', { terminals: [...(local ?? host.list()), ...remote.roster()] }));
      this.rosterOff = () => {
        localOff();
        remoteOff();
      };
      if (agents) {
        this.agentsOff();
        const localAgentsOff = agents.onChange((state) => client.send('agents', remote.agentsOverlay(state)));
        const remoteAgentsOff = remote.onAgents(() => client.send('agents', remote.agentsOverlay(agents.state())));
        this.agentsOff = () => {
          localAgentsOff();
          remoteAgentsOff();
        };
      }
    }
  }

  /**
   * Whether a transport holds this client's attachment events while `attach` runs (so a view's
   * first frame follows its result): not for a remote terminal, whose machine holds the view's
   * own early frames instead (remote/machine.ts), as its answer can take a while.
   */
  holdsAttach(args: unknown): boolean {
    const id = (args as { id?: unknown } | null)?.id;
    return !(typeof id === 'string' && this.remote?.owns?.(id));
  }

  /** Validates and runs one call. Throws TandemError with a contract code. */
  async call(op: unknown, args: unknown): Promise<unknown> {
    if (!isOpName(op)) throw new TandemError('invalid_argument', `op: "${String(op).slice(0, 60)}" is not an operation of Tandem.`);
    const parsed = operations[op].args.safeParse(args ?? {});
    if (!parsed.success) throw new TandemError('invalid_argument', describeIssue(parsed.error));
    // Remote machines: an operation on a remote terminal or view goes over its machine's link.
    const routed = this.remote?.route(op, parsed.data as Record<string, unknown>, this.client.id, this.sink) ?? null;
    if (routed) return await routed;
    // An operation aimed at a machine this host does not have never falls to this machine's
    // terminal or agent of the same name.
    const machine = (parsed.data as { machine?: unknown }).machine;
    if (typeof machine === 'string' && machine !== 'local')
      throw new TandemError('not_found', `No machine named "${machine}"; add it with tandem serve --machine ${machine}=DESTINATION.`);
    const handler = this.handlers[op] as (input: unknown) => unknown;
    const result = await handler(parsed.data);
    if (op === 'list' && this.remote) return { terminals: [...(result as { terminals: TerminalView[] }).terminals, ...this.remote.roster()] };
    if (op === 'agents' && this.remote) return this.remote.agentsOverlay(result as AgentsState);
    return result;
  }

  dispose(): void {
    this.remote?.detachClient(this.client.id);
    this.rosterOff();
    this.agentsOff();
    this.settingsOff();
    this.refusalsOff();
    this.host.detachClient(this.client.id);
  }
}

export function newClientId(): string {
  return randomBytes(12).toString('base64url');
}

/** Any thrown value as a contract error (unexpected ones become a generic sentence). */
export function toWireError(error: unknown): { code: TandemError['code']; message: string } {
  if (error instanceof TandemError) return error.toJSON();
  // Arguments are checked against the operation's schema before a handler runs (a TandemError
  // then), so anything else thrown is Tandem's own failure, not the caller's.
  return { code: 'internal', message: `Tandem failed to carry out the request: ${(error as Error)?.message ?? String(error)}` };
}
