import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../src/main/shells/dialect.js';
import { loadGrammars } from '../../../src/main/agent/judge/tree-sitter.js';
import { type JudgeFixture, makeJudgeFixture } from './fixture.js';
import { posixAllowed, posixHostile, pwshAllowed, pwshAskConservatively, pwshHostile, zshAllowed, zshHostile } from './tables.js';

let f: JudgeFixture;
beforeAll(async () => {
  f = await makeJudgeFixture(await loadGrammars());
});
afterAll(() => rmSync(f.root, { recursive: true, force: true }));

function fill(line: string): string {
  return line
    .replaceAll('{home}', f.home)
    .replaceAll('{state}', f.stateDir)
    .replaceAll('{outside}', join(f.root, 'outside'))
    .replaceAll('{workspace}', f.workspace);
}

function wrong(lines: readonly string[], shell: DialectName, expected: 'run' | 'ask'): string[] {
  return lines.map(fill).filter((line) => f.verdict(line, shell) !== expected);
}

const tables: Array<{ shell: DialectName; allowed: readonly string[]; hostile: readonly string[] }> = [
  { shell: 'bash', allowed: posixAllowed, hostile: posixHostile },
  { shell: 'sh', allowed: posixAllowed, hostile: posixHostile },
  { shell: 'zsh', allowed: zshAllowed, hostile: [...posixHostile, ...zshHostile] },
  { shell: 'pwsh', allowed: pwshAllowed, hostile: pwshHostile },
];

describe('the judge over a table per shell', () => {
  for (const { shell, allowed, hostile } of tables) {
    it(`${shell}: ${allowed.length} read-only lines run, ${hostile.length} hostile lines ask`, () => {
      expect(allowed.length + hostile.length).toBeGreaterThanOrEqual(150);
      expect(hostile.length).toBeGreaterThanOrEqual(75);
      expect(wrong(allowed, shell, 'run')).toEqual([]);
      expect(wrong(hostile, shell, 'ask')).toEqual([]);
    });
  }

  it('pwsh: asks for harmless lines its grammar cannot read', () => {
    expect(wrong(pwshAskConservatively, 'pwsh', 'ask')).toEqual([]);
  });

  it('asks for every line in cmd and unknown shells', () => {
    // cmd.exe and unknown shells are not classified at all.
    for (const shell of ['cmd', 'fish'] as const) expect(wrong(['ls', 'git status'], shell as DialectName, 'ask')).toEqual([]);
  });
});

describe('entries the card offers, black-box round 11', () => {
  const withEntries = (entries: readonly string[]) => (line: string) => f.verdict(fill(line), 'bash', entries);

  it('sed runs commands and writes files from its script: only an entry for exactly the line allows it', () => {
    const verdict = withEntries(['sed']);
    for (const line of ["sed '1e id > X' README.md", "sed -n 'w X' README.md", "sed 's/a/b/e' README.md", 'sed -n 1p README.md'])
      expect(verdict(line), line).toBe('ask');
    expect(f.verdict('sed -n 1p README.md', 'bash', ['sed -n 1p README.md | options: | operands: none'])).toBe('run');
  });

  it('a value joined to an option is checked as an operand', () => {
    const git = withEntries(['git config', 'diff']);
    expect(git('git config --list --file={home}/.ssh/id_ed25519')).toBe('ask');
    expect(git('git config --list -f{home}/.ssh/id_ed25519')).toBe('ask');
    expect(git('diff --from-file={home}/.ssh/id_ed25519 README.md')).toBe('ask');
    expect(git('diff --from-file={outside}/notes.txt README.md')).toBe('ask');
    // Inside the workspace, as a word of its own or joined, it still runs.
    expect(git('diff --from-file=src/main.ts README.md')).toBe('run');
    expect(git('git config --get core.bare')).toBe('run');
  });

  it('a program not known to only read cannot name a git directory or a file your tools run', () => {
    const verdict = withEntries(['uniq', 'xxd']);
    for (const line of [
      'uniq README.md .git/config',
      'uniq README.md ./.git/hooks/pre-commit',
      'xxd README.md .envrc',
      'uniq README.md .vscode/tasks.json',
      'uniq README.md src/../.git/config',
    ])
      expect(verdict(line), line).toBe('ask');
    expect(verdict('uniq README.md out.txt')).toBe('run');
    // The defaults only read: they may still look there.
    expect(f.verdict('cat .git/config', 'bash')).toBe('run');
  });
});
