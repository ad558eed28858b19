import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isCredentialName } from '../../src/main/shells/credentials.js';
import type { LaunchContext } from '../../src/main/shells/dialect.js';
import { credentialPattern, powershellDialect, psQuote, pwshDialect } from '../../src/main/shells/pwsh.js';
import { dialectFor } from '../../src/main/shells/resolve.js';

const secret = '0123456789abcdef0123456789abcdef';

function ctx(overrides: Partial<LaunchContext> = {}): LaunchContext {
  return {
    secret,
    rcDir: '/tmp/tandem-rc-x1',
    startupFiles: 'user',
    agent: true,
    historyFile: '/tmp/tandem-history-abc',
    reapplyEnv: { PAGER: 'cat' },
    keepEnv: ['PATH', 'PAGER'],
    env: { PATH: '/usr/bin' },
    platform: 'linux',
    ...overrides,
  };
}

/** The integration script the rc file runs last (resources/shell/tandem.ps1). */
function sourcedScript(rc: string): string {
  const path = /^& \(\[scriptblock\]::Create\(\[IO\.File\]::ReadAllText\('([^']+)'\)\)\)$/m.exec(rc)?.[1];
  expect(path).toBeDefined();
  return readFileSync(path!, 'utf8');
}

describe('pwsh launch plan', () => {
  it('is registered for pwsh, powershell and cmd executables', () => {
    expect(dialectFor('/usr/bin/pwsh')?.name).toBe('pwsh');
    expect(dialectFor('powershell.exe')?.name).toBe('powershell');
    expect(dialectFor('CMD.EXE')?.name).toBe('cmd');
  });

  it('loads the profile only with user startup files and keeps the secret out of argv and env', () => {
    const user = pwshDialect.plan('pwsh', ctx());
    const clean = pwshDialect.plan('pwsh', ctx({ startupFiles: 'clean' }));
    expect(user.args.slice(0, 3)).toEqual(['-NoLogo', '-NoExit', '-Command']);
    expect(clean.args.slice(0, 4)).toEqual(['-NoLogo', '-NoProfile', '-NoExit', '-Command']);
    expect(user.args.at(-1)).toContain("ReadAllText('/tmp/tandem-rc-x1/tandem.ps1')");
    expect(user.args.join(' ')).not.toContain(secret);
    expect(Object.values(user.env).join('\n')).not.toContain(secret);
    expect(user.files).toEqual([{ path: '/tmp/tandem-rc-x1/tandem.ps1', content: expect.stringContaining(secret) }]);
  });

  it('uses Windows paths and the same integration for powershell.exe', () => {
    const plan = powershellDialect.plan('powershell.exe', ctx({ platform: 'win32', rcDir: "C:\\Users\\O'Brien\\Temp\\tandem-rc-x1" }));
    expect(powershellDialect.integration).toBe('full');
    expect(plan.files[0]!.path).toBe("C:\\Users\\O'Brien\\Temp\\tandem-rc-x1\\tandem.ps1");
    expect(plan.args.at(-1)).toContain("ReadAllText('C:\\Users\\O''Brien\\Temp\\tandem-rc-x1\\tandem.ps1')");
    // No double quotes: node-pty would escape them as \" on the Windows command line.
    expect(plan.args.at(-1)).not.toContain('"');
  });

  it('sets NO_COLOR for agent terminals only', () => {
    expect(pwshDialect.plan('pwsh', ctx()).env.NO_COLOR).toBe('1');
    expect(pwshDialect.plan('pwsh', ctx({ agent: false })).env.NO_COLOR).toBeUndefined();
    expect(pwshDialect.plan('pwsh', ctx({ agent: false })).files[0]!.content).not.toContain('NO_COLOR');
  });

  it('pins UTF-8 before anything else and deletes its directory next', () => {
    const rc = pwshDialect.plan('pwsh', ctx()).files[0]!.content;
    const statements = rc.split('\n').filter((line) => line && !line.includes('Set-StrictMode'));
    expect(statements.slice(0, 4).join('\n')).toMatch(/UTF8Encoding.*\n.*OutputEncoding.*\n.*InputEncoding.*\n\$global:OutputEncoding/);
    expect(statements[4]).toBe("try { [IO.Directory]::Delete('/tmp/tandem-rc-x1', $true) } catch { }");
    expect(sourcedScript(rc)).toContain('Set-PSReadLineOption -HistorySavePath $t.History');
    expect(rc).toContain("History = '/tmp/tandem-history-abc'");
  });

  it('quotes every kind of PowerShell single quote', () => {
    expect(psQuote("it's")).toBe("'it''s'");
    expect(psQuote('O\u2019Brien')).toBe("'O\u2019\u2019Brien'");
    expect(psQuote('$env:X `n')).toBe("'$env:X `n'");
  });

  it('renders the credential list as a regex that agrees with isCredentialName', () => {
    const pattern = new RegExp(credentialPattern(), 'i');
    for (const name of [
      'GITHUB_TOKEN',
      'gh_token',
      'MY_API_KEY',
      'AWS_SECRET_ACCESS_KEY',
      'TOKEN',
      'DB_PASSWORD',
      'TOKENIZERS_PARALLELISM',
      'SSH_AUTH_SOCK',
      'PATH',
      'MY_TOKEN_FILE',
      'X_PRIVATE_KEY',
    ]) {
      expect(pattern.test(name), name).toBe(isCredentialName(name));
    }
  });
});
