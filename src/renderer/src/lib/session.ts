import { agents } from './agents.svelte';
import { connection } from './connection.svelte';
import { settings } from './settings.svelte';
import { terminals } from './terminals.svelte';
import { views } from './views';

/**
 * Connects, reads the roster (the host keeps terminals across reloads and reconnects) and
 * re-attaches every view after the transport comes back. The agents panel and the settings
 * follow the same connection.
 */
export async function startSession(): Promise<void> {
  const api = await connection.start({
    onLost: () => {
      for (const view of views.all()) view.connectionLost();
    },
    // The Tandem that ran them is gone: its tabs would show terminals that no longer exist.
    onEnded: () => terminals.forgetAll(),
    onReconnect: async () => {
      const current = connection.api;
      if (!current) return;
      void agents.bind(current);
      void settings.bind(current);
      await terminals.bind(current);
      for (const view of views.all()) void view.attach();
    },
  });
  if (!api) return;
  void agents.bind(api);
  void settings.bind(api);
  try {
    await terminals.bind(api);
  } catch (error) {
    terminals.notice = { code: null, message: `Could not read the terminals: ${(error as Error).message}` };
  }
}
