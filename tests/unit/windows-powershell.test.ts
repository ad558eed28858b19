/**
 * Windows PowerShell 5.1 (`powershell.exe`) as a Tandem shell. No Windows runs here, and pwsh 7
 * cannot parse as 5.1, so: pwsh's own parser reads the integration (resources/shell/tandem.ps1),
 * the rc file and the launch command Tandem gives `powershell`, and an AST walk finds none of
 * 7's syntax (pipeline chains, ternaries, null-coalescing and null-conditional operators, the
 * `e escape) nor PSReadLine beyond the 2.0 that 5.1 ships; a script with each of them shows the
 * walk can fail. Then the `powershell` shell, forced to this machine's pwsh binary, runs through
 * the same launch code to verified markers. The Windows CI job runs real powershell.exe
 * (tests/windows/conpty.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { powershellDialect } from '../../src/main/shells/pwsh.js';
import { dialectFor, resolveShell } from '../../src/main/shells/resolve.js';
import { findWindowsPowerShell, windowsPowerShellPath } from '../../src/main/shells/windows-powershell.js';
import { SessionPool, makeHome } from '../integration/helpers.js';
import { findPwsh, pwshRequired } from '../integration/pwsh-helpers.js';
import { runs, unixPty } from '../support/capabilities.js';

const pwsh = findPwsh();
const withPwsh = pwsh !== null || pwshRequired;
if (!withPwsh) console.warn('Windows PowerShell 5.1 checks: skipped, pwsh is not installed (set TANDEM_REQUIRE_PWSH=1 to fail instead).');

const scratch = mkdtempSync(join(tmpdir(), 'tandem-ps51-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Parses each file with pwsh's parser and reports, as JSON, parse errors and every construct
 * Windows PowerShell 5.1 (with PSReadLine 2.0) does not have. A PSReadLine parameter newer than
 * 2.0 is allowed only inside a `try` (the integration falls back in its `catch`).
 */
const walker = String.raw`
$L = [System.Management.Automation.Language.Ast].Namespace
$psrl20 = @{
  'Set-PSReadLineKeyHandler' = @('Chord', 'ScriptBlock', 'BriefDescription', 'Description', 'ViMode', 'Function')
  'Get-PSReadLineKeyHandler' = @('Bound', 'Unbound')
  'Set-PSReadLineOption' = @('EditMode', 'ContinuationPrompt', 'HistoryNoDuplicates', 'AddToHistoryHandler', 'CommandValidationHandler', 'HistorySearchCursorMovesToEnd', 'MaximumHistoryCount', 'MaximumKillRingCount', 'ShowToolTips', 'ExtraPromptLineCount', 'DingTone', 'DingDuration', 'BellStyle', 'CompletionQueryItems', 'WordDelimiters', 'HistorySearchCaseSensitive', 'HistorySaveStyle', 'HistorySavePath', 'AnsiEscapeTimeout', 'PromptText', 'ViModeIndicator', 'ViModeChangeHandler', 'Colors')
}
$psrlMethods20 = @('AddLine', 'GetBufferState', 'Insert', 'ReadLine', 'AcceptLine', 'Delete', 'Replace', 'SetCursorPosition', 'RevertLine', 'InvokePrompt', 'ClearScreen', 'Ding', 'GetSelectionState', 'GetHistoryItems', 'AddToHistory', 'ClearHistory', 'TabCompleteNext', 'TabCompletePrevious', 'Complete', 'MenuComplete')
$found = [System.Collections.Generic.List[object]]::new()
function Test-Ast($file, $ast, $tokens, $errors, $offset) {
  foreach ($e in $errors) { $found.Add(@{ file = $file; line = $offset + $e.Extent.StartLineNumber; kind = 'ParseError'; text = $e.Message }) }
  $nodes = $ast.FindAll({
    param($n)
    $n -is [System.Management.Automation.Language.PipelineChainAst] -or
    $n -is [System.Management.Automation.Language.TernaryExpressionAst] -or
    ($n -is [System.Management.Automation.Language.BinaryExpressionAst] -and $n.Operator -eq 'QuestionQuestion') -or
    ($n -is [System.Management.Automation.Language.AssignmentStatementAst] -and $n.Operator -eq 'QuestionQuestionEquals') -or
    ($n -is [System.Management.Automation.Language.MemberExpressionAst] -and $n.NullConditional) -or
    ($n -is [System.Management.Automation.Language.IndexExpressionAst] -and $n.NullConditional)
  }, $true)
  foreach ($n in $nodes) {
    $kind = $n.GetType().Name
    if ($kind -eq 'BinaryExpressionAst' -or $kind -eq 'AssignmentStatementAst') { $kind = $kind + ':' + $n.Operator }
    if ($n -is [System.Management.Automation.Language.MemberExpressionAst] -or $n -is [System.Management.Automation.Language.IndexExpressionAst]) { $kind = $n.GetType().Name + ':NullConditional' }
    $found.Add(@{ file = $file; line = $offset + $n.Extent.StartLineNumber; kind = $kind; text = $n.Extent.Text })
  }
  foreach ($t in $tokens) {
    if (($t.Kind -eq 'StringExpandable' -or $t.Kind -eq 'HereStringExpandable') -and $t.Text.Contains([string][char]96 + 'e')) {
      $found.Add(@{ file = $file; line = $offset + $t.Extent.StartLineNumber; kind = 'BacktickE'; text = $t.Text })
    }
    # Here-strings hold the prompt and readline wrappers, made into script blocks at run time.
    if ($t.Kind -eq 'HereStringLiteral') {
      $innerTokens = $null; $innerErrors = $null
      $inner = [System.Management.Automation.Language.Parser]::ParseInput($t.Value.Replace('__N__', '0'), [ref]$innerTokens, [ref]$innerErrors)
      Test-Ast $file $inner $innerTokens $innerErrors ($offset + $t.Extent.StartLineNumber)
    }
  }
  foreach ($c in $ast.FindAll({ param($n) $n -is [System.Management.Automation.Language.CommandAst] }, $true)) {
    $name = [string]$c.GetCommandName()
    if ($name.StartsWith('PSReadLine\')) { $name = $name.Substring(11) }
    if (-not $psrl20.ContainsKey($name)) { continue }
    $guarded = $false
    for ($p = $c.Parent; $p; $p = $p.Parent) { if ($p -is [System.Management.Automation.Language.TryStatementAst]) { $guarded = $true } }
    foreach ($e in $c.CommandElements) {
      if ($e -is [System.Management.Automation.Language.CommandParameterAst] -and $psrl20[$name] -notcontains $e.ParameterName -and -not $guarded) {
        $found.Add(@{ file = $file; line = $offset + $c.Extent.StartLineNumber; kind = 'PSReadLineParameter'; text = $name + ' -' + $e.ParameterName })
      }
    }
  }
  foreach ($m in $ast.FindAll({ param($n) $n -is [System.Management.Automation.Language.InvokeMemberExpressionAst] -and $n.Static }, $true)) {
    if ($m.Expression.TypeName.FullName -ne 'Microsoft.PowerShell.PSConsoleReadLine') { continue }
    if ($m.Member -is [System.Management.Automation.Language.StringConstantExpressionAst] -and $psrlMethods20 -notcontains $m.Member.Value) {
      $found.Add(@{ file = $file; line = $offset + $m.Extent.StartLineNumber; kind = 'PSReadLineMethod'; text = $m.Member.Value })
    }
  }
}
foreach ($file in $args) {
  $tokens = $null; $errors = $null
  $ast = [System.Management.Automation.Language.Parser]::ParseFile($file, [ref]$tokens, [ref]$errors)
  Test-Ast $file $ast $tokens $errors 0
}
ConvertTo-Json -Compress -Depth 3 -InputObject @($found)
`;

interface Finding {
  file: string;
  line: number;
  kind: string;
  text: string;
}

function walk(files: string[]): Finding[] {
  const script = join(scratch, 'walk.ps1');
  writeFileSync(script, walker);
  const result = spawnSync(pwsh!, ['-NoLogo', '-NoProfile', '-NonInteractive', '-File', script, ...files], { encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout) as Finding[];
}

/** What Tandem gives `powershell.exe` on Windows for an agent's terminal: the rc file and the -Command text. */
function launchFiles(): string[] {
  const plan = powershellDialect.plan('C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe', {
    secret: 'f'.repeat(32),
    rcDir: "C:\\Users\\O'Brien\\AppData\\Local\\Temp\\tandem-rc-x1",
    startupFiles: 'user',
    agent: true,
    historyFile: 'C:\\Users\\p\\AppData\\Local\\Temp\\tandem-history-x1',
    reapplyEnv: { PATH: 'C:\\Windows\\System32' },
    keepEnv: ['PATH', 'PAGER'],
    env: {},
    platform: 'win32',
  });
  const rc = join(scratch, 'rc.ps1');
  const command = join(scratch, 'command.ps1');
  writeFileSync(rc, plan.files[0]!.content);
  writeFileSync(command, plan.args.at(-1)!);
  return [rc, command];
}

describe('Windows PowerShell 5.1: found', () => {
  it('at its fixed place under the system root when PATH lacks it', () => {
    const expected = 'D:\\Win\\System32\\WindowsPowerShell\\v1.0\\powershell.exe';
    expect(windowsPowerShellPath({ SystemRoot: 'D:\\Win' })).toBe(expected);
    expect(windowsPowerShellPath({})).toBe('C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe');
    expect(findWindowsPowerShell({ SystemRoot: 'D:\\Win' }, (path) => path === expected)).toBe(expected);
    expect(findWindowsPowerShell({ SystemRoot: 'D:\\Win' }, () => false)).toBeNull();
    expect(dialectFor(expected)).toBe(powershellDialect);
  });
});

describe.runIf(withPwsh)('Windows PowerShell 5.1: the integration parses as 5.1 would', { timeout: 90_000 }, () => {
  it('has none of 7-only syntax nor PSReadLine beyond 2.0, in the script, the rc file and the launch command', () => {
    expect(pwsh, 'pwsh is required here (TANDEM_REQUIRE_PWSH=1)').not.toBeNull();
    const files = [resolve(import.meta.dirname, '../../resources/shell/tandem.ps1'), ...launchFiles()];
    expect(walk(files)).toEqual([]);
  });

  it('finds each 7-only construct in a script that has them, also in a here-string made into code', () => {
    const bad = join(scratch, 'seven.ps1');
    writeFileSync(
      bad,
      [
        '$a = $b ?? 1',
        '$c ??= 2',
        '$d = $a ? 1 : 2',
        'Get-Item . && Get-Item .',
        // `$a?` is a variable name: null-conditional access needs the braces.
        '$e = ${a}?.Length',
        '$h = ${a}?[0]',
        '$f = "`e[0m"',
        'Set-PSReadLineOption -PredictionSource History',
        '[Microsoft.PowerShell.PSConsoleReadLine]::AcceptSuggestion($null, $null)',
        "$wrapper = @'",
        '$ok = $global:? ?? $true',
        "'@",
        'function g { if ($x) { 1 }',
      ].join('\n'),
    );
    const findings = walk([bad]);
    const kinds = findings.map((finding) => finding.kind);
    expect(findings.filter((finding) => finding.text.includes('$global:?')).map((finding) => finding.kind)).toEqual(['BinaryExpressionAst:QuestionQuestion']);
    for (const kind of [
      'BinaryExpressionAst:QuestionQuestion',
      'AssignmentStatementAst:QuestionQuestionEquals',
      'TernaryExpressionAst',
      'PipelineChainAst',
      'MemberExpressionAst:NullConditional',
      'IndexExpressionAst:NullConditional',
      'BacktickE',
      'PSReadLineParameter',
      'PSReadLineMethod',
      'ParseError',
    ]) {
      expect(kinds, kind).toContain(kind);
    }
  });

  it('pins UTF-8 output before anything else runs (5.1 defaults to the OEM code page)', () => {
    const rc = powershellDialect
      .plan('powershell.exe', {
        secret: 's',
        rcDir: 'C:\\t',
        startupFiles: 'user',
        agent: false,
        historyFile: null,
        reapplyEnv: {},
        keepEnv: [],
        env: {},
        platform: 'win32',
      })
      .files[0]!.content.split('\n');
    const output = rc.findIndex((line) => line.includes('[Console]::OutputEncoding = $__u'));
    const psEncoding = rc.findIndex((line) => line.includes('$global:OutputEncoding = $__u'));
    expect(output).toBeGreaterThan(0);
    expect(psEncoding).toBeGreaterThan(0);
    expect(rc.findIndex((line) => /Write|ReadAllText\(/.test(line))).toBeGreaterThan(Math.max(output, psEncoding));
  });
});

describe.runIf(withPwsh && runs('powershell run by pwsh in a Unix PTY', unixPty))(
  'the `powershell` shell, run by pwsh through the same launch code',
  { timeout: 90_000 },
  () => {
    const home = makeHome();
    const pool = new SessionPool(home.home);
    afterAll(async () => {
      await pool.closeAll();
      home.cleanup();
    });

    it('reaches verified end markers with exit codes', async () => {
      expect(pwsh, 'pwsh is required here (TANDEM_REQUIRE_PWSH=1)').not.toBeNull();
      // An executable named `powershell` that is pwsh: resolved by name to the powershell dialect.
      const bin = join(scratch, 'bin');
      const launcher = join(bin, 'powershell');
      spawnSync('mkdir', ['-p', bin]);
      writeFileSync(launcher, `#!/bin/sh\nexec '${pwsh!.replace(/'/g, `'\\''`)}' "$@"\n`);
      chmodSync(launcher, 0o755);
      const shell = resolveShell(launcher);
      expect(shell.name).toBe('powershell');
      expect(shell.dialect).toBe(powershellDialect);
      const t = await pool.open(launcher, { baseEnv: { ...process.env, HOME: home.home, XDG_CONFIG_HOME: undefined }, startupTimeoutMs: 30_000 });
      expect(t.shell.name).toBe('powershell');
      expect(await t.send({ text: 'Write-Output tandem-ok' })).toMatchObject({ status: 'done', output: 'tandem-ok', exitCode: 0 });
      expect(await t.send({ text: "sh -c 'exit 3'" })).toMatchObject({ status: 'done', exitCode: 3 });
      expect(await t.send({ text: 'Write-Output ([char]0x00e9)' })).toMatchObject({ status: 'done', output: 'é', exitCode: 0 });
    });
  },
);
