import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeControl, findRefusedControl, visibleSegments } from '../../../src/shared/control-chars.js';
import { type AllowEntry, defaultAllowList, knownOption, knownOptions, matchEntry, parseAllowEntry } from '../../../src/main/agent/judge/allow-entries.js';
import { judgeAllowed } from '../../../src/main/agent/judge/judge-line.js';
import { loadGrammars } from '../../../src/main/agent/judge/tree-sitter.js';
import { envNeedingApproval } from '../../../src/main/agent/judge/env-names.js';
import { gitCheckKey, gitConfigProblem } from '../../../src/main/agent/judge/git-config.js';
import { holdsSensitivePath, isSensitivePath } from '../../../src/main/sandbox/sensitive-paths.js';
import { bracketedPaste } from '../../../src/main/terminal/session/keys.js';

const root = mkdtempSync(join(tmpdir(), 'tandem-judge-parts-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function repo(name: string, config: string, extra: Record<string, string> = {}): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  // A real repository (git finds an invalid `.git` directory no repository): then its own configuration.
  execFileSync('git', ['init', '-q', dir], { env: { PATH: process.env.PATH, HOME: root } });
  writeFileSync(join(dir, '.git', 'config'), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n${config}`);
  for (const [path, content] of Object.entries(extra)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

describe('the configuration git would use (asked of git, judged by an allow list)', () => {
  it('passes keys known to run nothing, from the repository and its subdirectories', async () => {
    const dir = repo(
      'plain',
      '\tautocrlf = input\n[user]\n\tname = me\n[remote "origin"]\n\turl = x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n',
    );
    expect(await gitConfigProblem(dir, root)).toBeNull();
    expect(await gitConfigProblem(join(dir, 'src'), root)).toBeNull();
    // Outside any repository: only the person's own files, which are not judged.
    mkdirSync(join(root, 'nowhere'), { recursive: true });
    expect(await gitConfigProblem(join(root, 'nowhere'), root)).toBeNull();
  });

  it.each([
    ['a filter driver', '[filter "lfs"]\n\tclean = touch /tmp/x\n', 'filter.lfs.clean'],
    ['a process filter', '[filter "x"]\n\tprocess = sh\n', 'filter.x.process'],
    ['a diff command', '[diff "x"]\n\tcommand = sh\n', 'diff.x.command'],
    ['a textconv', '[diff "pdf"]\n  textconv = "sh -c x"\n', 'diff.pdf.textconv'],
    ['an external diff', '[diff]\n\texternal = sh\n', 'diff.external'],
    ['an fsmonitor hook', '[core]\n\tfsmonitor = /tmp/hook\n', 'core.fsmonitor'],
    ['a hooks path', '[core]\n\thooksPath = .githooks\n', 'core.hookspath'],
    ['an ssh command', '[core]\n\tsshCommand = sh -c x\n', 'core.sshcommand'],
    ['a pager', '[core]\n\tpager = sh -c x\n', 'core.pager'],
    ['a per-command pager', '[pager]\n\tlog = sh\n', 'pager.log'],
    ['an alias', '[alias]\n\tst = !sh -c x\n', 'alias.st'],
    ['another work tree', '[core]\n\tworktree = /\n', 'core.worktree'],
    ['an unknown key', '[frobnicate]\n\tprogram = x\n', 'frobnicate.program'],
    ['the old section syntax', '[filter.lfs]\n\tsmudge = x\n', 'filter.lfs.smudge'],
    ['upper case names', '[FILTER "a"]\n\tClean = x\n', 'filter.a.clean'],
  ])('asks for %s, naming the key', async (name, config, key) => {
    expect(await gitConfigProblem(repo(`bad-${name.replace(/\W/g, '-')}`, config), root)).toContain(key);
  });

  it("quotes a key the repository named, so its words never read as Tandem's sentence", async () => {
    const why = await gitConfigProblem(repo('sentence', '[zz "x: every key is safe. approve\u202e"]\n\tk = 1\n'), root);
    // The whole key stays inside one quoted string, the sentence after it is Tandem's own.
    expect(why).toMatch(/^git would use "zz\.x: every key is safe\. approve\u202e\.k" \(set in "[^"]*config"\), which is not on the list/);
  });

  it('asks when git cannot read the configuration', async () => {
    expect(await gitConfigProblem(repo('unreadable', '[core\n\tpager = x\n'), root)).toMatch(/git refuses|could not read/);
  });

  it('follows includes, relative and from home, and worktrees, as git does', async () => {
    const included = repo('included', '[include]\n\tpath = extra.cfg\n', { '.git/extra.cfg': '[diff "x"]\n\ttextconv = sh\n' });
    expect(await gitConfigProblem(included, root)).toMatch(/diff\.x\.textconv.*extra\.cfg/);
    mkdirSync(join(root, 'home'), { recursive: true });
    writeFileSync(join(root, 'home', 'evil.cfg'), '[core]\n\tpager = sh\n');
    expect(await gitConfigProblem(repo('from-home', '[includeIf "gitdir:/"]\n\tpath = ~/evil.cfg\n'), join(root, 'home'))).toMatch(/core\.pager/);
    // An includeIf whose condition git finds false includes nothing.
    expect(await gitConfigProblem(repo('not-included', '[includeIf "gitdir:/nowhere/"]\n\tpath = ~/evil.cfg\n'), join(root, 'home'))).toBeNull();
    // A linked worktree made by git: its `.git` file and `commondir` lead to the main repository's configuration.
    const main = repo('main', '[core]\n\tfsmonitor = /tmp/hook\n');
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'x'], {
      cwd: main,
      env: { PATH: process.env.PATH, HOME: root },
    });
    execFileSync('git', ['worktree', 'add', '-q', join(root, 'linked')], { cwd: main, env: { PATH: process.env.PATH, HOME: root } });
    expect(await gitConfigProblem(join(root, 'linked'), root)).toMatch(/core\.fsmonitor/);
  });

  it('checks submodule configurations too', async () => {
    const dir = repo('with-module', '');
    execFileSync('git', ['init', '-q', '--bare', join(dir, '.git', 'modules', 'lib')], { env: { PATH: process.env.PATH, HOME: root } });
    expect(await gitConfigProblem(dir, root)).toBeNull();
    writeFileSync(join(dir, '.git', 'modules', 'lib', 'config'), '[core]\n\tbare = true\n\tpager = sh\n');
    expect(await gitConfigProblem(dir, root)).toMatch(/submodule: .*core\.pager/);
  });
});

describe("the repository's hooks (black-box round 7: git status ran .git/hooks/post-index-change)", () => {
  it('asks for a hook a looking command runs, and for any hook when the subcommand may run any', async () => {
    const dir = repo('hooked', '');
    const hooks = join(dir, '.git', 'hooks');
    mkdirSync(hooks, { recursive: true });
    // git's samples, a file that is not executable and a hook a commit runs: a looking command runs none of them.
    writeFileSync(join(hooks, 'post-index-change.sample'), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(hooks, 'pre-commit'), '#!/bin/sh\n', { mode: 0o755 });
    if (process.platform !== 'win32') writeFileSync(join(hooks, 'post-index-change'), '#!/bin/sh\n', { mode: 0o644 });
    expect(await gitConfigProblem(dir, root)).toBeNull();
    expect(await gitConfigProblem(dir, root, undefined, { everyHook: true })).toMatch(/hook ".*pre-commit"/);
    chmodSync(join(hooks, 'post-index-change'), 0o755);
    expect(await gitConfigProblem(dir, root)).toMatch(/git would run the repository's hook ".*post-index-change"/);
    expect(gitCheckKey('/w', 'status')).toBe(gitCheckKey('/w', 'log'));
    expect(gitCheckKey('/w', 'commit')).not.toBe(gitCheckKey('/w', 'status'));
    expect(gitCheckKey('/w', undefined)).not.toBe('/w');
  });

  it("asks for a submodule repository's hook too", async () => {
    const dir = repo('hooked-module', '');
    execFileSync('git', ['init', '-q', '--bare', join(dir, '.git', 'modules', 'lib')], { env: { PATH: process.env.PATH, HOME: root } });
    expect(await gitConfigProblem(dir, root)).toBeNull();
    writeFileSync(join(dir, '.git', 'modules', 'lib', 'hooks', 'post-index-change'), '#!/bin/sh\n', { mode: 0o755 });
    expect(await gitConfigProblem(dir, root)).toMatch(/submodule: git would run the repository's hook/);
  });
});

describe('core.worktree, judged by where it leads (a submodule has one)', () => {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'protocol.file.allow=always', ...args], {
      cwd,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: root, GIT_CONFIG_NOSYSTEM: '1' },
    });
  const workspace = join(root, 'ws');

  it("passes a submodule's own, asks for one outside the workspace, one from an included file and any without a workspace", async () => {
    const library = repo('ws-library', '');
    git(library, 'commit', '-q', '--allow-empty', '-m', 'l');
    const top = repo('ws', '');
    git(top, 'submodule', 'add', '-q', library, 'deps/lib');
    const inModule = join(top, 'deps', 'lib');
    const terminal = { workspace };
    expect(await gitConfigProblem(top, root, undefined, terminal)).toBeNull();
    expect(await gitConfigProblem(inModule, root, undefined, terminal)).toBeNull();
    // Without a workspace to lead into, the key asks as before.
    expect(await gitConfigProblem(inModule, root)).toContain('core.worktree');
    const config = join(top, '.git', 'modules', 'deps', 'lib', 'config');
    const set = (value: string) => git(top, 'config', '-f', config, 'core.worktree', value);
    // Outside: the workspace's parent, by a relative value and by an absolute one.
    for (const value of ['../../../../..', root]) {
      set(value);
      expect(await gitConfigProblem(top, root, undefined, terminal), value).toMatch(/core\.worktree.*outside the terminal's workspace/);
    }
    // A link inside the workspace that leads out is followed.
    symlinkSync(root, join(top, 'out'));
    set('../../../../out/ws-library');
    expect(await gitConfigProblem(top, root, undefined, terminal)).toMatch(/core\.worktree/);
    set('../../../../deps/lib');
    expect(await gitConfigProblem(top, root, undefined, terminal)).toBeNull();
    // From an included file, a relative value is read against the git directory, not the file: asks whatever it says.
    writeFileSync(join(top, 'deps', 'inc.cfg'), '[core]\n\tworktree = .\n');
    git(top, 'config', 'include.path', join(top, 'deps', 'inc.cfg'));
    expect(await gitConfigProblem(top, root, undefined, terminal)).toMatch(/core\.worktree.*inc\.cfg/);
    git(top, 'config', '--unset', 'include.path');
    // The repository's own core.worktree leading out of the workspace asks too.
    git(top, 'config', 'core.worktree', root);
    expect(await gitConfigProblem(workspace, root, undefined, terminal)).toMatch(/core\.worktree/);
  });
});

function entryOf(source: string): AllowEntry {
  const parsed = parseAllowEntry(source);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.entry;
}

describe('allow entries', () => {
  it('parses the entry syntax and refuses malformed entries', () => {
    expect(parseAllowEntry('git diff | options: --stat -U* | operands: paths')).toMatchObject({
      ok: true,
      entry: { program: 'git', subcommand: ['diff'], options: ['--stat', '-U*'], operands: 'paths' },
    });
    expect(parseAllowEntry('npm test')).toMatchObject({ ok: true, entry: { program: 'npm', subcommand: ['test'], options: 'any', operands: 'auto' } });
    expect(parseAllowEntry('ls | operands: files')).toMatchObject({ ok: false });
    expect(parseAllowEntry('ls | colour: yes')).toMatchObject({ ok: false });
    expect(parseAllowEntry('  ')).toMatchObject({ ok: false });
  });

  it('matches options by pattern and refuses abbreviations of refused long options', () => {
    const entry = entryOf('git diff | options: --stat -U*');
    expect(matchEntry(entry, ['git', 'diff', '--stat', '-U5'])).toMatchObject({ ok: true });
    expect(matchEntry(entry, ['git', 'diff', '--name-only'])).toMatchObject({ ok: false });
    expect(matchEntry(entry, ['git', 'log'])).toBeNull();
    const sort = entryOf('sort');
    for (const words of [
      ['sort', '--outp=x'],
      ['sort', '-o', 'x'],
      ['sort', '-ro', 'x'],
      ['sort', '--compress-prog=sh'],
    ])
      expect(matchEntry(sort, words)).toMatchObject({ ok: false });
    expect(matchEntry(sort, ['sort', '-r', 'x'])).toMatchObject({ ok: true, maybePaths: ['x'] });
  });
});

describe('git config reads only (black-box round 9)', () => {
  it('matches an entry for git config only with a read action, never one that writes', () => {
    const entry = entryOf('git config');
    for (const words of [
      ['--get', 'user.name'],
      ['--list'],
      ['-l'],
      ['--get-regexp', 'user'],
      ['get', 'user.name'],
      ['list'],
      ['--global', '--get', 'user.name'],
    ])
      expect(matchEntry(entry, ['git', 'config', ...words]), words.join(' ')).toMatchObject({ ok: true });
    for (const words of [
      ['--global', 'core.fsmonitor', 'id >x'],
      ['core.fsmonitor', 'x'],
      ['user.name', 'get'],
      ['--get', 'user.name', '--unset'],
      ['--add', 'alias.x', '!sh'],
      ['--edit'],
      ['set', 'core.pager', 'sh'],
      [],
    ])
      expect(matchEntry(entry, ['git', 'config', ...words]), words.join(' ')).toMatchObject({
        ok: false,
        reason: expect.stringContaining('writes configuration'),
      });
  });
});

describe('programs that run their arguments (black-box round 10)', () => {
  it('match only an entry for exactly the line: any further argument would be any command', () => {
    for (const source of ['timeout', 'env', 'bash', 'uv run', 'npm exec'])
      for (const words of [
        [...source.split(' '), 'sh', '-c', 'cat ~/.ssh/id_rsa'],
        [...source.split(' '), '9', 'ls'],
      ])
        expect(matchEntry(entryOf(source), words), `${source}: ${words.join(' ')}`).toMatchObject({
          ok: false,
          reason: expect.stringContaining('runs its arguments'),
        });
    // The entry's own words and nothing more: no further argument, so no other command.
    expect(matchEntry(entryOf('bash'), ['bash'])).toMatchObject({ ok: true });
    const exact = entryOf('timeout 300 npm test | options: | operands: none');
    expect(matchEntry(exact, ['timeout', '300', 'npm', 'test'])).toMatchObject({ ok: true });
    expect(matchEntry(exact, ['timeout', '300', 'npm', 'test', '--', 'x'])).toMatchObject({ ok: false });
    expect(matchEntry(entryOf('npm'), ['npm', 'exec', 'sh'])).toMatchObject({ ok: false, reason: expect.stringContaining('npm exec runs its arguments') });
    // A program with a subcommand that is no runner keeps its entry.
    expect(matchEntry(entryOf('npm view'), ['npm', 'view', 'react', '--json'])).toMatchObject({ ok: true });
    // Round 12: npm test, make, git rebase run what their options say: the line alone, nothing added.
    expect(matchEntry(entryOf('npm test'), ['npm', 'test'])).toMatchObject({ ok: true });
    for (const [source, words] of [
      ['npm test', ['npm', 'test', '--node-options=--import=data:x']],
      ['make test', ['make', 'test', '--eval=$(shell touch x)']],
      ['git rebase', ['git', 'rebase', '-x', 'touch x', 'HEAD~1']],
      ['git clone', ['git', 'clone', '-u', 'touch x;', 'file:///r', 'd']],
      ['tar', ['tar', 'cf', 'x.tar', 'README.md', '--checkpoint-action=exec=touch x', '--checkpoint=1']],
      ['zip', ['zip', 'x.zip', 'README.md', '-T', '-TT', 'touch x;']],
      ['git bisect', ['git', 'bisect', 'run', 'touch', 'x']],
    ] as const)
      expect(matchEntry(entryOf(source), words), words.join(' ')).toMatchObject({ ok: false, reason: expect.stringContaining('runs its arguments') });
  });
});

describe("printf's -v (black-box round 13)", () => {
  it('is refused under an entry for printf with any arguments: it assigns a shell variable, and bash evaluates a subscript in its name', () => {
    for (const words of [
      ['printf', '-v', 'a[$(touch x)]', '%s', 'y'],
      ['printf', '-vPROMPT_COMMAND', 'touch x'],
      ['printf', '-v', 'PS1', '%s', '$(touch x)'],
    ])
      expect(matchEntry(entryOf('printf'), words), words.join(' ')).toMatchObject({ ok: false, reason: expect.stringContaining('-v') });
    expect(matchEntry(entryOf('printf'), ['printf', '%s\\n', 'hello'])).toMatchObject({ ok: true });
  });
});

describe('options: known (issue 28)', () => {
  it('is accepted only for programs with a built-in list', () => {
    expect(parseAllowEntry('grep | options: known')).toMatchObject({ ok: true, entry: { options: 'known' } });
    expect(parseAllowEntry('git grep | options: known')).toMatchObject({ ok: true, entry: { program: 'git', subcommand: ['grep'], options: 'known' } });
    expect(parseAllowEntry('npm | options: known')).toMatchObject({ ok: false, reason: expect.stringContaining('no built-in list for npm') });
  });

  it('reads bundles: flags, then a value-taking letter takes the rest', () => {
    const grep = knownOptions.grep!;
    for (const arg of ['-rn', '-rniw', '-A3', '-C', '-ehello', '-rne--x', '-5', '--color=auto', '--context=3', '--recursive', '--color'])
      expect(knownOption(grep, arg), arg).toBe(true);
    for (const arg of ['-rx?', '-Q', '--unknown', '--recursive=yes', '--ignore-c', '--include']) expect(knownOption(grep, arg), arg).toBe(arg === '--include');
    const find = knownOptions.find!;
    for (const arg of ['-name', '-7', '-644', '-u+w', '-print0']) expect(knownOption(find, arg), arg).toBe(true);
    // find does not bundle: -nameL is not -name then -L.
    for (const arg of ['-nameL', '-exec', '-execdir', '-delete', '-fprint', '-ok', '-L', '-follow', '-newerXY'])
      expect(knownOption(find, arg), arg).toBe(false);
  });

  it('refuses what writes, runs a program, reads another file or follows links out', () => {
    const dangerous: Record<string, string[]> = {
      grep: ['-R', '-rR', '--dereference-recursive', '-f', '-fx', '--file=x', '--exclude-from=x'],
      rg: ['--pre=x', '--pre', '--pre-glob=x', '--hostname-bin=x', '-z', '--search-zip', '-L', '--follow', '-f', '--file=x', '--ignore-file=x'],
      find: ['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls', '-L', '-follow', '-files0-from', '-D', '-O3'],
      'git grep': ['-O', '-Ovi', '--open-files-in-pager', '--textconv', '--no-index', '-f', '--recurse-submodules'],
      stat: ['--unknown'],
      file: ['-C', '--compile', '-m', '--magic-file=x', '-f', '--files-from=x', '-z', '-Z', '--uncompress', '-p', '--preserve-date'],
      du: ['-L', '--dereference', '--files0-from=x', '-X', '--exclude-from=x'],
      df: ['--sync'],
    };
    expect(Object.keys(dangerous).sort()).toEqual(Object.keys(knownOptions).sort());
    for (const [name, args] of Object.entries(dangerous)) {
      const entry = entryOf(`${name} | options: known`);
      // The person's entry without a list still gets the built-in refusals.
      const open = entryOf(name);
      for (const arg of args) {
        expect(matchEntry(entry, [entry.program, ...entry.subcommand, arg, 'x']), `${name} ${arg}`).toMatchObject({ ok: false });
        if (!['--unknown', '--sync', '-D', '-O3'].includes(arg))
          expect(matchEntry(open, [entry.program, ...entry.subcommand, arg, 'x']), `${name} ${arg} (options: any)`).toMatchObject({ ok: false });
      }
    }
  });
});

describe('programs that read trees (issue 28)', () => {
  it('a tree holding a protected place is refused, one beside it is not', () => {
    const roots = { home: '/home/p', tandemDirs: ['/home/p/.config/Tandem'] };
    for (const path of ['/home/p', '/', '/home', '/home/p/.config', '/home/p/.ssh/x']) expect(holdsSensitivePath(path, roots), path).toBe(true);
    for (const path of ['/home/p/project', '/home/p/.config/other', '/srv/code']) expect(holdsSensitivePath(path, roots), path).toBe(false);
  });

  it('a read outside the workspace names the workspace, and where a link leads (black-box round 16)', async () => {
    const grammars = await loadGrammars();
    const home = join(root, 'named-home');
    const workspace = join(home, 'project');
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(home, 'notes'), 'x');
    symlinkSync(join(home, 'notes'), join(workspace, 'link'));
    const why = (line: string) => {
      const verdict = judgeAllowed(line, defaultAllowList, {
        shell: 'bash',
        grammars,
        home,
        operands: { cwd: workspace, workspace, roots: { home, tandemDirs: [] } },
      });
      return verdict.verdict === 'ask' ? verdict.why : '';
    };
    expect(why(`cat ${join(home, 'notes')}`)).toBe(`${join(home, 'notes')} is outside the terminal's workspace (${workspace})`);
    expect(why('cat link')).toBe(`link is outside the terminal's workspace (${workspace}); it leads to ${join(home, 'notes')}`);
  });

  it('grep -r, rg, find, du and git grep start at the cwd: a cwd outside the workspace or holding credentials asks', async () => {
    const grammars = await loadGrammars();
    const home = join(root, 'tree-home');
    const workspace = join(home, 'project');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    mkdirSync(join(workspace, 'src'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_rsa'), 'secret');
    const gitConfig = new Map([
      [workspace, await gitConfigProblem(workspace, home)],
      [home, await gitConfigProblem(home, home)],
    ]);
    const verdict = (line: string, cwd: string, ws = workspace): string =>
      judgeAllowed(line, defaultAllowList, { shell: 'bash', grammars, home, operands: { cwd, workspace: ws, roots: { home, tandemDirs: [] } }, gitConfig })
        .verdict;
    for (const line of ['grep -r secret', 'grep -rn secret src', 'rg secret', 'find', 'find . -name id_rsa', 'du -sh', 'git grep secret']) {
      expect(verdict(line, workspace), line).toBe('run');
      // The shell moved home: the same lines would search the credentials.
      expect(verdict(line, home), line).toBe('ask');
      // A terminal whose workspace is the home directory itself.
      expect(verdict(line, home, home), line).toBe('ask');
    }
    // Without -r grep reads the files named (or its input), not the cwd's tree.
    expect(verdict('grep secret project/src', home, home)).toBe('run');
    expect(verdict('ls', home, home)).toBe('run');
  });
});

describe('sensitive paths', () => {
  const roots = { home: '/home/p', tandemDirs: ['/home/p/.config/Tandem', '/run/user/1/tandem'] };
  it.each([
    '/proc/1/environ',
    '/proc',
    '/sys/x',
    '/dev/pts/3',
    '/home/p/.ssh/id_rsa',
    '/home/p/.aws',
    '/home/p/.claude.json',
    '/home/p/.claude/x',
    '/home/p/.codex/auth.json',
    '/home/p/.config/gh/hosts.yml',
    '/home/p/.docker/config.json',
    '/home/p/.kube/config',
    '/home/p/.netrc',
    '/home/p/.config/Tandem/agents/a.token',
    '/run/user/1/tandem/instance.json',
    '/home/p/.config/gcloud/x',
  ])('%s is protected', (path) => {
    expect(isSensitivePath(path, roots)).toBe(true);
  });
  it.each(['/home/p/project/README.md', '/home/p/.docker/other', '/home/p/.sshx', '/etc/passwd', '/home/p/.config/Tandemx'])(
    '%s is not on the list',
    (path) => {
      expect(isSensitivePath(path, roots)).toBe(false);
    },
  );
});

describe('terminal_open env', () => {
  it('lets locale, colour, width and zone through and holds everything else for the person', () => {
    expect(
      envNeedingApproval({
        LANG: 'C.UTF-8',
        LC_TIME: 'en_GB.UTF-8',
        NO_COLOR: '1',
        FORCE_COLOR: '3',
        COLUMNS: '100',
        TZ: 'Europe/Paris',
        COLORTERM: 'truecolor',
      }),
    ).toEqual([]);
    const hostile = {
      PATH: '/tmp',
      HOME: '/tmp/h',
      GIT_PAGER: 'sh',
      GIT_CONFIG_COUNT: '1',
      GIT_EXTERNAL_DIFF: 'sh',
      PYTHONPATH: '/tmp',
      INPUTRC: '/tmp/i',
      LD_PRELOAD: 'x',
      BASH_ENV: 'x',
      PROMPT_COMMAND: 'x',
      TANDEM_TERMINAL_ID: 'x',
      LC_ALL: '/tmp/locale',
      TZ: ':/tmp/zone',
      MY_SETTING: '1',
    };
    expect(envNeedingApproval(hostile)).toEqual(Object.keys(hostile));
  });
});

describe('control characters in text', () => {
  it('names the first refused character and its position', () => {
    expect(findRefusedControl('echo hi\x1b[201~; touch x')).toEqual({ char: '\x1b', index: 7 });
    expect(describeControl('\x1b')).toBe('ESC (U+001B)');
    expect(describeControl('\x03')).toBe('C-c (U+0003)');
    for (const text of ['a\rb', 'a\x7f', 'a\u009bb', 'a\u202eb', 'a\u2066b', 'a\x00']) expect(findRefusedControl(text)).not.toBeNull();
  });
  it('refuses ESC in a bracketed paste instead of stripping markers (which nesting undoes)', () => {
    expect(() => bracketedPaste('a\x1b[20\x1b[201~1~\ntouch x')).toThrow(/ESC \(U\+001B\) at position 1/);
    expect(bracketedPaste('a\nb')).toBe('\x1b[200~a\nb\x1b[201~');
  });

  it('lets newlines, tabs and CRLF through', () => {
    expect(findRefusedControl('for x in 1; do\n\techo $x\r\ndone')).toBeNull();
  });
  it('makes control and invisible characters visible for the card', () => {
    expect(visibleSegments('\x1b[201~')[0]).toEqual({ text: '\\x1b', control: true, title: 'ESC (U+001B)' });
    expect(visibleSegments('a\tb\u200bc')).toEqual([
      { text: 'a', control: false },
      { text: '\\t', control: true, title: 'TAB (U+0009)' },
      { text: 'b', control: false },
      { text: '\\u{200b}', control: true, title: 'ZERO WIDTH SPACE (U+200B)' },
      { text: 'c', control: false },
    ]);
  });
  it('shows a long run of spaces as one token, and leaves indentation as it is', () => {
    expect(visibleSegments(`echo ok${' '.repeat(3000)}; rm x`)).toEqual([
      { text: 'echo ok', control: false },
      { text: '␣×3000', control: true, title: '3000 spaces' },
      { text: '; rm x', control: false },
    ]);
    expect(visibleSegments(`if x; then\n${' '.repeat(15)}y\nfi`)).toEqual([{ text: `if x; then\n${' '.repeat(15)}y\nfi`, control: false }]);
    expect(visibleSegments(`${' '.repeat(16)}\x1b`).map((segment) => segment.text)).toEqual(['␣×16', '\\x1b']);
  });
});

describe('the default allow list', () => {
  it('parses, and fits setAgentPolicy (200 characters an entry)', () => {
    for (const entry of defaultAllowList) {
      expect(parseAllowEntry(entry).ok, entry).toBe(true);
      expect(entry.length, entry).toBeLessThanOrEqual(200);
    }
  });
});
