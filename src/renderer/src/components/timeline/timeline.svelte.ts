/**
 * The Timeline panel's state: what it shows (one terminal, or one agent across its terminals),
 * the host's `timeline` answer, and the filters.
 */
import type { OpResult } from '../../../../shared/contract';
import { connection } from '../../lib/connection.svelte';
import { type Problem, toProblem } from '../../lib/problem';
import type { OutcomeFilter } from './entries';

export type TimelineScope = { terminalId: string; title: string } | { agent: string };

export type TimelineLoad = { state: 'idle' } | { state: 'loading' } | { state: 'error'; problem: Problem } | { state: 'ready'; result: OpResult<'timeline'> };

/** Records the panel asks for (the operation allows 5000). */
export const panelLimit = 2000;

class TimelineStore {
  scope = $state.raw<TimelineScope | null>(null);
  load = $state.raw<TimelineLoad>({ state: 'idle' });
  who = $state('all');
  outcome = $state<OutcomeFilter>('all');
  private generation = 0;

  show(scope: TimelineScope): void {
    this.scope = scope;
    this.who = 'all';
    this.outcome = 'all';
    void this.refresh();
  }

  close(): void {
    this.generation += 1;
    this.scope = null;
    this.load = { state: 'idle' };
  }

  async refresh(): Promise<void> {
    const api = connection.api;
    const scope = this.scope;
    if (!api || !scope) return;
    const generation = ++this.generation;
    this.load = { state: 'loading' };
    try {
      const result = await api.call(
        'timeline',
        'agent' in scope ? { agent: scope.agent, limit: panelLimit } : { terminalId: scope.terminalId, limit: panelLimit },
      );
      if (generation === this.generation) this.load = { state: 'ready', result };
    } catch (error) {
      if (generation === this.generation) this.load = { state: 'error', problem: toProblem(error) };
    }
  }
}

export const timeline = new TimelineStore();
