import type { Controller } from '../../shared/types.js';
import { type ControlEffect, type ControlEvent, type ControlState, initialControl, stepControl } from './control.js';
import { OpQueue } from './op-queue.js';

/**
 * One terminal's control machine and write queue, and the edge that carries out the machine's
 * effects: the person's lease in the queue, listeners, wakes. Every change of controller or
 * handoff is a `dispatch`, from the UI transports and the agent layer alike.
 */
export class TerminalControl {
  private current: ControlState;
  readonly queue: OpQueue;
  private readonly controlListeners = new Set<(control: Controller) => void>();
  private readonly wakeListeners = new Set<() => void>();

  constructor(
    controller: Controller,
    maxQueued: number,
    private readonly changed: (controller: Controller) => void,
  ) {
    this.current = initialControl(controller);
    this.queue = new OpQueue(maxQueued);
    if (controller === 'user') this.queue.grantLease();
  }

  get state(): ControlState {
    return this.current;
  }

  get controller(): Controller {
    return this.current.controller;
  }

  /** Steps the machine and runs its effects; returns the effects the caller carries out (`write`, `withdraw_request`). */
  dispatch(event: ControlEvent): ControlEffect[] {
    const { state, effects } = stepControl(this.current, event);
    this.current = state;
    for (const effect of effects) {
      if (effect.type === 'controller') {
        if (effect.controller === 'user') this.queue.grantLease();
        else this.queue.releaseLease();
        this.changed(effect.controller);
        for (const listener of [...this.controlListeners]) listener(effect.controller);
      } else if (effect.type === 'wake') {
        for (const wake of [...this.wakeListeners]) wake();
      }
    }
    return effects;
  }

  onControl(listener: (control: Controller) => void): () => void {
    this.controlListeners.add(listener);
    return () => this.controlListeners.delete(listener);
  }

  /** Called whenever a handoff or the controller changed: waiters re-check the state. */
  onWake(listener: () => void): () => void {
    this.wakeListeners.add(listener);
    return () => this.wakeListeners.delete(listener);
  }

  /** An AbortSignal that fires when the person takes control, for waits outside the queue. */
  takeoverSignal(): { signal: AbortSignal; dispose: () => void } {
    const controller = new AbortController();
    const off = this.onControl((control) => {
      if (control === 'user') controller.abort();
    });
    return { signal: controller.signal, dispose: off };
  }
}
