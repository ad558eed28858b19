/**
 * One call waiting on a terminal (a send, a wait): it collects what the command prints and
 * settles once, on what the readiness engine decides, its handoff signal or its wait bound.
 */
import type { StreamPosition } from '../emulator/history.js';
import { DEFAULT_LIMITS } from '../../../shared/limits.js';
import type { Evidence, SendResult } from '../../../shared/types.js';
import type { Clock } from '../../clock.js';
import type { ProbeBaseline } from './probe.js';
import { OutputProjector } from '../projection/projection.js';
import type { Candidate, SettleScope } from './readiness.js';
import { clampInt } from '../session/session-types.js';

export type ObserverMode = 'command' | 'input' | 'follow';

export interface Observer {
  mode: ObserverMode;
  command: string | null;
  /** Settles on a real end marker with at least this sequence number. */
  minEndSeq: number;
  /** Output is collected from the command's start marker (or from the write, without one). */
  collecting: boolean;
  /** Output the person's lease kept from this call: its result says so once, where it was. */
  withheld?: boolean;
  projector: OutputProjector;
  echo: string | null;
  baseline: ProbeBaseline | null;
  candidate: Candidate | null;
  finish: (status: SendResult['status'], evidence: Evidence, end?: { exitCode: number | null; command: string | null }) => void;
}

export interface ObserveSpec {
  mode: ObserverMode;
  command: string | null;
  minEndSeq: number;
  collecting: boolean;
  echo: string | null;
  baseline: ProbeBaseline | null;
  waitMs: number | undefined;
  maxOutputBytes: number | undefined;
  signal: AbortSignal | undefined;
  handoff: AbortSignal | undefined;
}

/** What an observer needs from its session. */
export interface ObserverHost {
  readonly clock: Clock;
  /** The session's live observers: one per call in flight, removed when it settles. */
  readonly observers: Set<Observer>;
  /** Where the stream is now. */
  position(): StreamPosition;
  /** The observation settled at this position: the next wait's default cursor. */
  settledAt(position: StreamPosition): void;
  result(
    observer: Observer,
    status: SendResult['status'],
    evidence: Evidence,
    command: string | null,
    exitCode: number | null,
    startedAt: number,
    position: StreamPosition,
  ): SendResult;
  /** Resolves once the emulator has parsed what arrived (full-screen output is read from it). */
  parsed(): Promise<void>;
  handoff(observer: Observer): void;
  bound(observer: Observer): void;
}

export function observe(host: ObserverHost, spec: ObserveSpec) {
  const startedAt = host.clock.now();
  const waitMs = clampInt(spec.waitMs, DEFAULT_LIMITS.defaultWaitMs, 0, DEFAULT_LIMITS.maxWaitMs);
  const maxOutputBytes = clampInt(spec.maxOutputBytes, DEFAULT_LIMITS.defaultOutputBytes, 1, DEFAULT_LIMITS.maxOutputBytes);
  let resolvePromise!: (result: SendResult) => void;
  let rejectPromise!: (error: unknown) => void;
  const promise = new Promise<SendResult>((resolve, reject) => {
    resolvePromise = resolve;
    rejectPromise = reject;
  });
  let settled = false;
  const cleanup = () => {
    settled = true;
    host.observers.delete(observer);
    host.clock.clearTimeout(timer);
    spec.signal?.removeEventListener('abort', onAbort);
    spec.handoff?.removeEventListener('abort', onHandoff);
  };
  const observer: Observer = {
    mode: spec.mode,
    command: spec.command,
    minEndSeq: spec.minEndSeq,
    collecting: spec.collecting,
    projector: new OutputProjector({ maxBytes: maxOutputBytes }),
    echo: spec.echo,
    baseline: spec.baseline,
    candidate: null,
    finish: (status, evidence, end) => {
      if (settled) return;
      cleanup();
      const position = host.position();
      host.settledAt(position);
      const command = observer.command ?? end?.command ?? null;
      const exitCode = status === 'done' || status === 'exited' ? (end?.exitCode ?? null) : null;
      const finishNow = () => resolvePromise(host.result(observer, status, evidence, command, exitCode, startedAt, position));
      // Full-screen programs are read from the screen: let the emulator catch up first.
      if (observer.projector.altScreen) void host.parsed().then(finishNow);
      else finishNow();
    },
  };
  const onAbort = () => {
    if (settled) return;
    cleanup();
    rejectPromise(spec.signal?.reason ?? new Error('aborted'));
  };
  const onHandoff = () => host.handoff(observer);
  const timer = host.clock.setTimeout(() => host.bound(observer), waitMs);
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  spec.handoff?.addEventListener('abort', onHandoff, { once: true });
  host.observers.add(observer);
  if (spec.signal?.aborted) onAbort();
  else if (spec.handoff?.aborted) onHandoff();
  return {
    promise,
    get collecting() {
      return observer.collecting;
    },
    projectorPush: (text: string) => observer.projector.push(text),
    settle: (status: SendResult['status'], evidence: Evidence) => observer.finish(status, evidence),
    reject: (error: unknown) => {
      if (settled) return;
      cleanup();
      rejectPromise(error);
    },
  };
}

/** The observers a readiness settle applies to. */
export function inScope(observers: Set<Observer>, scope: SettleScope, observer: Observer | undefined): Observer[] {
  switch (scope.kind) {
    case 'all':
      return [...observers];
    case 'through':
      return [...observers].filter((candidate) => scope.seq >= candidate.minEndSeq);
    case 'prompt':
      return [...observers].filter((candidate) => candidate.mode !== 'follow' || scope.follows);
    case 'this':
      return observer ? [observer] : [];
  }
}
