/** Carrying out the readiness engine's effects on a session's parts: its observers, history, probes and listeners. */
import type { MarkerEvent } from './markers.js';
import type { ExitDrain } from './exit-drain.js';
import type { StreamHistory } from '../emulator/history.js';
import type { LastCommandTracker } from './last-command.js';
import { inScope, type Observer } from './observer.js';
import type { ProbeLoop } from './probe-loop.js';
import type { ReadinessEffect } from './readiness.js';
import type { StatusWatcher } from './status-watcher.js';

export interface EffectTarget {
  readonly observers: Set<Observer>;
  readonly history: StreamHistory;
  readonly lastDone: LastCommandTracker;
  readonly probes: ProbeLoop;
  readonly watcher: StatusWatcher;
  readonly drain: ExitDrain;
  /** The first prompt: keep the banner, release the startup waiters. */
  startupDone(): void;
  startupFailed(): void;
  integrationOff(): void;
  emit(): void;
}

/** `marker` is the marker the event came from; `about` the observer it was about. */
export function runEffects(effects: ReadinessEffect[], target: EffectTarget, now: number, marker: MarkerEvent | undefined, about: Observer | undefined): void {
  for (const effect of effects) {
    switch (effect.kind) {
      case 'settle': {
        const end =
          effect.exitCode !== undefined
            ? { exitCode: effect.exitCode, command: effect.fromMarker && marker?.kind === 'end' ? marker.command : null }
            : undefined;
        for (const observer of inScope(target.observers, effect.scope, about)) observer.finish(effect.status, effect.evidence, end);
        break;
      }
      case 'collect':
        for (const observer of target.observers) {
          if (!observer.collecting && effect.seq >= observer.minEndSeq) {
            observer.collecting = true;
            observer.command ??= marker?.kind === 'start' ? marker.command : null;
          }
        }
        break;
      case 'record-start':
        if (marker?.kind !== 'start') break;
        target.history.record(marker, now);
        target.lastDone.start(effect.seq, marker.command);
        break;
      case 'record-end':
        if (marker?.kind !== 'end') break;
        target.lastDone.end(effect.seq, marker.exitCode, marker.command);
        target.history.record({ ...marker, seq: effect.seq }, now);
        break;
      case 'record-line':
        if (marker?.kind !== 'line') break;
        target.history.attachCommand(effect.seq, marker.command);
        target.lastDone.line(effect.seq, marker.command);
        break;
      case 'record-continuation':
        if (marker) target.history.record(marker, now);
        break;
      case 'startup-done':
        target.startupDone();
        break;
      case 'startup-failed':
        target.startupFailed();
        break;
      case 'integration-off':
        target.integrationOff();
        break;
      case 'kick-probe':
        target.probes.kick();
        break;
      case 'probe-sooner':
        target.probes.sooner();
        break;
      case 'stop-probe':
        target.probes.stop();
        break;
      case 'candidate':
        if (about) about.candidate = effect.value;
        break;
      case 'adopt':
        target.watcher.adopt(effect.evidence);
        break;
      case 'drain':
        target.drain.start();
        break;
      case 'emit':
        target.emit();
        break;
    }
  }
}
