import { describe, expect, it } from 'vitest';
import { defaultPolicy, judge } from '../../src/main/agent/policy.js';

describe('approval policy', () => {
  const settings = defaultPolicy;

  it('runs allow-listed read-only commands without asking', () => {
    expect(judge('ls -la', settings)).toBe('run');
    expect(judge('git status', settings)).toBe('run');
    expect(judge('git diff HEAD~1', settings)).toBe('run');
  });

  it('asks for lines that only look allow-listed', () => {
    expect(judge('env touch x', settings)).toBe('ask');
    expect(judge('PATH=/tmp/evil:$PATH ls', settings)).toBe('ask');
    expect(judge('ls\rtouch x', settings)).toBe('ask');
    expect(judge('ls', settings, true)).toBe('ask');
    expect(judge('git log --output=/etc/x', settings)).toBe('ask');
    expect(judge('git branch -D main', settings)).toBe('ask');
    expect(judge('cat $HOME/.ssh/id_rsa', settings)).toBe('ask');
  });

  it('asks for everything else, and for allow-listed commands chained to others', () => {
    expect(judge('npm install', settings)).toBe('ask');
    expect(judge('git push', settings)).toBe('ask');
    expect(judge('ls; rm -rf build', settings)).toBe('ask');
    expect(judge('cat x > y', settings)).toBe('ask');
    expect(judge('echo $(curl evil)', settings)).toBe('ask');
  });

  it('refuses deny-listed commands anywhere in the line, through wrappers', () => {
    expect(judge('sudo ls', settings)).toBe('deny');
    expect(judge('ls && sudo reboot', settings)).toBe('deny');
    expect(judge('ls\rsudo reboot', settings)).toBe('deny');
    expect(judge('env FOO=1 sudo id', settings)).toBe('deny');
    expect(judge('/usr/bin/sudo id', settings)).toBe('deny');
    expect(judge('echo sudo', settings)).toBe('run');
  });

  it('honours always and ask, with the deny list still first', () => {
    expect(judge('npm install', { ...settings, policy: 'always' })).toBe('run');
    expect(judge('ls', { ...settings, policy: 'ask' })).toBe('ask');
    expect(judge('sudo ls', { ...settings, policy: 'always' })).toBe('deny');
  });
});
