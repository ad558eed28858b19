/**
 * One function says where resources/ is for each way Tandem runs (src/main/resources.ts), and
 * the rc files source the scripts found there, keeping every per-terminal value to themselves.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, posix, resolve, win32 } from 'node:path';
import { describe, expect, it } from 'vitest';
import { locateResources, resourcesDir, type ShellScript, shellScriptPath } from '../../src/main/resources.js';
import type { LaunchContext, ShellDialect } from '../../src/main/shells/dialect.js';
import { bashDialect } from '../../src/main/shells/bash.js';
import { pwshDialect } from '../../src/main/shells/pwsh.js';
import { shDialect } from '../../src/main/shells/sh.js';
import { zshDialect } from '../../src/main/shells/zsh.js';

const root = resolve(import.meta.dirname, '../..');

describe('locateResources', () => {
  it.each([
    ['the sources (tests, tsx)', '/home/me/tandem/src/main', '/home/me/tandem/resources'],
    ['a source module deeper down', '/home/me/tandem/src/main/shells', '/home/me/tandem/resources'],
    ['the build (tandem serve)', '/home/me/tandem/out/main', '/home/me/tandem/out/resources'],
    ['a chunk of the build', '/home/me/tandem/out/main/chunks', '/home/me/tandem/out/resources'],
    ['a checkout under a folder named src', '/home/me/src/tandem/out/main/chunks', '/home/me/src/tandem/out/resources'],
    ['the npm package', '/usr/lib/node_modules/tandem-terminal/out/main/chunks', '/usr/lib/node_modules/tandem-terminal/out/resources'],
    ['the Linux installers', '/opt/Tandem/resources/app.asar/out/main/chunks', '/opt/Tandem/resources/app.asar.unpacked/out/resources'],
    ['the AppImage', '/tmp/.mount_TandemX1/resources/app.asar/out/main', '/tmp/.mount_TandemX1/resources/app.asar.unpacked/out/resources'],
    [
      'the macOS app',
      '/Applications/Tandem.app/Contents/Resources/app.asar/out/main',
      '/Applications/Tandem.app/Contents/Resources/app.asar.unpacked/out/resources',
    ],
  ])('finds it from %s', (_layout, moduleDir, expected) => {
    expect(locateResources(moduleDir, posix)).toBe(expected);
  });

  it('finds it in the Windows installer, outside the archive', () => {
    expect(locateResources('C:\\Program Files\\Tandem\\resources\\app.asar\\out\\main\\chunks', win32)).toBe(
      'C:\\Program Files\\Tandem\\resources\\app.asar.unpacked\\out\\resources',
    );
    expect(locateResources('C:/Users/me/tandem/src/main', win32)).toBe('C:\\Users\\me\\tandem\\resources');
  });

  it('says so when the code runs from neither src/ nor out/', () => {
    expect(() => locateResources('/opt/elsewhere/lib', posix)).toThrow(/neither from src\/ nor from out\//);
  });

  it('finds the real scripts from the sources, and the build carries the same ones', () => {
    expect(resourcesDir()).toBe(join(root, 'resources'));
    for (const script of ['tandem.bash', 'tandem.zsh', 'tandem.sh', 'tandem.ps1'] as const) expect(existsSync(shellScriptPath(script)), script).toBe(true);
    const built = locateResources(join(root, 'out', 'main', 'chunks'));
    if (!existsSync(join(root, 'out', 'main'))) return console.warn('built layout check skipped: out/ is not built (`npm run build`).');
    expect(readFileSync(join(built, 'shell', 'tandem.bash'), 'utf8')).toBe(readFileSync(shellScriptPath('tandem.bash'), 'utf8'));
  });
});

describe('the generated rc files', () => {
  const secret = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
  const ctx: LaunchContext = {
    secret,
    rcDir: '/tmp/tandem-rc-unit',
    startupFiles: 'user',
    agent: true,
    historyFile: '/tmp/tandem-history-unit',
    reapplyEnv: { PAGER: 'cat', MY_CHOICE: 'reapplied-value' },
    keepEnv: ['PATH', 'PAGER'],
    env: { PATH: '/usr/bin' },
    platform: 'linux',
  };
  // sh (dash) keeps no history file of its own.
  const cases: Array<[string, ShellDialect, ShellScript, RegExp, boolean]> = [
    ['bash', bashDialect, 'tandem.bash', /^builtin \. '([^']+)'$/, true],
    ['zsh', zshDialect, 'tandem.zsh', /^builtin \. '([^']+)'$/, true],
    ['sh', shDialect, 'tandem.sh', /^\. '([^']+)'$/, false],
    ['pwsh', pwshDialect, 'tandem.ps1', /^& \(\[scriptblock\]::Create\(\[IO\.File\]::ReadAllText\('([^']+)'\)\)\)$/, true],
  ];

  it.each(cases)(
    '%s: sources its script last and keeps the secret, rc directory, variables and credential patterns in the rc',
    (_name, dialect, script, sourcing, history) => {
      const plan = dialect.plan(dialect.name, ctx);
      const rc = plan.files.at(-1)!.content;
      const last = rc.trimEnd().split('\n').at(-1)!;
      expect(sourcing.exec(last)?.[1]).toBe(shellScriptPath(script));
      for (const value of [secret, ctx.rcDir, ...(history ? [ctx.historyFile!] : []), 'reapplied-value', 'SSH_AUTH_SOCK', 'GITHUB_TOKEN', 'hooks'])
        expect(rc, value).toContain(value);
      const text = readFileSync(shellScriptPath(script), 'utf8');
      for (const value of [secret, ctx.rcDir, 'reapplied-value', 'GITHUB_TOKEN', 'hooks.slack.com']) expect(text, value).not.toContain(value);
      // Neither the process's arguments nor its environment carry what the rc file keeps.
      const visible = [...plan.args, ...Object.values(plan.env)].join('\n');
      expect(visible).not.toContain(secret);
      expect(visible).not.toContain('reapplied-value');
    },
  );
});
