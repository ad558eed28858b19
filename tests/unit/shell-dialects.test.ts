// The shell dialects as the one place a shell is described (issue 25): the judge, the line
// clearing and the readiness probe read a shell's facts from its dialect, so a new shell is its
// dialect file and a registry line. These tests hold the facets to what each consumer does.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateChangeOf } from '../../src/main/agent/judge/terminal-state.js';
import { loadGrammars } from '../../src/main/agent/judge/tree-sitter.js';
import type { DialectName } from '../../src/main/shells/dialect.js';
import { dialectByName, dialectOfProcess } from '../../src/main/shells/resolve.js';
import { type JudgeFixture, makeJudgeFixture } from './judge/fixture.js';

const names: DialectName[] = ['bash', 'zsh', 'sh', 'pwsh', 'powershell', 'cmd'];

let f: JudgeFixture;
let grammars: Awaited<ReturnType<typeof loadGrammars>>;
beforeAll(async () => {
  grammars = await loadGrammars();
  f = await makeJudgeFixture(grammars);
});
afterAll(() => rmSync(f.root, { recursive: true, force: true }));

describe('shell dialects', () => {
  it('name every family once, and a running shell by its process name (login dash dropped)', () => {
    for (const name of names) expect(dialectByName(name)?.name).toBe(name);
    expect(dialectByName('fish')).toBeNull();
    expect(dialectByName(null)).toBeNull();
    expect(dialectOfProcess('-zsh')?.name).toBe('zsh');
    expect(dialectOfProcess('dash')?.name).toBe('sh');
    expect(dialectOfProcess('python3')).toBeNull();
  });

  it('judge the lines of a shell whose dialect has a judge grammar, and ask everywhere else', () => {
    for (const name of names) {
      const judged = dialectByName(name)?.judge !== undefined;
      expect(f.verdict('ls', name), name).toBe(judged ? 'run' : 'ask');
      // What a line changes of the shell's state is read with the same grammar, or not at all.
      expect(stateChangeOf('ls', name, grammars) === null, name).toBe(judged);
    }
    expect(dialectByName('powershell')?.judge).toBeUndefined();
  });

  it('trust the redirect report only where the integration sends it, and the hash table only in bash', () => {
    // An alias is reported by bash, zsh and pwsh: defining one leaves the terminal judged line by line.
    expect(stateChangeOf("alias ll='ls -l'", 'bash', grammars)).toBeNull();
    expect(stateChangeOf("alias ll='ls -l'", 'zsh', grammars)).toBeNull();
    expect(stateChangeOf("alias ll='ls -l'", 'sh', grammars)).toMatch(/alias/);
    expect(stateChangeOf('hash -p /tmp/x ls', 'bash', grammars)).toBeNull();
    expect(stateChangeOf('hash -p /tmp/x ls', 'zsh', grammars)).toMatch(/hash/);
  });

  it('clear the line with the keys of each line editor, and with none where no key is safe', () => {
    expect(dialectByName('bash')!.lineClear('linux')).toEqual({ keys: '\x05\x15', clearsHeld: false });
    expect(dialectByName('zsh')!.lineClear('darwin')).toEqual({ keys: '\x05\x15', clearsHeld: false });
    expect(dialectByName('sh')!.lineClear('linux')).toEqual({ keys: '\x15', clearsHeld: false });
    expect(dialectByName('pwsh')!.lineClear('linux')).toEqual({ keys: '\x05\x15', clearsHeld: true });
    expect(dialectByName('pwsh')!.lineClear('win32')).toBeNull();
    expect(dialectByName('powershell')!.lineClear('win32')).toBeNull();
    expect(dialectByName('cmd')!.lineClear('win32')).toBeNull();
  });

  it('mark the line editors that read raw with echo off (the probe never takes their reads as waiting)', () => {
    expect(names.filter((name) => dialectByName(name)?.rawLineEditor === true)).toEqual(['bash', 'zsh']);
  });
});
