/** One line that ran without the person being asked. */
export interface RanEntry {
  command: string;
  terminalId: string;
  title: string;
  at: string;
}

/** Lines kept per agent: the newest, so the panel shows what the allow list let through lately. */
export const ranLogPerAgent = 200;
/** Agents kept: the least recently active are dropped first. */
export const ranLogAgents = 64;

/** A bounded per-agent log of what ran without asking, for the agents panel. */
export class RanLog {
  private readonly byAgent = new Map<string, RanEntry[]>();
  private readonly listeners = new Set<() => void>();

  record(agent: string, entry: RanEntry): void {
    const entries = this.byAgent.get(agent) ?? [];
    this.byAgent.delete(agent);
    entries.push(entry);
    if (entries.length > ranLogPerAgent) entries.splice(0, entries.length - ranLogPerAgent);
    this.byAgent.set(agent, entries);
    if (this.byAgent.size > ranLogAgents) this.byAgent.delete(this.byAgent.keys().next().value!);
    for (const listener of this.listeners) listener();
  }

  list(): Array<{ agent: string; entries: RanEntry[] }> {
    return [...this.byAgent.entries()].map(([agent, entries]) => ({ agent, entries: [...entries] }));
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
