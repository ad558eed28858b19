import { tmpdir } from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadGrammars, type Grammars } from '../../src/main/agent/judge/tree-sitter.js';
import { redirectedBy } from '../../src/main/agent/judge/redirect-check.js';
import { defaultPolicy, judge } from '../../src/main/agent/judge/policy.js';
import { decodeField, MarkerScanner } from '../../src/main/terminal/readiness/markers.js';
import { parseRedirectReport, type RedirectReport } from '../../src/main/shells/redirect-report.js';

function report(overrides: Partial<RedirectReport> = {}): RedirectReport {
  return {
    pathChanged: false,
    pathRelative: false,
    incomplete: false,
    aliases: new Map(),
    globalAliases: new Set(),
    hashed: new Map(),
    builtins: new Set(),
    functions: new Set(),
    ...overrides,
  };
}
let grammars: Grammars;
beforeAll(async () => {
  grammars = await loadGrammars();
});
const workspace = tmpdir();
const allowed = (line: string) =>
  judge(line, defaultPolicy, {
    shell: 'bash',
    grammars,
    operands: { cwd: workspace, workspace, roots: { home: '/nonexistent-home', tandemDirs: [] } },
    home: '/nonexistent-home',
  }).verdict === 'run';

describe('redirectedBy', () => {
  it('lets a line through when the shell reported nothing that names its program', () => {
    expect(redirectedBy('ls -la', report({ aliases: new Map([['ll', 'ls -l']]), functions: new Set(['mkcd']) }), allowed)).toBeNull();
    expect(redirectedBy('git status', report(), allowed)).toBeNull();
  });

  it('gives null for a shell that reports nothing (sh, cmd)', () => {
    expect(redirectedBy('ls', null, allowed)).toBeNull();
  });

  it.each([
    ['a function', 'ls -la', report({ functions: new Set(['ls']) }), /function/],
    ['a quoted function name', "'git' status", report({ functions: new Set(['git']) }), /function/],
    ['an alias to another program', 'ls', report({ aliases: new Map([['ls', 'touch canary']]) }), /alias/],
    ['an alias that adds a separator', 'ls', report({ aliases: new Map([['ls', 'ls; touch canary']]) }), /alias/],
    [
      'an alias whose expansion ends in a blank',
      'ls x',
      report({
        aliases: new Map([
          ['ls', 'ls '],
          ['x', 'rm -rf ~'],
        ]),
      }),
      /alias/,
    ],
    ['an alias adding an option that writes', 'git diff', report({ aliases: new Map([['git', 'git -c core.pager=evil']]) }), /alias/],
    ['a zsh global alias among the words', 'cat G', report({ globalAliases: new Set(['G']) }), /global alias/],
    ['a name the hash table sends elsewhere', 'ls', report({ hashed: new Map([['ls', '/tmp/x']]) }), /hashed to \/tmp\/x/],
    [
      'a same-program alias of a hashed name',
      'ls -la',
      report({ aliases: new Map([['ls', 'ls --color=auto']]), hashed: new Map([['ls', '/tmp/x']]) }),
      /hashed/,
    ],
    ['a loaded builtin', 'cat x', report({ builtins: new Set(['cat']) }), /builtin loaded/],
    ['a changed PATH', 'ls', report({ pathChanged: true }), /PATH/],
    ['a PATH entry leading into the current folder', 'ls', report({ pathRelative: true }), /empty or relative entry/],
    ['an incomplete report', 'pwd', report({ incomplete: true }), /could not list/],
  ])('asks for %s', (_what, line, shellReport, reason) => {
    expect(redirectedBy(line, shellReport, allowed)).toMatch(reason);
  });

  it('passes an alias that adds literal options to the same program when the expanded line is allowed', () => {
    const debian = report({ aliases: new Map([['ls', 'ls --color=auto']]) });
    expect(redirectedBy('ls -la', debian, allowed)).toBeNull();
    expect(redirectedBy('ls -la', debian, () => false)).toMatch(/alias/);
  });
});

describe('redirect report markers', () => {
  const secret = 's3';
  const scan = (body: string) => new MarkerScanner(secret).scan(`\x1b]7771;${secret};${body}\x07`);

  it('parses aliases, global aliases, hashed names, builtins and functions, percent-decoded', () => {
    expect(scan('D;7;p;2;1;1;1;ls;touch%20canary;ll;ls%20-l%3Bx;G;cat;%2Ftmp%2Fx%3By;rm;mkcd;f')).toEqual([
      {
        marker: {
          kind: 'redirects',
          seq: 7,
          report: {
            pathChanged: true,
            pathRelative: false,
            incomplete: false,
            aliases: new Map([
              ['ls', 'touch canary'],
              ['ll', 'ls -l;x'],
            ]),
            globalAliases: new Set(['G']),
            hashed: new Map([['cat', '/tmp/x;y']]),
            builtins: new Set(['rm']),
            functions: new Set(['mkcd', 'f']),
          },
        },
      },
    ]);
  });

  it('reads an unchanged report as the same one for a new command', () => {
    expect(scan('D;8;=')).toEqual([{ marker: { kind: 'redirects', seq: 8, report: null } }]);
    expect(scan('D;x;=')).toEqual([]);
  });

  it('reads an empty report and the incomplete flag', () => {
    expect(parseRedirectReport(['', '0', '0', '0', '0'], decodeField)).toEqual(report());
    expect(parseRedirectReport(['t', '0', '0', '0', '0', 'f'], decodeField)).toMatchObject({ incomplete: true, functions: new Set(['f']) });
    expect(parseRedirectReport(['pr', '0', '0', '0', '0'], decodeField)).toMatchObject({ pathChanged: true, pathRelative: true });
  });

  it.each([
    ['x', '0', '0', '0', '0'],
    ['', '2', '0', '0', '0', 'ls'],
    ['', '0', '0', '1', '0', 'ls'],
    ['', '-1', '0', '0', '0'],
    ['', 'a', '0', '0', '0'],
    ['', '0', '0'],
  ])('drops a malformed report %j', (...fields) => {
    expect(parseRedirectReport(fields, decodeField)).toBeNull();
  });

  it('treats a report beyond the bound of names as incomplete', () => {
    const names = Array.from({ length: 1100 }, (_, i) => `f${i}`);
    expect(parseRedirectReport(['', '0', '0', '0', '0', ...names], decodeField)?.incomplete).toBe(true);
  });
});
