import { describe, expect, it } from 'vitest';
import { isCredential, isCredentialName, isCredentialValue, scrubCredentials } from '../../src/main/shells/credentials.js';
import { agentKeptNames, agentMayInherit, agentReapplyEnv, buildShellEnv } from '../../src/main/shells/env.js';
import { gitHookEnv } from '../../src/main/shells/git-hooks.js';

describe('credential scrub', () => {
  it.each([
    'GITHUB_TOKEN',
    'MY_SERVICE_AUTH_TOKEN',
    'STRIPE_SECRET_KEY',
    'DEPLOY_KEY',
    'SIGNING_KEY',
    'AZURE_DEVOPS_PAT',
    'SENTRY_DSN',
    'DATABASE_URL',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'SLACK_WEBHOOK_URL',
    'AZURE_STORAGE_CONNECTION_STRING',
    'database_password',
    'MYSQL_PWD',
  ])('scrubs %s by name', (name) => {
    expect(isCredentialName(name)).toBe(true);
  });

  it.each(['SSH_AUTH_SOCK', 'TOKENIZERS_PARALLELISM', 'PATH', 'OLDPWD', 'PWD', 'KEYTIMEOUT', 'GPG_TTY', 'HOME', 'EDITOR', 'LANG'])('keeps %s', (name) => {
    expect(isCredentialName(name)).toBe(false);
  });

  it.each([
    'postgres://user:hunter2@db.internal:5432/app',
    'mysql://root:p%40ss@localhost/db',
    'redis://:secret@cache:6379',
    'amqp://guest:guest@rabbit//',
    'https://hooks.slack.com/services/T000/B000/XXXX',
    'https://discord.com/api/webhooks/123/abc',
    'https://discordapp.com/api/webhooks/123/abc',
    'https://acme.webhook.office.com/webhookb2/x',
  ])('scrubs a value shaped like a credential: %s', (value) => {
    expect(isCredentialValue(value)).toBe(true);
    expect(isCredential('WHATEVER', value)).toBe(true);
  });

  it.each([
    'postgres://db.internal/app',
    'https://example.com/a@b',
    'git@github.com:org/repo.git',
    'ssh://git@github.com:22/org/repo',
    'http://proxy:3128',
    '/run/user/1000/ssh-agent.sock',
  ])('keeps an ordinary value: %s', (value) => {
    expect(isCredentialValue(value)).toBe(false);
  });

  it('keeps SSH_AUTH_SOCK whatever its value and scrubs the rest of an environment', () => {
    const env = { SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1', PATH: '/usr/bin', APP_DB: 'postgres://u:p@h/db', CI_JOB_TOKEN: 'x', LANG: 'C.UTF-8' };
    expect(scrubCredentials(env)).toEqual({ SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1', PATH: '/usr/bin', LANG: 'C.UTF-8' });
  });
});

describe('agent environment', () => {
  const base = { PATH: '/usr/bin', GIT_CONFIG_PARAMETERS: "'core.fsmonitor'='touch x'", GIT_EXTERNAL_DIFF: '/tmp/x', REDIS: 'redis://:pw@h' };

  it('neutralises git hooks through command-scope config and drops what would override it', () => {
    const env = buildShellEnv({ base, agent: true, terminalId: 't1', instancePath: null });
    expect(env).toMatchObject(gitHookEnv);
    expect(env.GIT_CONFIG_COUNT).toBe('3');
    expect(env).toMatchObject({
      GIT_CONFIG_KEY_0: 'core.fsmonitor',
      GIT_CONFIG_VALUE_0: 'false',
      GIT_CONFIG_KEY_2: 'log.showSignature',
      GIT_CONFIG_VALUE_2: 'false',
    });
    expect(env).not.toHaveProperty('GIT_CONFIG_PARAMETERS');
    expect(env).not.toHaveProperty('GIT_EXTERNAL_DIFF');
    expect(env).not.toHaveProperty('REDIS');
    // The person's own terminals keep their environment.
    expect(buildShellEnv({ base, agent: false, terminalId: 't1', instancePath: null })).toMatchObject({ GIT_EXTERNAL_DIFF: '/tmp/x', REDIS: 'redis://:pw@h' });
  });

  it('sets TANDEM_TERMINAL_ID and TANDEM_INSTANCE after the caller’s env, at spawn and on re-apply', () => {
    const extra = { TANDEM_TERMINAL_ID: 'forged', TANDEM_INSTANCE: '/tmp/forged.json', FOO: 'bar' };
    const env = buildShellEnv({ base, agent: true, terminalId: 'real', instancePath: '/state/instance.json', extra });
    expect(env).toMatchObject({ TANDEM_TERMINAL_ID: 'real', TANDEM_INSTANCE: '/state/instance.json', FOO: 'bar' });
    expect(agentReapplyEnv(extra, env)).toMatchObject({ TANDEM_TERMINAL_ID: 'real', TANDEM_INSTANCE: '/state/instance.json', FOO: 'bar', GIT_PAGER: 'cat' });
    const noInstance = buildShellEnv({ base, agent: true, terminalId: 'real', instancePath: null, extra });
    expect(noInstance).not.toHaveProperty('TANDEM_INSTANCE');
    expect(agentReapplyEnv(extra, noInstance)).not.toHaveProperty('TANDEM_INSTANCE');
  });
});

describe('agent environment by allow list', () => {
  const base = { PATH: '/usr/bin', HOME: '/home/p', LC_TIME: 'C', ODD_SECRETISH_X: 'z', SSH_AUTH_SOCK: '/tmp/a', DISPLAY: ':0', TANDEM_TOKEN: 't' };

  it('takes only named variables from the host; the person adds names; the person keeps everything', () => {
    const env = buildShellEnv({ base, agent: true, terminalId: 't1', instancePath: null });
    expect(env).toMatchObject({ PATH: '/usr/bin', HOME: '/home/p', LC_TIME: 'C', TERM_PROGRAM: 'Tandem', TANDEM_TERMINAL_ID: 't1' });
    for (const name of ['ODD_SECRETISH_X', 'SSH_AUTH_SOCK', 'DISPLAY', 'TANDEM_TOKEN']) expect(env).not.toHaveProperty(name);
    expect(buildShellEnv({ base, agent: true, terminalId: 't1', instancePath: null, agentAllow: ['SSH_AUTH_SOCK'] })).toMatchObject({
      SSH_AUTH_SOCK: '/tmp/a',
    });
    expect(buildShellEnv({ base, agent: false, terminalId: 't1', instancePath: null })).toMatchObject(base);
  });

  it('still drops what would override the git hook settings, even when allowed', () => {
    const env = buildShellEnv({ base: { GIT_EXTERNAL_DIFF: '/tmp/x' }, agent: true, terminalId: 't1', instancePath: null, agentAllow: ['GIT_EXTERNAL_DIFF'] });
    expect(env).not.toHaveProperty('GIT_EXTERNAL_DIFF');
  });

  it('matches Windows names without case, POSIX names exactly', () => {
    expect(agentMayInherit('SYSTEMROOT', [], 'win32')).toBe(true);
    expect(agentMayInherit('Path', [], 'win32')).toBe(true);
    expect(agentMayInherit('SystemRoot', [], 'linux')).toBe(false);
    expect(agentMayInherit('path', [], 'linux')).toBe(false);
    expect(agentMayInherit('my_var', ['MY_VAR'], 'linux')).toBe(false);
  });
});

describe('what agent terminals keep of their startup files exports (agentKeptNames)', () => {
  it('keeps the launch names, the allow list, the additions and what shells set; only names a shell variable can have', () => {
    const kept = agentKeptNames(['TANDEM_TERMINAL_ID', 'HTTPS_PROXY', 'bad name', 'a=b'], ['AWS_PROFILE'], 'linux');
    for (const name of ['TANDEM_TERMINAL_ID', 'HTTPS_PROXY', 'AWS_PROFILE', 'PATH', 'HOME', 'EDITOR', 'PWD', 'SHLVL', 'PSModulePath', 'NO_COLOR'])
      expect(kept).toContain(name);
    expect(kept).not.toContain('bad name');
    expect(kept).not.toContain('a=b');
    expect(kept).not.toContain('SystemRoot');
    expect(kept).toEqual([...new Set(kept)].sort());
  });

  it("adds Windows' own names there, where a name may hold parentheses", () => {
    expect(agentKeptNames([], [], 'win32')).toEqual(expect.arrayContaining(['SystemRoot', 'ProgramFiles(x86)', 'PATH']));
  });
});
