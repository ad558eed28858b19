import { describe, expect, it } from 'vitest';
import { batchValue, cmdDialect, cmdMarkerPrompt, cmdRcVariable } from '../../src/main/shells/cmd.js';
import type { LaunchContext } from '../../src/main/shells/dialect.js';
import { MarkerScanner } from '../../src/main/terminal/readiness/markers.js';

const secret = '0123456789abcdef0123456789abcdef';
const rcDir = 'C:\\Users\\Ada 100%\\AppData\\Local\\Temp\\tandem-rc-x1';

function ctx(overrides: Partial<LaunchContext> = {}): LaunchContext {
  return {
    secret,
    rcDir,
    startupFiles: 'user',
    agent: true,
    historyFile: null,
    reapplyEnv: { PAGER: 'cat', GIT_PAGER: 'cat' },
    keepEnv: ['PATH', 'PAGER'],
    env: { PATH: 'C:\\Windows\\system32', PROMPT: '$P$G' },
    platform: 'win32',
    ...overrides,
  };
}

/** What cmd prints for a PROMPT string: the codes the marker uses, expanded. */
function expandPrompt(prompt: string, cwd: string): string {
  return prompt.replace(/\$E/g, '\x1b').replace(/\$P/g, cwd).replace(/\$G/g, '>');
}

describe('cmd launch plan', () => {
  it('reads AutoRun only with user startup files, and passes the rc path through a variable', () => {
    const user = cmdDialect.plan('C:\\Windows\\System32\\cmd.exe', ctx());
    const clean = cmdDialect.plan('C:\\Windows\\System32\\cmd.exe', ctx({ startupFiles: 'clean' }));
    expect(user.args).toEqual(['/k', `%${cmdRcVariable}%`]);
    expect(clean.args).toEqual(['/d', '/k', `%${cmdRcVariable}%`]);
    expect(user.files).toHaveLength(1);
    expect(user.files[0]!.path).toBe(`${rcDir}\\tandem.cmd`);
    expect(user.env[cmdRcVariable]).toBe(`"${rcDir}\\tandem.cmd"`);
  });

  it('keeps the secret out of argv and the spawn environment', () => {
    const plan = cmdDialect.plan('cmd.exe', ctx());
    expect(plan.args.join(' ')).not.toContain(secret);
    expect(Object.values(plan.env).join('\n')).not.toContain(secret);
    expect(plan.files[0]!.content).toContain(secret);
  });

  it('writes a CRLF batch file whose every line is silent, clears the variable first and deletes itself last', () => {
    const lines = cmdDialect.plan('cmd.exe', ctx()).files[0]!.content.split('\r\n');
    expect(lines.pop()).toBe('');
    expect(lines.every((line) => line.startsWith('@'))).toBe(true);
    expect(lines[0]).toBe(`@set "${cmdRcVariable}="`);
    expect(lines.at(-1)).toBe('@(goto) 2>nul & rmdir /s /q "C:\\Users\\Ada 100%%\\AppData\\Local\\Temp\\tandem-rc-x1"');
    expect(lines).toContain(`@set "PROMPT=${cmdMarkerPrompt(secret)}%PROMPT%"`);
  });

  it('re-applies the agent environment, pins UTF-8 and scrubs credentials after AutoRun', () => {
    const agent = cmdDialect.plan('cmd.exe', ctx()).files[0]!.content;
    expect(agent).toContain('@chcp 65001 >nul');
    expect(agent).toContain('@set "PAGER=cat"');
    expect(agent).toContain('@set "NO_COLOR=1"');
    expect(agent).toMatch(/findstr \/i \/r .*\/c:"\^GITHUB_TOKEN=" .*\/c:"\^\[\^=\]\*_API_KEY="/);
    expect(cmdDialect.plan('cmd.exe', ctx()).env.NO_COLOR).toBe('1');
    const person = cmdDialect.plan('cmd.exe', ctx({ agent: false, reapplyEnv: {} }));
    expect(person.files[0]!.content).not.toContain('chcp');
    expect(person.files[0]!.content).not.toContain('findstr');
    expect(person.env.NO_COLOR).toBeUndefined();
  });

  it('prints an end marker the scanner parses: cwd with a semicolon, no exit code', () => {
    const scanner = new MarkerScanner(secret);
    const parts = scanner.scan(`${expandPrompt(cmdMarkerPrompt(secret), 'C:\\a;b c')}C:\\a;b c>`);
    expect(parts).toEqual([{ marker: { kind: 'end', seq: 0, exitCode: null, cwd: 'C:\\a;b c', command: null } }, { text: 'C:\\a;b c>' }]);
  });

  it('escapes percent signs and refuses line breaks in batch values', () => {
    expect(batchValue('50% & "quoted" | <x>')).toBe('50%% & "quoted" | <x>');
    expect(() => batchValue('a\nb')).toThrow();
  });
});
