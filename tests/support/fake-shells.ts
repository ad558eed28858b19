import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * A layout of small executable scripts named bash or zsh, as macOS has them in several places:
 * `--version` prints the given first line (and counts the run), anything else execs the real
 * shell with TANDEM_FAKE_SHELL set, so a terminal opened on one shows which one it was.
 */
export interface FakeShell {
  /** Where discovery finds it (a symlink into a Cellar for Homebrew, as brew links). */
  path: string;
  id: string;
  runs(): number;
}

export function fakeShell(
  root: string,
  at: string,
  id: string,
  versionLine: string,
  runs: string,
  options: { execs?: string; cellar?: string } = {},
): FakeShell {
  const file = options.cellar ? join(root, options.cellar) : join(root, at);
  const counter = join(runs, id);
  mkdirSync(dirname(file), { recursive: true });
  mkdirSync(runs, { recursive: true });
  writeFileSync(counter, '');
  const run = options.execs ? `export TANDEM_FAKE_SHELL='${id}'\nexec ${options.execs} "$@"` : 'exit 2';
  writeFileSync(file, `#!/bin/sh\nif [ "$1" = --version ]; then\n  echo run >> '${counter}'\n  echo '${versionLine}'\n  exit 0\nfi\n${run}\n`);
  chmodSync(file, 0o755);
  const path = join(root, at);
  if (options.cellar) {
    mkdirSync(dirname(path), { recursive: true });
    symlinkSync(file, path);
  }
  return { path, id, runs: () => readFileSync(counter, 'utf8').split('\n').filter(Boolean).length };
}
