/**
 * The shell integration scripts (resources/shell): linted where Debian has a linter (shellcheck
 * for bash and sh), parsed by the shell itself where it has none (zsh -n, PowerShell's own
 * parser). Each check is also shown a broken script, so it can fail. The CI jobs that install
 * shellcheck and zsh set TANDEM_REQUIRE_SHELL_LINT=1, those with pwsh TANDEM_REQUIRE_PWSH=1: a
 * missing tool fails the run there instead of skipping (tests/support/capabilities.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findPwsh, pwshRequired } from '../integration/pwsh-helpers.js';
import { runs, shellcheck as shellcheckTool, zshForLint } from '../support/capabilities.js';
import { bashRc } from '../../src/main/shells/bash.js';
import { newerThanBash32 } from './bash32-features.js';

const scripts = resolve(import.meta.dirname, '../../resources/shell');
const shellcheck = shellcheckTool.path;
const zsh = zshForLint.path;
const pwsh = findPwsh();
const runShellcheck = runs('shellcheck lint (set TANDEM_REQUIRE_SHELL_LINT=1 to fail instead)', shellcheckTool);
const runZsh = runs('zsh parse check (set TANDEM_REQUIRE_SHELL_LINT=1 to fail instead)', zshForLint);
if (!pwsh && !pwshRequired) console.warn('PowerShell parse check skipped: pwsh is not installed (set TANDEM_REQUIRE_PWSH=1 to fail instead).');

const scratch = mkdtempSync(join(tmpdir(), 'tandem-shell-lint-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function broken(name: string, text: string): string {
  const path = join(scratch, name);
  writeFileSync(path, text);
  return path;
}

function run(file: string, args: string[]): { status: number | null; out: string } {
  const result = spawnSync(file, args, { encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

describe('shellcheck', () => {
  const lint = (path: string) => run(shellcheck!, ['--severity=style', '--external-sources', path]);

  it.runIf(runShellcheck).each(['tandem.bash', 'tandem-legacy.bash', 'tandem-drain.bash', 'tandem.sh'])('finds nothing in %s', (name) => {
    expect(shellcheck, 'shellcheck is required here (TANDEM_REQUIRE_SHELL_LINT=1)').not.toBeNull();
    const result = lint(join(scripts, name));
    expect(result.out).toBe('');
    expect(result.status).toBe(0);
  });

  it.runIf(runShellcheck)('fails on a script with a problem', () => {
    expect(shellcheck).not.toBeNull();
    const result = lint(broken('bad.sh', '# shellcheck shell=sh\necho $((1 +\n'));
    expect(result.status).not.toBe(0);
  });
});

describe('bash 3.2 (macOS /bin/bash): no feature it lacks', () => {
  // No bash 3.2 runs here (Debian has only 5.2): the legacy script, the rc file that runs
  // before it, and the head of tandem.bash that picks it are checked by text.
  const legacy = readFileSync(join(scripts, 'tandem-legacy.bash'), 'utf8');
  const ctx = {
    secret: 'abc',
    rcDir: '/tmp/rc',
    startupFiles: 'user' as const,
    agent: true,
    historyFile: '/tmp/h',
    reapplyEnv: { PAGER: 'cat' },
    keepEnv: ['PATH', 'PAGER'],
    env: {},
    platform: 'darwin' as const,
  };

  it('finds none in tandem-legacy.bash, the legacy rc file and the version check of tandem.bash', () => {
    expect(newerThanBash32(legacy)).toEqual([]);
    expect(newerThanBash32(readFileSync(join(scripts, 'tandem-drain.bash'), 'utf8'))).toEqual([]);
    expect(newerThanBash32(bashRc(ctx, 'legacy'))).toEqual([]);
    const head = readFileSync(join(scripts, 'tandem.bash'), 'utf8').split(/^fi$/m)[0]!;
    expect(head).toContain('tandem-legacy.bash');
    expect(newerThanBash32(head)).toEqual([]);
  });

  it('bash -n parses tandem-legacy.bash', () => {
    const result = run('bash', ['-n', join(scripts, 'tandem-legacy.bash')]);
    expect(result.out).toBe('');
    expect(result.status).toBe(0);
  });

  it('the checks find what tandem.bash uses from 4.x (so they can fail)', () => {
    const found = newerThanBash32(readFileSync(join(scripts, 'tandem.bash'), 'utf8').split(/^fi$/m)[1]!).map((hit) => hit.feature);
    expect(found).toEqual(expect.arrayContaining(['PS0', 'local -', 'BASH_ALIASES', 'BASH_CMDS', 'PROMPT_COMMAND as an array']));
  });
});

describe('zsh -n', () => {
  it.runIf(runZsh)('parses tandem.zsh, and refuses a broken script', () => {
    expect(zsh, 'zsh is required here (TANDEM_REQUIRE_SHELL_LINT=1)').not.toBeNull();
    const good = run(zsh!, ['-n', join(scripts, 'tandem.zsh')]);
    expect(good.out).toBe('');
    expect(good.status).toBe(0);
    expect(run(zsh!, ['-n', broken('bad.zsh', 'f() {\n  if [[ -n $x ]]; then\n}\n')]).status).not.toBe(0);
  });
});

describe("PowerShell's parser", () => {
  // ParseFile reports every syntax error without running anything.
  const parse = (path: string) =>
    run(pwsh!, [
      '-NoLogo',
      '-NoProfile',
      '-NonInteractive',
      '-Command',
      `$t = $null; $e = $null; [void][System.Management.Automation.Language.Parser]::ParseFile('${path.replace(/'/g, "''")}', [ref]$t, [ref]$e); foreach ($x in $e) { [Console]::Out.WriteLine($x.Extent.StartLineNumber.ToString() + ': ' + $x.Message) }; exit $e.Count`,
    ]);

  it.runIf(pwsh || pwshRequired)('parses tandem.ps1, and refuses a broken script', () => {
    expect(pwsh, 'pwsh is required here (TANDEM_REQUIRE_PWSH=1)').not.toBeNull();
    const good = parse(join(scripts, 'tandem.ps1'));
    expect(good.out).toBe('');
    expect(good.status).toBe(0);
    const bad = parse(broken('bad.ps1', "function f {\n  if ($x) { 'open'\n}\n"));
    expect(bad.status).not.toBe(0);
    expect(bad.out).toMatch(/^\d+: /m);
  });
});

describe('the scripts', () => {
  it('share one percent-encoding of marker fields between bash and zsh', () => {
    const esc = (name: string) => /^__tandem_esc\(\) \{\n[\s\S]*?\n\}$/m.exec(readFileSync(join(scripts, name), 'utf8'))?.[0];
    expect(esc('tandem.bash')).toBeDefined();
    expect(esc('tandem.bash')).toBe(esc('tandem.zsh'));
  });

  it('are ASCII with LF line ends (PowerShell 5.1 reads them as UTF-8, bash on Windows cannot take CR)', () => {
    for (const name of ['tandem.bash', 'tandem.zsh', 'tandem.sh', 'tandem.ps1']) {
      const text = readFileSync(join(scripts, name), 'utf8');
      expect(text, name).not.toMatch(/\r/);
      // tandem.sh carries a literal ESC and BEL (dash decodes no escapes in prompts).
      expect(text.replace(/[\x1b\x07]/g, ''), name).toMatch(/^[\x09\x0a\x20-\x7e]*$/);
    }
  });
});
