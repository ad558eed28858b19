import type { TandemConnection } from '../api';
import { agents } from './agents.svelte';
import { AttentionRules } from './attention-rules';
import { browserNotifier, desktopNotifier, type Notifier } from './notifier';
import { notifySettings } from './notify-settings.svelte';
import { terminals } from './terminals.svelte';
import { views } from './views';

/**
 * What each tab asks of the person (questions, unanswered prompts, unread output) and the
 * calls that go out for it: notifications as the settings choose, the title count, the
 * desktop badge and flash. Follows the terminals and agents stores.
 */
export class AttentionStore {
  /** Terminals with output since the person last looked at them. */
  unread = $state<Record<string, true>>({});
  /** Bumped when a roster-independent change (time passing) altered a mark. */
  private revision = $state(0);
  private readonly rules = new AttentionRules(() => performance.now());
  private notifier: Notifier | null = null;
  private disposeNotifier = (): void => undefined;
  private offOutput = (): void => undefined;
  private wakeTimer: ReturnType<typeof setTimeout> | null = null;
  private lastCount = 0;

  /** An agent asks to run a command in this terminal. */
  approvalFor(id: string): boolean {
    return agents.state.approvals.some((item) => item.terminalId === id);
  }

  /** An agent asks the person to take this terminal over. */
  handoffFor(id: string): boolean {
    return agents.state.handoffs.some((item) => item.terminalId === id);
  }

  unanswered(id: string): boolean {
    void this.revision;
    return this.rules.unanswered(id);
  }

  /** Follows a (new) connection: its output events for unread marks, its way of notifying. */
  bind(api: TandemConnection, show: (terminalId: string) => void): void {
    this.disposeNotifier();
    this.offOutput();
    if (api.transport === 'ipc') {
      const desktop = desktopNotifier(api, show);
      this.notifier = desktop.notifier;
      this.disposeNotifier = desktop.dispose;
    } else {
      this.notifier = browserNotifier(show);
      this.disposeNotifier = () => undefined;
    }
    this.offOutput = api.on('output', ({ attachmentId }) => {
      const id = terminals.activeId;
      for (const terminal of terminals.list) {
        if (terminal.id === id || this.unread[terminal.id]) continue;
        if (views.find(terminal.id)?.attachment === attachmentId) this.unread[terminal.id] = true;
      }
    });
  }

  /** The person looks at this terminal now. */
  seen(id: string | null): void {
    if (id && this.unread[id]) delete this.unread[id];
  }

  /** The page is visible and focused: the person sees the active tab. */
  watching = true;

  /** Takes the latest roster and questions; raises what is due. */
  update(): void {
    const watching = this.watching;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
    const questions = { approvals: agents.state.approvals, handoffs: agents.state.handoffs, pairings: agents.state.pairings };
    const { calls, wakeAt } = this.rules.update({ terminals: terminals.list, questions, activeId: terminals.activeId, watching });
    for (const id of Object.keys(this.unread)) if (!terminals.list.some((terminal) => terminal.id === id)) delete this.unread[id];
    for (const call of calls) if (notifySettings.enabled(call.kind)) this.notifier?.notify(call);
    const count = this.rules.count({ questions });
    if (count !== this.lastCount || calls.length > 0) this.notifier?.setCount(count, count > this.lastCount);
    this.lastCount = count;
    this.revision++;
    if (wakeAt !== null) this.wakeTimer = setTimeout(() => this.update(), Math.max(0, wakeAt - performance.now()) + 20);
  }
}

export const attention = new AttentionStore();
