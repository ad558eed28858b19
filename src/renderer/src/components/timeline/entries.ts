/**
 * The Timeline panel's entries, made from the host's timeline records (docs/recordings.md): one
 * entry per record, except a `send` whose line became the `command` record after it (the command
 * carries how it was allowed). Pure, so it is tested without a page.
 */
import type { OpResult } from '../../../../shared/contract';

export type TimelineRecord = OpResult<'timeline'>['records'][number];
export type TimelineChain = OpResult<'timeline'>['chains'][number];
export type Outcome = 'ok' | 'failed' | 'interrupted' | 'rejected' | 'waiting' | 'running';

export interface Detail {
  label: string;
  value: string;
}

export interface TimelineEntry {
  key: string;
  type: string;
  title: string;
  /** Who: `person`, `agent:<name>`, or null (the host, a setting). */
  by: string | null;
  /** The agent's name when an agent did it. */
  agent: string | null;
  handoff: boolean;
  /** How an agent's line was allowed (`allow_entry`, `approval`, `edited`, `always`, `unjudged`). */
  allowed: string | null;
  outcome: Outcome | null;
  details: Detail[];
  at: string;
  terminalId: string;
  recordingId: string;
  /** The command's mark in its live view: the host numbers marks 1, 2, … in the order commands start. */
  markId: number | null;
  /** At or after the line where its file's hash chain breaks, or the one before it (a changed line breaks the chain at the next): it cannot be trusted. */
  suspect: boolean;
}

export const allowedLabels: Record<string, string> = {
  allow_entry: 'allow entry',
  approval: 'approved by the person',
  edited: 'edited by the person',
  always: '“always” policy',
  unjudged: 'not judged',
};

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

function agentOf(by: string | null): string | null {
  return by?.startsWith('agent:') ? by.slice('agent:'.length) : null;
}

export function whoLabel(by: string | null, handoff: boolean): string {
  if (!by) return 'Tandem';
  const agent = agentOf(by);
  return `${agent ?? 'you'}${handoff ? ' (handoff)' : ''}`;
}

function whoOrNull(value: string | null): string | null {
  return value === null ? null : whoLabel(value, false);
}

function sandboxText(value: unknown): string | null {
  if (!value || typeof value !== 'object') return null;
  const sandbox = value as Record<string, unknown>;
  const mode = str(sandbox.mode) ?? str(sandbox.kind) ?? str(sandbox.level);
  if (sandbox.enabled === false || mode === 'off' || mode === 'none') return null;
  return mode ?? 'on';
}

function time(value: unknown): string | null {
  const text = str(value);
  if (!text) return null;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

function commandOutcome(exitCode: number | null): Outcome {
  if (exitCode === 0 || exitCode === null) return 'ok';
  return exitCode === 130 ? 'interrupted' : 'failed';
}

function fields(...pairs: Array<[string, string | null | undefined]>): Detail[] {
  return pairs.filter((pair): pair is [string, string] => typeof pair[1] === 'string' && pair[1] !== '').map(([label, value]) => ({ label, value }));
}

/** The entries of records (oldest first), with `suspect` from each file's chain. */
export function toEntries(records: readonly TimelineRecord[], chains: readonly TimelineChain[]): TimelineEntry[] {
  const firstBad = new Map(chains.map((chain) => [chain.recordingId, chain.firstBad]));
  const commandsSeen = new Map<string, number>();
  const entries: TimelineEntry[] = [];
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const by = str(r.by);
    const handoff = r.handoff === true;
    const bad = firstBad.get(r.recordingId) ?? null;
    const base = {
      key: `${r.recordingId}:${r.fileLine}`,
      type: r.type,
      by,
      agent: agentOf(by),
      handoff,
      at: r.at,
      terminalId: r.terminalId,
      recordingId: r.recordingId,
      suspect: bad !== null && r.fileLine >= Math.max(1, bad - 1),
      markId: null as number | null,
      allowed: null as string | null,
      outcome: null as Outcome | null,
    };
    switch (r.type) {
      case 'command': {
        const ordinal = (commandsSeen.get(r.recordingId) ?? 0) + 1;
        commandsSeen.set(r.recordingId, ordinal);
        const exitCode = num(r.exitCode);
        const allowed = str(r.allowed);
        entries.push({
          ...base,
          title: str(r.command) ?? '(command line not known)',
          allowed,
          outcome: commandOutcome(exitCode),
          // A record naming its mark (`mark`) is taken at its word; else the n-th command is the n-th mark.
          markId: num(r.mark) ?? ordinal,
          details: fields(
            ['exit', exitCode === null ? 'unknown' : String(exitCode)],
            ['started', time(r.startedAt)],
            ['ended', time(r.endedAt)],
            ['cwd', str(r.cwd)],
            ['sandbox', sandboxText(r.sandbox)],
          ),
        });
        break;
      }
      case 'send': {
        // The command it started carries the same facts; a send that started none (typed at a prompt) stays.
        const line = str(r.line) ?? '';
        const next = records.slice(i + 1).find((o) => o.recordingId === r.recordingId && (o.type === 'command' || o.type === 'send'));
        if (next?.type === 'command' && next.by === r.by && (next.command === r.line || next.allowed === r.allowed)) continue;
        entries.push({
          ...base,
          title: line === '' ? '(typed at a prompt that echoes nothing)' : line,
          allowed: str(r.allowed),
          outcome: null,
          details: fields(['typed', 'sent to the terminal']),
        });
        break;
      }
      case 'wait':
        entries.push({
          ...base,
          title: `Waiting: ${str(r.status) ?? 'unknown'}`,
          outcome: r.status === 'waiting_input' ? 'waiting' : 'running',
          details: fields(['evidence', str(r.evidence)], ['cwd', str(r.cwd)]),
        });
        break;
      case 'rejection':
        entries.push({
          ...base,
          title: str(r.line) ?? '',
          outcome: 'rejected',
          details: fields(['rejected by', r.decidedBy === 'deny_list' ? 'the deny list' : 'you'], ['reason', str(r.reason)]),
        });
        break;
      case 'approval_asked':
        entries.push({ ...base, title: str(r.line) ?? '', details: fields(['asked', 'your approval'], ['why', str(r.why)]) });
        break;
      case 'handoff': {
        const kind = str(r.kind) ?? 'handoff';
        const kinds: Record<string, string> = {
          takeover: 'You took control',
          hand_back: 'You handed control back',
          hand_to: 'Handed to an agent',
          request: 'The agent asked you to take over',
          accepted: 'You accepted the handoff',
          declined: 'You declined the handoff',
          answer: 'Handoff request answered',
        };
        entries.push({
          ...base,
          by: str(r.from) ?? 'person',
          handoff: false,
          agent: agentOf(str(r.to)) ?? agentOf(str(r.from)),
          title: kinds[kind] ?? `Handoff: ${kind}`,
          details: fields(
            ['to', r.to === 'person' ? null : whoOrNull(str(r.to))],
            ['note', str(r.note)],
            ['accepted', typeof r.accepted === 'boolean' ? (r.accepted ? 'yes' : 'no') : null],
          ),
        });
        break;
      }
      case 'policy': {
        const shown = Object.entries(r)
          .filter(([k]) => !['seq', 'type', 't', 'at', 'prev', 'recordingId', 'terminalId', 'fileLine'].includes(k))
          .map(([k, v]) => ({ label: k, value: typeof v === 'string' ? v : JSON.stringify(v) }));
        entries.push({ ...base, agent: str(r.agent), title: 'Approval policy changed', details: shown });
        break;
      }
      case 'open':
        entries.push({
          ...base,
          agent: str(r.agent),
          by: str(r.agent) ? `agent:${String(r.agent)}` : 'person',
          title: `Terminal opened: ${str(r.title) ?? r.terminalId}`,
          details: fields(['shell', str(r.shell)], ['cwd', str(r.cwd)], ['sandbox', sandboxText(r.sandbox)]),
        });
        break;
      case 'close':
        entries.push({
          ...base,
          title: 'Terminal closed',
          details: fields(['cause', str(r.cause)], ['exit', num(r.exitCode) === null ? null : String(r.exitCode)]),
        });
        break;
      case 'input_hidden':
        entries.push({ ...base, title: 'Input at a prompt that echoes nothing (not recorded)', details: [] });
        break;
      case 'recording':
      case 'truncated':
        entries.push({
          ...base,
          title: r.type === 'truncated' ? 'Timeline stopped at its size bound' : `Recording ${str(r.state) ?? 'changed'}`,
          details: fields(['reason', str(r.reason)]),
        });
        break;
      default:
        entries.push({ ...base, title: r.type, details: [] });
    }
  }
  return entries;
}

export type OutcomeFilter = 'all' | 'ok' | 'failed' | 'rejected' | 'waiting';

/** Entries that pass the filters: by who (`all`, `person`, or an agent's name) and how it ended. */
export function filterEntries(entries: readonly TimelineEntry[], who: string, outcome: OutcomeFilter): TimelineEntry[] {
  return entries.filter((entry) => {
    if (who === 'person' && entry.by !== 'person') return false;
    if (who !== 'all' && who !== 'person' && entry.agent !== who) return false;
    if (outcome === 'all') return true;
    if (outcome === 'failed') return entry.outcome === 'failed' || entry.outcome === 'interrupted';
    return entry.outcome === outcome;
  });
}

/** The agents named in entries, for the filter. */
export function agentsIn(entries: readonly TimelineEntry[]): string[] {
  return [...new Set(entries.map((entry) => entry.agent).filter((name): name is string => name !== null))].sort();
}
