import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitCheckKey, gitConfigProblem } from '../../src/main/agent/judge/git-config.js';
import { loadGrammars, type Grammars } from '../../src/main/agent/judge/tree-sitter.js';
import { defaultPolicy, judge, type PolicySettings } from '../../src/main/agent/judge/policy.js';

let grammars: Grammars;
let workspace: string;
let gitConfig: Map<string, string | null>;
beforeAll(async () => {
  grammars = await loadGrammars();
  workspace = mkdtempSync(join(tmpdir(), 'tandem-policy-'));
  mkdirSync(join(workspace, 'src'));
  writeFileSync(join(workspace, 'README.md'), 'hello');
  // Found before judging, as send.ts does (the judge itself runs no git).
  // One answer for the subcommands that only look, one for any other (it counts every hook).
  gitConfig = new Map([
    [gitCheckKey(workspace, 'status'), await gitConfigProblem(workspace, '/nonexistent-home')],
    [gitCheckKey(workspace, 'fetch'), await gitConfigProblem(workspace, '/nonexistent-home', undefined, { everyHook: true })],
  ]);
});

function verdict(line: string, settings: PolicySettings = defaultPolicy, hasKeys = false): string {
  return judge(line, settings, {
    hasKeys,
    shell: 'bash',
    grammars,
    operands: { cwd: workspace, workspace, roots: { home: '/nonexistent-home', tandemDirs: [] } },
    home: '/nonexistent-home',
    gitConfig,
  }).verdict;
}

describe('approval policy', () => {
  it('runs allow-listed read-only commands without asking', () => {
    expect(verdict('ls -la')).toBe('run');
    expect(verdict('git status')).toBe('run');
    expect(verdict('git diff HEAD~1')).toBe('run');
    expect(verdict('cat README.md')).toBe('run');
    expect(verdict('ls -la\n')).toBe('run');
    expect(verdict('ls -la\n\n')).toBe('run');
    expect(verdict('ls\n-la')).toBe('ask');
  });

  it('asks for lines that only look allow-listed', () => {
    expect(verdict('env touch x')).toBe('ask');
    expect(verdict('PATH=/tmp/evil:$PATH ls')).toBe('ask');
    expect(verdict('ls\rtouch x')).toBe('ask');
    expect(verdict('ls', defaultPolicy, true)).toBe('ask');
    expect(verdict('git log --output=/etc/x')).toBe('ask');
    expect(verdict('git branch -D main')).toBe('ask');
    expect(verdict('cat $HOME/.ssh/id_rsa')).toBe('ask');
  });

  it('asks for everything else, and for allow-listed commands chained to others', () => {
    expect(verdict('npm install')).toBe('ask');
    expect(verdict('git push')).toBe('ask');
    expect(verdict('ls; rm -rf build')).toBe('ask');
    expect(verdict('cat x > y')).toBe('ask');
    expect(verdict('echo $(curl evil)')).toBe('ask');
  });

  it('refuses deny-listed commands anywhere in the line, through wrappers', () => {
    expect(verdict('sudo ls')).toBe('deny');
    expect(verdict('ls && sudo reboot')).toBe('deny');
    expect(verdict('ls\rsudo reboot')).toBe('deny');
    expect(verdict('env FOO=1 sudo id')).toBe('deny');
    expect(verdict('/usr/bin/sudo id')).toBe('deny');
    expect(verdict('echo sudo')).toBe('run');
  });

  it('honours always and ask, with the deny list still first', () => {
    expect(verdict('npm install', { ...defaultPolicy, policy: 'always' })).toBe('run');
    expect(verdict('ls', { ...defaultPolicy, policy: 'ask' })).toBe('ask');
    expect(verdict('sudo ls', { ...defaultPolicy, policy: 'always' })).toBe('deny');
  });

  it('asks for every line when the grammars could not be loaded', () => {
    const context = { shell: 'bash', grammars: null, operands: null, home: '/nonexistent-home' };
    expect(judge('ls', defaultPolicy, context)).toEqual({ verdict: 'ask', why: 'the shell grammars could not be loaded' });
    expect(judge('ls', { ...defaultPolicy, policy: 'always' }, context)).toEqual({ verdict: 'run' });
  });

  it("keeps the person's own entries working, with built-in refusals for known programs", () => {
    const settings = { ...defaultPolicy, allow: ['npm test', 'git', 'sort | operands: paths'] };
    expect(verdict('npm test', settings)).toBe('run');
    // npm test passes what follows to the script (and --node-options to node): exactly the line only (round 12).
    expect(verdict('npm test -- --watch', settings)).toBe('ask');
    expect(verdict('npm testx', settings)).toBe('ask');
    expect(verdict('git fetch', settings)).toBe('run');
    expect(verdict("git rebase -x 'touch x' HEAD~1", settings)).toBe('ask');
    expect(verdict('git -C /tmp status', settings)).toBe('ask');
    expect(verdict('git diff --outp=x', settings)).toBe('ask');
    expect(verdict('sort README.md', settings)).toBe('run');
    expect(verdict('sort -o out README.md', settings)).toBe('ask');
    expect(verdict('sort --out=x README.md', settings)).toBe('ask');
  });
});
