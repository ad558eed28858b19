import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../src/main/shells/dialect.js';
import { loadGrammars } from '../../../src/main/agent/judge/tree-sitter.js';
import { type JudgeFixture, makeJudgeFixture } from './fixture.js';
import { posixAllowed, posixHostile, pwshAllowed, pwshAskConservatively, pwshHostile, zshHostile } from './tables.js';

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
  { shell: 'zsh', allowed: posixAllowed, hostile: [...posixHostile, ...zshHostile] },
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
