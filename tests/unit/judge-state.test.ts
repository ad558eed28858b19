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
    ['bash', 'export GIT_EXTERNAL_DIFF=/tmp/x', /export/],
    ['bash', 'export -f ls', /export/],
    ['bash', 'declare -x PATH=/tmp', /declare/],
    ['bash', 'x=1', /variable/],
    ['bash', 'PATH=${X:=/tmp}', /variable/],
    ['bash', 'unset PATH', /unsets/],
    ['bash', 'source ./env.sh', /source/],
    ['bash', '. ./env.sh', /"\."/],
    ['bash', 'eval "$X"', /eval/],
    ['bash', 'set -o vi', /set/],
    ['bash', 'shopt -s expand_aliases', /shopt/],
    ['bash', 'builtin alias ls=x', /builtin/],
    ['bash', 'command alias ls=x', /command/],
    ['bash', "trap 'touch x' DEBUG", /trap/],
    ['bash', 'bind -x \'"\\C-m": touch x\'', /bind/],
    ['bash', 'read PATH < f', /read/],
    ['bash', 'printf -v PATH %s /tmp', /printf/],
    ['bash', 'echo ${X:=/tmp}', /expansion/],
    ['bash', 'echo $((x=1))', /arithmetic/],
    ['bash', 'for PATH in /tmp; do :; done', /loop/],
    ['bash', 'ls && export X=1', /export/],
    ['bash', 'IFS=: read a b', /read/],
    ['bash', '$cmd args', /name/],
    ['bash', "'alias' ls=x", /name/],
    ['bash', 'alias -p', /alias/],
    ['bash', 'alias ls="$(touch x)"', /alias/],
    ['bash', 'exec bash --rcfile x', /exec/],
    ['bash', 'command_not_found_handle() { touch x; }', /function "command_not_found_handle"/],
    ['bash', 'builtin() { touch x; }', /function "builtin"/],
    ['bash', 'if true; then', /could not be read/],
    ['bash', 'enable -n history', /enable/],
    ['bash', 'enable -an compgen', /enable/],
    ['bash', 'enable -f ./evil.so echo', /enable/],
    ['bash', "alias __tandem_precmd='__tandem_precmd; hash -p /tmp/x ls'", /alias/],
    ['bash', 'alias __git_ps1=evil', /alias/],
    ['bash', '__vte_prompt_command() { touch x; }', /function "__vte_prompt_command"/],
    ['bash', '_direnv_hook() { touch x; }', /function "_direnv_hook"/],
    ['zsh', 'preexec() { touch x; }', /function "preexec"/],
    ['zsh', 'TRAPDEBUG() { touch x; }', /function "TRAPDEBUG"/],
    ['zsh', 'setopt aliases', /setopt/],
    ['zsh', 'alias -g L="| touch x"', /alias/],
    ['zsh', 'alias -s txt=vim', /alias/],
    ['zsh', 'hash ls=/tmp/x', /hash/],
    ['zsh', 'bindkey -s "^M" "touch x^M"', /bindkey/],
    ['zsh', 'zmodload zsh/files', /zmodload/],
    ['zsh', 'ls *(e:"alias q=x":)', /could not be read|has/],
    ['zsh', 'echo ${(e)X}', /expansion|could not be read/],
    // sh reports nothing: aliases, functions and PATH change its state unseen.
    ['sh', 'alias ls="touch x"', /alias/],
    ['sh', 'f() { touch x; }', /function "f"/],
    ['sh', 'PATH=/tmp:$PATH', /variable/],
    ['pwsh', '$env:PATH = "/tmp"', /assigns/],
    ['pwsh', '$x = 1', /assigns/],
    ['pwsh', 'function ls { }', /function/],
    ['pwsh', 'Set-Alias ls "$(evil)"', /Set-Alias|expansion/],
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

/**
 * What the shell's redirect report shows after each command (aliases, functions by name, bash's
 * hash table and loaded builtins, PATH): those lines keep the terminal judged line by line, the
 * redirect check asks for a line they concern (tests/integration/agent-hardening.test.ts).
 */
describe('lines whose change the shell reports', () => {
  const reported: Array<[string, string]> = [
    ['bash', 'alias ls="touch x"'],
    ['bash', 'unalias ls; cat() { touch "$1"; }'],
    ['bash', 'function ls { :; }'],
    ['bash', 'unset -f cat; PATH=/tmp:$PATH'],
    ['bash', 'export PATH=/tmp:$PATH'],
    ['bash', 'hash -p /tmp/x ls'],
    ['zsh', 'f() { touch x; }'],
    ['pwsh', 'Set-Alias cat Remove-Item'],
    ['pwsh', 'New-Alias ls evil'],
  ];
  for (const [shell, line] of reported) {
    it(`${shell}: ${line}`, () => expect(stateChangeOf(line, shell, grammars)).toBeNull());
  }
});

describe('a terminal whose state the judge cannot see', () => {
  it('an approved state change holds for the terminal, quoting the line; cd does not', () => {
    const terminal = {};
    lineSubmitted(terminal, 'cd sub', 'bash', grammars);
    lineSubmitted(terminal, 'ls', 'bash', grammars);
    expect(heldStateProblem(terminal, {})).toBeNull();
    lineSubmitted(terminal, 'export X="touch\u202e x"', 'bash', grammars);
    lineSubmitted(terminal, 'ls', 'bash', grammars);
    expect(heldStateProblem(terminal, {})).toBe(
      'an earlier line in this terminal ("export X=\\"touch\u202e x\\"") runs "export", and the judge cannot see what that changed',
    );
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
    lineSubmitted(repl, 'export X=1', 'bash', grammars, true);
    expect(heldStateProblem(repl, {})).toMatch(/export/);
  });

  it('an open env with any name that is not harmless holds, naming the variables; locale and colour do not', () => {
    expect(heldStateProblem({}, { LANG: 'C.UTF-8', NO_COLOR: '1', TZ: 'Europe/Paris' })).toBeNull();
    expect(heldStateProblem({}, { LANG: 'C', PATH: '/w:/usr/bin', LD_PRELOAD: '/w/x.so' })).toBe(
      'this terminal was opened with "PATH", "LD_PRELOAD" set, which can make any program run other code; the person approved the variables, not each later command under them',
    );
    expect(heldStateProblem({}, { LANG: '/w/evil' })).toMatch(/"LANG"/);
  });
});
