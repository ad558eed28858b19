import type { TandemApi } from '../../../shared/contract';
import { TerminalController } from '../terminal/terminal-controller.svelte';

/**
 * One view per terminal in the roster, kept while the terminal exists (hidden tabs keep
 * applying output), disposed when it leaves the roster.
 */
export class ViewRegistry {
  private readonly controllers = new Map<string, TerminalController>();

  get(id: string): TerminalController {
    let controller = this.controllers.get(id);
    if (!controller) {
      controller = new TerminalController(id);
      this.controllers.set(id, controller);
    }
    return controller;
  }

  find(id: string | null): TerminalController | null {
    return id ? (this.controllers.get(id) ?? null) : null;
  }

  /** A view per listed terminal, attached through `api`; views of unlisted terminals go. */
  sync(ids: readonly string[], api: TandemApi | null): void {
    const keep = new Set(ids);
    for (const id of ids) {
      const controller = this.get(id);
      if (!api) continue;
      controller.bind(api);
      if (controller.state === 'detached') void controller.attach();
    }
    for (const [id, controller] of this.controllers) {
      if (keep.has(id)) continue;
      controller.dispose();
      this.controllers.delete(id);
    }
  }

  all(): TerminalController[] {
    return [...this.controllers.values()];
  }
}

export const views = new ViewRegistry();
