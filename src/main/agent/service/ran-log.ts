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
/**
 * Characters of one line kept: its start and its end, the middle counted. Typeahead to a program
 * is logged with all typed before it, and 200 entries of megabytes each cut the person off from
 * the agents panel (black-box round 15).
 */
export const ranLineChars = 2048;
/** Characters kept per agent over all its lines: the oldest go first. */
export const ranCharsPerAgent = 64 * 1024;

/** `command` within ranLineChars: the first and last parts, and how much is left out between. */
export function clipRanLine(command: string): string {
  if (command.length <= ranLineChars) return command;
  const head = command.slice(0, ranLineChars - 512);
  const tail = command.slice(-448);
  return `${head} … ${command.length - head.length - tail.length} more characters … ${tail}`;
}

/** A bounded per-agent log of what ran without asking, for the agents panel. */
export class RanLog {
  private readonly byAgent = new Map<string, RanEntry[]>();
  private readonly listeners = new Set<() => void>();

  record(agent: string, entry: RanEntry): void {
    const entries = this.byAgent.get(agent) ?? [];
    this.byAgent.delete(agent);
    entries.push({ ...entry, command: clipRanLine(entry.command), title: entry.title.slice(0, 256) });
    if (entries.length > ranLogPerAgent) entries.splice(0, entries.length - ranLogPerAgent);
    let chars = entries.reduce((sum, kept) => sum + kept.command.length, 0);
    while (chars > ranCharsPerAgent && entries.length > 1) chars -= entries.shift()!.command.length;
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
