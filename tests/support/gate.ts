import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A file a command waits for, so a test decides when the command goes on instead of racing a
 * `sleep` against the machine's speed: `until [ -e PATH ]; do sleep 0.05; done` stays running
 * (in nanosleep, never waiting for input) until `open()`. `parent` must be visible to the shell
 * (a confined agent terminal has a /tmp of its own: use the agent's project there).
 */
export function gate(parent = tmpdir()): { path: string; open: () => void; dispose: () => void } {
  const dir = mkdtempSync(join(parent, 'tandem-gate-'));
  const path = join(dir, 'open');
  return {
    path,
    open: () => writeFileSync(path, ''),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
