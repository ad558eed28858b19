/**
 * The one table of operations and events between the UI (renderer or browser) and the host.
 * The preload bridge, the ipcMain handlers, the WebSocket server and client are all derived
 * from it: adding an operation is one entry here and one handler in the host.
 */
import { z } from 'zod';
import { ERROR_CODES } from './errors.js';
import { DEFAULT_LIMITS } from './limits.js';
import { settingsPatchSchema, settingsSchema } from './settings.js';
import { frameMarkSchema, snapshotMarksSchema } from './command-marks.js';

const id = z.string().min(1).max(64);
const title = z.string().trim().min(1).max(120);
const handoffNote = z.string().max(2000);
const cols = z.number().int().min(2).max(DEFAULT_LIMITS.maxCols);
const rows = z.number().int().min(2).max(DEFAULT_LIMITS.maxRows);

export const terminalInfoSchema = z.object({
  id: z.string(),
  title: z.string(),
  origin: z.enum(['agent', 'user']),
  agent: z.string().nullable(),
  agentConnected: z.boolean(),
  control: z.enum(['agent', 'user']),
  shared: z.boolean(),
  shell: z.string(),
  integration: z.boolean(),
  pid: z.number(),
  cwd: z.string().nullable(),
  cols: z.number(),
  rows: z.number(),
  status: z.enum(['starting', 'idle', 'running', 'waiting_input', 'exited']),
  exitCode: z.number().nullable(),
  lastCommand: z.object({ command: z.string().nullable(), exitCode: z.number().nullable(), finishedAt: z.string() }).nullable(),
  handedTo: z.string().nullable(),
  sandbox: z.object({ mode: z.enum(['workspace-write', 'read-only']), network: z.boolean() }).nullable(),
  /** UI only: workspace files the person's tools run on their own (`.envrc`, `.vscode/`, `.idea/`) that this confined terminal changed; absent when none. */
  toolFilesChanged: z.array(z.string()).optional(),
  program: z.string().nullable(),
  /** UI only: an agent call (send, wait, handoff) is waiting on this terminal now. */
  agentListening: z.boolean(),
  /** UI only: handed back privately, and what the terminal prints is still kept from the agent (the person's line or job runs on); absent otherwise. */
  keptPrivate: z.boolean().optional(),
  /**
   * UI only: present when this tab is a read-only transcript of a closed terminal (src/main/host/transcripts.ts):
   * why (`closed` by agent `by`, its shell had `exited`, `unattended`, or `restored` from the last session) and when (ISO).
   * Agents never see transcripts; `dismiss` removes one.
   */
  transcript: z.object({ reason: z.enum(['closed', 'exited', 'unattended', 'restored']), by: z.string().nullable(), at: z.string() }).optional(),
  /** The remote machine this terminal runs on (`tandem serve --machine NAME=…`); absent or `local` for this machine. */
  machine: z.string().optional(),
  /** Remote terminals only: whether their machine's link is up (`reconnecting` while Tandem reconnects it). */
  machineLink: z.enum(['connected', 'reconnecting', 'failed']).optional(),
});

/** `label` tells binaries of one name apart (`bash 5.2 (Homebrew)`, `bash 3.2 (system, limited)`); absent when one needs no telling apart. */
export const shellCandidateSchema = z.object({ name: z.string(), path: z.string(), integration: z.boolean(), label: z.string().optional() });

export const attachResultSchema = z.object({
  attachmentId: z.string(),
  /** The screen and bounded scrollback, serialized as terminal output. */
  snapshot: z.string(),
  /** Sequence number of the last output frame included in the snapshot. */
  seq: z.number(),
  writable: z.boolean(),
  info: terminalInfoSchema,
  /** The command marks still in the snapshot's scrollback (src/shared/command-marks.ts). */
  marks: snapshotMarksSchema.optional(),
});

export const errorSchema = z.object({ code: z.enum(ERROR_CODES), message: z.string() });

const policySchema = z.enum(['always', 'ask', 'ask-unless-allowed']);
const sandboxModeSchema = z.enum(['off', 'workspace-write', 'read-only']);
const agentName = z.string().trim().min(1).max(64);
/** Paths of the person's home a confined terminal of the agent may read beyond the defaults (src/main/sandbox/agent-home.ts). */
const homeReadableSchema = z
  .array(
    z
      .string()
      .trim()
      .min(2)
      .max(300)
      .regex(/^~\/|^\//, 'must start with ~/ or /'),
  )
  .max(50);
/** A confined terminal's proxy lets only these hosts through (`example.org`, `*.example.org`); empty: any public host. */
const networkDomainsSchema = z
  .array(
    z
      .string()
      .trim()
      .toLowerCase()
      .max(255)
      .regex(
        /^(\*\.)?(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
        'must be a host name such as example.org or *.example.org',
      ),
  )
  .max(100);

/** A connection a confined terminal's proxy refused (src/main/sandbox/proxy.ts), for the agents panel. */
export const sandboxRefusalSchema = z.object({
  at: z.string(),
  terminalId: z.string(),
  host: z.string(),
  port: z.number(),
  address: z.string().nullable(),
  reason: z.string(),
  message: z.string(),
});

const pairedAgentSchema = z.object({
  name: z.string(),
  createdAt: z.string(),
  policy: policySchema,
  allow: z.array(z.string()),
  deny: z.array(z.string()),
  connected: z.boolean(),
  sandbox: sandboxModeSchema.optional(),
  network: z.boolean().optional(),
  homeReadable: z.array(z.string()).optional(),
  networkDomains: z.array(z.string()).optional(),
  /** The folder the person confirmed as its project (absent: none yet, every open asks). */
  project: z.string().optional(),
});

const allowedOnceSchema = z.object({ id: z.string(), name: z.string(), connected: z.boolean() });
const deniedClaimSchema = z.object({ id: z.string(), name: z.string(), exe: z.string(), cwd: z.string(), at: z.string() });

/** A remote machine's name in an operation's args: absent or `local` for this machine. */
const machineArg = z.string().min(1).max(32);

export const agentsStateSchema = z.object({
  paired: z.array(pairedAgentSchema),
  connected: z.array(z.object({ name: z.string(), connections: z.number() })),
  /**
   * `nameInUse`: the claimed name is a paired or connected agent's; allowed once, it shows as `name (2)`.
   * `name`, `pid`, `exe`, `cwd` are the requester's claims; `verified` is what the kernel says about
   * the process on the other end of the request's connection (src/main/agent/pairing/peer.ts): `by`
   * `kernel` (socket tables and /proc), `directory` (only the uid: the 0700 directory let it in) or `none`.
   */
  pairings: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      pid: z.number(),
      exe: z.string(),
      cwd: z.string(),
      at: z.string(),
      nameInUse: z.boolean(),
      verified: z
        .object({
          uid: z.number().nullable(),
          pid: z.number().nullable(),
          exe: z.string().nullable(),
          by: z.enum(['kernel', 'directory', 'none']),
          via: z.enum(['unix-socket', 'named-pipe', 'tcp', 'in-process']),
        })
        .optional(),
    }),
  ),
  /** "Deny all" pauses new pairing requests for a minute: until when (ISO), or null. */
  pairingsPausedUntil: z.string().nullable().optional(),
  /** Agents allowed once (or trusted) in this instance, revocable. */
  allowedOnce: z.array(allowedOnceSchema),
  /** Pairing claims the person denied: answered without asking until lifted. */
  deniedClaims: z.array(deniedClaimSchema),
  /** Why confined terminals cannot start on this machine (src/main/sandbox/availability.ts), once probed; absent or null when they can. */
  sandboxProblem: z
    .object({ cause: z.enum(['apparmor', 'userns', 'missing', 'platform']), message: z.string() })
    .nullable()
    .optional(),
  approvals: z.array(
    z.object({
      id: z.string(),
      /** `command`: a line to type; `open`: a terminal_open waiting on its env. */
      kind: z.enum(['command', 'open']),
      agent: z.string(),
      terminalId: z.string(),
      title: z.string(),
      command: z.string(),
      /** For an open: `NAME=value` of each variable not on the harmless list. */
      env: z.array(z.string()),
      why: z.string().nullable(),
    }),
  ),
  /** Per agent, the newest lines that ran without asking (bounded: src/main/agent/service/ran-log.ts). */
  ran: z.array(z.object({ agent: z.string(), entries: z.array(z.object({ command: z.string(), terminalId: z.string(), title: z.string(), at: z.string() })) })),
  handoffs: z.array(z.object({ id: z.string(), agent: z.string(), terminalId: z.string(), title: z.string(), message: z.string() })),
});

/** Operations: args schema and result schema. */
export const operations = {
  environment: {
    args: z.object({}),
    result: z.object({
      platform: z.string(),
      home: z.string(),
      defaultShell: shellCandidateSchema.nullable(),
      shells: z.array(shellCandidateSchema),
      version: z.string(),
      /** The host's pseudoconsole on Windows, for xterm's `windowsPty` option; absent elsewhere. */
      windowsPty: z.object({ backend: z.literal('conpty'), buildNumber: z.number() }).optional(),
    }),
  },
  list: { args: z.object({}), result: z.object({ terminals: z.array(terminalInfoSchema) }) },
  create: {
    args: z.object({
      shell: z.string().max(4096).optional(),
      cwd: z.string().max(4096).optional(),
      title: title.optional(),
      cols: cols.optional(),
      rows: rows.optional(),
      machine: machineArg.optional(),
    }),
    result: terminalInfoSchema,
  },
  rename: { args: z.object({ id, title }), result: terminalInfoSchema },
  close: { args: z.object({ id }), result: z.object({ closed: z.boolean(), orphans: z.array(z.object({ pid: z.number(), comm: z.string() })) }) },
  /** Removes a transcript tab (a closed terminal kept read-only); `not_found` for anything else. */
  dismiss: { args: z.object({ id }).strict(), result: z.object({}) },
  attach: { args: z.object({ id, cols: cols.optional(), rows: rows.optional() }), result: attachResultSchema },
  detach: { args: z.object({ attachmentId: id }), result: z.object({}) },
  /** Input from an attachment. `typed` marks keyboard, paste, IME or drop input by the person. */
  input: {
    args: z.object({ attachmentId: id, data: z.string().max(DEFAULT_LIMITS.maxInputBytes), typed: z.boolean() }),
    result: z.object({}),
  },
  resize: { args: z.object({ attachmentId: id, cols, rows }), result: z.object({}) },
  /** Flow control: the client has applied every frame up to `seq`. */
  ack: { args: z.object({ attachmentId: id, seq: z.number().int().min(0) }), result: z.object({}) },
  share: { args: z.object({ id, shared: z.boolean() }), result: terminalInfoSchema },
  /** Hands one of the person's terminals to a named agent (null takes it back). */
  handToAgent: { args: z.object({ id, agent: z.string().min(1).max(120).nullable() }), result: terminalInfoSchema },
  takeControl: { args: z.object({ id }), result: terminalInfoSchema },
  /** `note` reaches the agent in `handoff.note`; the output of the person's commands only with `shareOutput`. */
  handBack: { args: z.object({ id, note: handoffNote.optional(), shareOutput: z.boolean().optional() }), result: terminalInfoSchema },
  reset: { args: z.object({ id }), result: terminalInfoSchema },
  /**
   * The menu's Clear: the host erases the terminal's scrollback and screen (the cursor's line
   * stays, at the top) for every view, a reload included, without writing to the shell or
   * moving output offsets; each view receives the cleared screen as an output frame.
   */
  clearScrollback: { args: z.object({ id }).strict(), result: z.object({}) },
  /** A fresh login link for another browser tab (browser transport only). */
  mintLink: { args: z.object({}), result: z.object({ url: z.string() }) },
  /** The agents panel: paired agents, live connections, and questions waiting for the person. */
  agents: { args: z.object({}), result: agentsStateSchema },
  /** Pair an agent: its token is shown once, inside ready-to-copy configurations. */
  pairAgent: {
    args: z.object({ name: agentName, project: z.string().min(1).max(4096).optional() }).strict(),
    result: z.object({ name: z.string(), token: z.string(), configs: z.array(z.object({ client: z.string(), file: z.string(), text: z.string() })) }),
  },
  /**
   * Revokes a paired agent: its token stops working and its connections end. `machine`: an agent
   * paired on that remote machine, revoked there (the person's link to it is their ssh session).
   */
  revokeAgent: { args: z.object({ name: agentName, machine: machineArg.optional() }).strict(), result: z.object({}) },
  /** `machine`: an agent paired on that remote machine; its host there applies the change as its own panel would. */
  setAgentPolicy: {
    args: z
      .object({
        name: agentName,
        machine: machineArg.optional(),
        policy: policySchema,
        allow: z.array(z.string().min(1).max(200)).max(200).optional(),
        deny: z.array(z.string().min(1).max(200)).max(200).optional(),
        sandbox: sandboxModeSchema.optional(),
        network: z.boolean().optional(),
        homeReadable: homeReadableSchema.optional(),
        networkDomains: networkDomainsSchema.optional(),
        /** The agent's project, an absolute path of an existing folder: the person's explicit choice (any folder). */
        project: z.string().min(1).max(4096).optional(),
      })
      .strict(),
    result: z.object({}),
  },
  answerPairing: { args: z.object({ requestId: id, decision: z.enum(['once', 'always', 'deny']) }), result: z.object({}) },
  /** "Deny all": every waiting pairing request is denied (a flood), the remote machines' too. */
  denyAllPairings: { args: z.object({}).strict(), result: z.object({}) },
  /** `machine`: a claim denied on that remote machine (listed in `machines`), lifted there. */
  liftPairingDenial: { args: z.object({ id, machine: machineArg.optional() }).strict(), result: z.object({}) },
  /** `machine`: an agent allowed once on that remote machine (listed in `machines`), revoked there. */
  revokeAllowedOnce: { args: z.object({ id, machine: machineArg.optional() }).strict(), result: z.object({}) },
  answerApproval: {
    args: z.object({
      requestId: id,
      decision: z.enum(['approve', 'edit', 'reject']),
      command: z.string().min(1).max(DEFAULT_LIMITS.maxInputBytes).optional(),
      reason: z.string().max(500).optional(),
    }),
    result: z.object({}),
  },
  answerHandoff: { args: z.object({ requestId: id, accept: z.boolean(), note: handoffNote.optional() }), result: z.object({}) },
  /** Desktop app only: a system notification; clicking it sends `notificationClicked` to this window (with the terminal it is about, if any: a pairing request has none). */
  notify: { args: z.object({ title: z.string().min(1).max(200), body: z.string().max(500), terminalId: id.optional() }), result: z.object({}) },
  /**
   * The person clicked a file path in a terminal: the host resolves it against that terminal's
   * cwd, checks that it is an existing file, and opens it (at the line) with the editor command
   * of the settings, or the system's opener. Run without a shell, the path as one argument.
   */
  openPath: {
    args: z
      .object({
        id,
        path: z.string().min(1).max(4096),
        line: z.number().int().min(1).max(10_000_000).optional(),
        column: z.number().int().min(1).max(100_000).optional(),
      })
      .strict(),
    result: z.object({ path: z.string() }),
  },
  /** Desktop app only: the count of what waits for the person (dock/taskbar badge), and a window flash when it grew. */
  attention: { args: z.object({ count: z.number().int().min(0).max(999), flash: z.boolean() }), result: z.object({}) },
  /** The person's settings, kept by the host for every window and browser tab. */
  getSettings: { args: z.object({}), result: settingsSchema },
  /** Changes some settings; a bad value is refused with `invalid_argument` and changes nothing. */
  setSettings: { args: settingsPatchSchema, result: settingsSchema },
  /** Recordings kept in the state directory (docs/recordings.md), oldest first; `live` while its terminal runs. */
  listRecordings: {
    args: z.object({}).strict(),
    result: z.object({
      recordings: z.array(
        z.object({
          id: z.string(),
          terminalId: z.string(),
          title: z.string(),
          startedAt: z.string(),
          castBytes: z.number(),
          timelineBytes: z.number(),
          live: z.boolean(),
        }),
      ),
    }),
  },
  /**
   * One recording (by its id, or a terminal id for that terminal's newest): the .cast from its
   * start (at most 8 MiB, cut at a line: `castTruncated`), the whole timeline, and whether the
   * timeline's hash chain holds (`firstBad`: the 1-based line where it breaks).
   */
  exportRecording: {
    args: z.object({ id: z.string().min(1).max(100) }).strict(),
    result: z.object({
      id: z.string(),
      cast: z.string(),
      castTruncated: z.boolean(),
      timeline: z.string(),
      timelineTruncated: z.boolean(),
      verification: z.object({ ok: z.boolean(), records: z.number(), firstBad: z.number().nullable(), reason: z.string().nullable() }),
    }),
  },
  /**
   * A recording's .cast in pages (a replay or export of more than exportRecording's 8 MiB):
   * whole lines from byte `offset` (0, then each page's `nextOffset`), at most 8 MiB a page;
   * `nextOffset` null at the end. A line longer than a page is left out (`skippedBytes`).
   */
  readRecordingCast: {
    args: z
      .object({
        id: z.string().min(1).max(100),
        offset: z
          .number()
          .int()
          .min(0)
          .max(2 ** 45),
      })
      .strict(),
    result: z.object({ id: z.string(), text: z.string(), offset: z.number(), nextOffset: z.number().nullable(), size: z.number(), skippedBytes: z.number() }),
  },
  /**
   * The Timeline panel (docs/recordings.md): one terminal's timeline records (its newest
   * recording), or one agent's across its terminals', oldest first, at most `limit` (≤ 5000, the
   * newest kept: `truncated`); each record as written (docs/recordings.md) plus where it came
   * from, and each file's hash-chain verification. The UI's only: agents get no tool for it.
   */
  timeline: {
    args: z
      .object({ terminalId: id.optional(), agent: z.string().min(1).max(64).optional(), limit: z.number().int().min(1).max(5000).optional() })
      .strict()
      .refine((a) => (a.terminalId === undefined) !== (a.agent === undefined), 'give terminalId or agent, one of them'),
    result: z.object({
      records: z.array(
        z.looseObject({
          seq: z.number(),
          type: z.string(),
          t: z.number(),
          at: z.string(),
          recordingId: z.string(),
          terminalId: z.string(),
          fileLine: z.number(),
        }),
      ),
      chains: z.array(
        z.object({
          recordingId: z.string(),
          terminalId: z.string(),
          live: z.boolean(),
          ok: z.boolean(),
          records: z.number(),
          firstBad: z.number().nullable(),
          reason: z.string().nullable(),
        }),
      ),
      truncated: z.boolean(),
    }),
  },
  /** Whether the person's system is dark, for the "system" theme's answers to colour queries. */
  reportAppearance: { args: z.object({ dark: z.boolean() }), result: z.object({}) },
  /**
   * Remote machines (`tandem serve --machine NAME=DESTINATION`): each one's name, ssh destination,
   * link state and, while it is not connected, why in one sentence (`problem`). Empty without any.
   * The roster event follows every change of a machine's state, so a UI reads this again on it.
   * `agents`, `allowedOnce`, `deniedClaims`: that machine's paired agents, agents allowed once and
   * denied claims, as its host last told (changed there with `setAgentPolicy`, `revokeAgent`,
   * `revokeAllowedOnce`, `liftPairingDenial` and `machine`: NAME); an agents event follows their
   * changes. Their questions are in the agents state (`agent@NAME`). `sandboxProblem`: why confined
   * terminals cannot start there, when they cannot.
   */
  machines: {
    args: z.object({}).strict(),
    result: z.object({
      machines: z.array(
        z.object({
          name: z.string(),
          destination: z.string(),
          status: z.enum(['connecting', 'connected', 'reconnecting', 'failed']),
          problem: z.string().nullable(),
          agents: z.array(pairedAgentSchema).optional(),
          allowedOnce: z.array(allowedOnceSchema).optional(),
          deniedClaims: z.array(deniedClaimSchema).optional(),
          sandboxProblem: z.object({ message: z.string() }).nullable().optional(),
        }),
      ),
    }),
  },
  /**
   * Adds a remote machine while Tandem runs (the settings' form), as `--machine NAME=DESTINATION`
   * would: its link starts at once; its progress and problem follow in `machines`. `invalid_argument`
   * for a bad name or destination or a name in use. Kept in the settings' `machines` (so it is there
   * after a restart) where the host keeps settings.
   */
  addMachine: {
    args: z.object({ name: z.string().min(1).max(32), destination: z.string().min(1).max(255) }).strict(),
    result: z.object({
      name: z.string(),
      destination: z.string(),
      status: z.enum(['connecting', 'connected', 'reconnecting', 'failed']),
      problem: z.string().nullable(),
    }),
  },
  /**
   * Removes a remote machine (the settings' Remove): its link stops, its views end
   * (attachmentClosed), its terminals leave the roster, and a kept one leaves the settings.
   * Its terminals go on on the machine, under its daemon's idle bound. `not_found` for no such machine.
   */
  removeMachine: { args: z.object({ name: z.string().min(1).max(32) }).strict(), result: z.object({}) },
  /**
   * The agents panel (issue 24): an agent's own directory in Tandem's state (`home`: its `$HOME`
   * in confined terminals, kept across them; `exists` once a confined terminal made it), how many
   * confined terminals of it are open, and the connections its proxy refused (newest last, at most 50).
   */
  agentSandbox: {
    args: z.object({ name: agentName }).strict(),
    result: z.object({ home: z.string(), exists: z.boolean(), openTerminals: z.number(), refusals: z.array(sandboxRefusalSchema) }),
  },
  /** Opens the agent's home with the system's file manager (on the host's machine). `not_found` before it exists. */
  openAgentHome: { args: z.object({ name: agentName }).strict(), result: z.object({ path: z.string() }) },
  /** Deletes the agent's home (history, caches, its `npm config`); `busy` while a confined terminal of it is open. */
  removeAgentHome: { args: z.object({ name: agentName }).strict(), result: z.object({ removed: z.boolean() }) },
} as const;

/** Events pushed to every client of a transport. */
export const events = {
  roster: z.object({ terminals: z.array(terminalInfoSchema) }),
  /** `marks`: command marks at positions inside `data` (src/shared/command-marks.ts). */
  output: z.object({ attachmentId: z.string(), seq: z.number(), data: z.string(), marks: z.array(frameMarkSchema).optional() }),
  attachmentClosed: z.object({ attachmentId: z.string(), error: errorSchema }),
  writable: z.object({ attachmentId: z.string(), writable: z.boolean() }),
  /** The agents panel changed: a pairing request, an approval, a handoff request, a connection. */
  agents: agentsStateSchema,
  /** The settings changed (in this or another window): every view follows. */
  settings: settingsSchema,
  /** The person clicked a desktop notification about this terminal. */
  notificationClicked: z.object({ terminalId: z.string().optional() }),
  /** A confined terminal's proxy refused a connection (the agents panel's card shows it). */
  sandboxRefusal: sandboxRefusalSchema.extend({ agent: z.string() }),
} as const;

export type Operations = typeof operations;
export type OpName = keyof Operations;
export type OpArgs<K extends OpName> = z.input<Operations[K]['args']>;
export type OpResult<K extends OpName> = z.output<Operations[K]['result']>;
export type Events = typeof events;
export type EventName = keyof Events;
export type EventPayload<K extends EventName> = z.output<Events[K]>;
export type TerminalView = z.output<typeof terminalInfoSchema>;
export type ShellCandidate = z.output<typeof shellCandidateSchema>;
export type WireError = z.output<typeof errorSchema>;
export type AgentsState = z.output<typeof agentsStateSchema>;

export const opNames = Object.keys(operations) as OpName[];

export function isOpName(value: unknown): value is OpName {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(operations, value);
}

/** Messages of the WebSocket transport. */
export const clientMessageSchema = z.object({ type: z.literal('call'), id: z.number().int().min(0), op: z.string(), args: z.unknown() });
export type ServerMessage =
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number | null; ok: false; error: WireError }
  | { type: 'event'; event: EventName; payload: unknown };

/** Every transport exposes the same API to the UI, which does not know which one it has. */
export interface TandemApi {
  call<K extends OpName>(op: K, args: OpArgs<K>): Promise<OpResult<K>>;
  on<K extends EventName>(event: K, listener: (payload: EventPayload<K>) => void): () => void;
}

/** Formats a zod failure as one sentence naming the field. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'The request is malformed.';
  const path = issue.path.length > 0 ? issue.path.join('.') : 'request';
  return `${path}: ${issue.message}`;
}
