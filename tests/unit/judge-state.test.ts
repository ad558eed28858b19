import { beforeAll, describe, expect, it } from 'vitest';
import { heldStateProblem, lineSubmitted, stateChangeOf } from '../../src/main/agent/judge/terminal-state.js';
import { type Grammars, loadGrammars } from '../../src/main/agent/judge/tree-sitter.js';

let grammars: Grammars;
beforeAll(async () => {
  grammars = await loadGrammars();
});

/**
 * What a submitted line changes of the shell's state (judge/terminal-state.ts): an allow list of
 * constructs known to keep it; everything else, an unreadable line included, counts as a change.
 */
describe('lines that keep the shell state', () => {
  const keeping: Array<[string, string]> = [
    ['bash', 'ls -la'],
    ['bash', 'cd sub'],
    ['bash', 'cd sub && ls | wc -l > out.txt'],
    ['bash', 'git status; git diff'],
    ['bash', 'FOO=1 make test'],
    ['bash', 'echo "$HOME" ${USER} $(alias x=y)'],
    ['bash', '[[ -f x ]] && ls'],
    ['bash', 'if true; then ls; fi'],
    ['bash', 'export LANG=C'],
    ['bash', 'printf "%s\\n" x'],
    ['zsh', 'pushd sub'],
    ['pwsh', 'Get-ChildItem -Force | Select-Object Name'],
    ['pwsh', 'cd sub'],
    ['pwsh', 'git status'],
  ];
  for (const [shell, line] of keeping) {
    it(`${shell}: ${line}`, () => expect(stateChangeOf(line, shell, grammars)).toBeNull());
  }
});

describe('lines that change it', () => {
  const changing: Array<[string, string, RegExp]> = [
    ['bash', 'alias ls="touch x"', /alias/],
    ['bash', 'export GIT_EXTERNAL_DIFF=/tmp/x', /export/],
    ['bash', 'declare -x PATH=/tmp', /declare/],
    ['bash', 'f() { touch x; }', /function/],
    ['bash', 'function ls { :; }', /function/],
    ['bash', 'x=1', /variable/],
    ['bash', 'PATH=/tmp:$PATH', /variable/],
    ['bash', 'unset PATH', /unset/],
    ['bash', 'source ./env.sh', /source/],
    ['bash', '. ./env.sh', /"\."/],
    ['bash', 'eval "$X"', /eval/],
    ['bash', 'set -o vi', /set/],
    ['bash', 'shopt -s expand_aliases', /shopt/],
    ['bash', 'enable -f ./x.so ls', /enable/],
    ['bash', 'hash -p /tmp/x ls', /hash/],
    ['bash', 'builtin alias ls=x', /builtin/],
    ['bash', 'command alias ls=x', /command/],
    ['bash', "trap 'touch x' DEBUG", /trap/],
    ['bash', "bind -x '\"\\C-m\": touch x'", /bind/],
    ['bash', 'read PATH < f', /read/],
    ['bash', 'printf -v PATH %s /tmp', /printf/],
    ['bash', 'echo ${X:=/tmp}', /expansion/],
    ['bash', 'echo $((x=1))', /arithmetic/],
    ['bash', 'for PATH in /tmp; do :; done', /loop/],
    ['bash', 'ls && alias ls=x', /alias/],
    ['bash', 'IFS=: read a b', /read/],
    ['bash', '$cmd args', /name/],
    ['bash', "'alias' ls=x", /name/],
    ['bash', 'exec bash --rcfile x', /exec/],
    ['bash', 'if true; then', /could not be read/],
    ['zsh', 'setopt aliases', /setopt/],
    ['zsh', 'bindkey -s "^M" "touch x^M"', /bindkey/],
    ['zsh', 'zmodload zsh/files', /zmodload/],
    ['zsh', 'ls *(e:"alias q=x":)', /could not be read|has/],
    ['zsh', 'echo ${(e)X}', /expansion|could not be read/],
    ['pwsh', '$env:PATH = "/tmp"', /assigns/],
    ['pwsh', '$x = 1', /assigns/],
    ['pwsh', 'Set-Alias ls evil', /Set-Alias/],
    ['pwsh', 'New-Alias ls evil', /New-Alias/],
    ['pwsh', 'function ls { }', /function/],
    ['pwsh', 'Import-Module ./evil.psm1', /Import-Module/],
    ['pwsh', '. ./profile.ps1', /operator/],
    ['pwsh', '& ./x.ps1', /operator/],
    ['pwsh', './x.ps1', /script|could not be read/],
    ['pwsh', 'Set-Item function:ls evil', /Set-Item/],
    ['pwsh', 'Remove-Item alias:ls', /Remove-Item/],
    ['pwsh', 'Get-ChildItem env:', /provider/],
    ['pwsh', 'ls "$(Set-Alias ls x)"', /expansion/],
    ['cmd', 'dir', /not parsed/],
  ];
  for (const [shell, line, why] of changing) {
    it(`${shell}: ${line}`, () => expect(stateChangeOf(line, shell, grammars)).toMatch(why));
  }
  it('without grammars every line counts as a change', () => expect(stateChangeOf('ls', 'bash', null)).toMatch(/could not be read/));
});

describe('a terminal whose state the judge cannot see', () => {
  it('an approved state change holds for the terminal, quoting the line; cd does not', () => {
    const terminal = {};
    lineSubmitted(terminal, 'cd sub', 'bash', grammars);
    lineSubmitted(terminal, 'ls', 'bash', grammars);
    expect(heldStateProblem(terminal, {})).toBeNull();
    lineSubmitted(terminal, 'alias ls="touch\u202e x"', 'bash', grammars);
    lineSubmitted(terminal, 'ls', 'bash', grammars);
    expect(heldStateProblem(terminal, {})).toBe('an earlier line in this terminal ("alias ls=\\"touch\u202e x\\"") runs "alias", and the judge cannot see what that changed');
    expect(heldStateProblem({}, {})).toBeNull();
  });

  it('a line submitted as named keys left it counts as a change; to a program only a readable change counts', () => {
    const keyed = {};
    lineSubmitted(keyed, null, 'bash', grammars);
    expect(heldStateProblem(keyed, {})).toMatch(/named keys/);
    const repl = {};
    lineSubmitted(repl, 'def f(x):', 'bash', grammars, true);
    lineSubmitted(repl, null, 'bash', grammars, true);
    expect(heldStateProblem(repl, {})).toBeNull();
    lineSubmitted(repl, 'alias ls=x', 'bash', grammars, true);
    expect(heldStateProblem(repl, {})).toMatch(/alias/);
  });

  it('an open env with any name that is not harmless holds, naming the variables; locale and colour do not', () => {
    expect(heldStateProblem({}, { LANG: 'C.UTF-8', NO_COLOR: '1', TZ: 'Europe/Paris' })).toBeNull();
    expect(heldStateProblem({}, { LANG: 'C', PATH: '/w:/usr/bin', LD_PRELOAD: '/w/x.so' })).toBe(
      'this terminal was opened with "PATH", "LD_PRELOAD" set, which can make any program run other code; the person approved the variables, not each later command under them',
    );
    expect(heldStateProblem({}, { LANG: '/w/evil' })).toMatch(/"LANG"/);
  });
});
