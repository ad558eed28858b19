/**
 * Each agent's own colour and mark, derived from its name alone: stable across reloads and
 * windows, with no state to keep. Hues are picked from a fixed set spaced for telling apart.
 */
const hues = [292, 200, 28, 140, 340, 48, 250, 172] as const;

function hash(name: string): number {
  // FNV-1a: small, and spreads similar names ("agent-1", "agent-2") over the set.
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export interface AgentLook {
  hue: number;
  /** One or two letters for the agent's mark: initials of its words, else its first letter. */
  mark: string;
}

export function agentLook(name: string): AgentLook {
  const words = name.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  const first = words[0] ?? name;
  const mark = (words.length > 1 ? `${first[0]}${words[1]![0]}` : first.slice(0, 1)).toUpperCase();
  return { hue: hues[hash(name) % hues.length]!, mark: mark || '?' };
}
