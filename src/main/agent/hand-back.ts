import type { CommandRecord } from '../terminal/history.js';
import { OutputProjector } from '../terminal/projection.js';
import { DEFAULT_LIMITS } from '../../shared/limits.js';

/** What the person shares on hand-back is bounded like a result's output. */
export const sharedOutputMaxBytes = DEFAULT_LIMITS.defaultOutputBytes;

/**
 * `handoff.summary` at hand-back: the commands the person ran and their exit codes; what the
 * terminal printed meanwhile only when the person chose to share it (`raw` is then the output
 * stream since they took control, else null and nothing of it reaches the agent).
 */
export function handBackSummary(commands: readonly CommandRecord[], raw: string | null, screen: () => string): string {
  const ran = commands.length === 0 ? 'The person ran no commands.' : commands.map((record) => `${record.command ?? '(command)'} → exit ${record.exitCode ?? '?'}`).join('\n');
  if (raw === null) return ran;
  const projector = new OutputProjector({ maxBytes: sharedOutputMaxBytes });
  projector.push(raw);
  const projected = projector.snapshot();
  const text = (projected.altScreen ? screen() : projected.output).trimEnd();
  return `${ran}\n\nThe person shared their output:\n${text === '' ? '(no output)' : text}`;
}
