import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultAllowList } from '../../../src/main/agent/judge/allow-entries.js';
import { gitCheckKey, gitConfigProblem } from '../../../src/main/agent/judge/git-config.js';
import { judgeAllowed, type LineContext } from '../../../src/main/agent/judge/judge-line.js';
import type { DialectName } from '../../../src/main/shells/dialect.js';
import type { Grammars } from '../../../src/main/agent/judge/tree-sitter.js';

/** A workspace with a clean repository, a home with credentials and Tandem's state, and symlinks out. */
export interface JudgeFixture {
  root: string;
  workspace: string;
  home: string;
  stateDir: string;
  verdict(line: string, shell: DialectName, allow?: readonly string[]): 'run' | 'ask';
}

export async function makeJudgeFixture(grammars: Grammars): Promise<JudgeFixture> {
  const root = mkdtempSync(join(tmpdir(), 'tandem-judge-'));
  const home = join(root, 'home');
  const workspace = join(home, 'project');
  const stateDir = join(home, '.config', 'Tandem');
  for (const dir of [
    join(workspace, 'src'),
    join(workspace, 'sub', 'dir'),
    join(workspace, '.git'),
    join(home, '.ssh'),
    join(stateDir, 'agents'),
    join(root, 'outside'),
  ])
    mkdirSync(dir, { recursive: true });
  writeFileSync(join(workspace, 'README.md'), 'hello\n');
  writeFileSync(join(workspace, 'src', 'main.ts'), 'export {};\n');
  writeFileSync(
    join(workspace, '.git', 'config'),
    '[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote "origin"]\n\turl = https://example.invalid/x.git\n',
  );
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'secret');
  writeFileSync(join(stateDir, 'agents', 'bridge.token'), 'secret');
  writeFileSync(join(root, 'outside', 'notes.txt'), 'outside');
  symlinkSync(join(workspace, 'README.md'), join(workspace, 'link-inside'));
  symlinkSync(join(root, 'outside', 'notes.txt'), join(workspace, 'link-outside'));
  symlinkSync(join(home, '.ssh'), join(workspace, 'keys'));
  symlinkSync('/proc', join(workspace, 'proc-link'));
  // A FIFO in the workspace: reading it blocks, or reads what another program writes (attack 8).
  execFileSync('mkfifo', [join(workspace, 'fifo')]);
  // What the git check finds in the workspace, found once as send.ts finds it before judging.
  // One answer for the subcommands that only look, one for any other (it counts every hook).
  const gitConfig = new Map([
    [gitCheckKey(workspace, 'status'), await gitConfigProblem(workspace, home)],
    [gitCheckKey(workspace, 'fetch'), await gitConfigProblem(workspace, home, undefined, { everyHook: true })],
  ]);
  const context = (shell: DialectName): LineContext => ({
    shell,
    grammars,
    home,
    operands: { cwd: workspace, workspace, roots: { home, tandemDirs: [stateDir] } },
    gitConfig,
  });
  return {
    root,
    workspace,
    home,
    stateDir,
    verdict: (line, shell, allow = defaultAllowList) => judgeAllowed(line, allow, context(shell)).verdict,
  };
}
