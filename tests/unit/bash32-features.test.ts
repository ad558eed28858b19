import { describe, expect, it } from 'vitest';
import { bash32Rules, newerThanBash32 } from './bash32-features.js';
import { parseBashVersion, needsLegacyIntegration } from '../../src/main/shells/bash-version.js';
import { sendPayload } from '../../src/main/terminal/session/send-payload.js';

describe('the bash 3.2 text checks', () => {
  it.each(bash32Rules.map((rule) => [rule.feature, rule] as const))('%s: finds its sample', (_feature, rule) => {
    expect(newerThanBash32(rule.sample).map((hit) => hit.feature)).toContain(rule.feature);
  });

  it('ignores comments', () => {
    expect(newerThanBash32('# PS0 and `local -` are 4.4\ntrue  # mapfile')).toEqual([]);
  });
});

describe('bash versions', () => {
  it('reads the version bash --version prints, and picks the legacy integration below 4.4', () => {
    const mac = parseBashVersion('GNU bash, version 3.2.57(1)-release (arm64-apple-darwin23)\nCopyright (C) 2007 Free Software Foundation, Inc.\n');
    expect(mac).toEqual({ major: 3, minor: 2, text: '3.2.57' });
    expect(needsLegacyIntegration(mac!)).toBe(true);
    expect(needsLegacyIntegration(parseBashVersion('GNU bash, version 4.3.48(1)-release')!)).toBe(true);
    expect(needsLegacyIntegration(parseBashVersion('GNU bash, version 4.4.20(1)-release')!)).toBe(false);
    expect(needsLegacyIntegration(parseBashVersion('GNU bash, version 5.2.37(1)-release (aarch64-apple-darwin24.0.0)')!)).toBe(false);
    expect(parseBashVersion('zsh 5.9 (x86_64-apple-darwin)')).toBeNull();
  });
});

describe('multi-line text for a line editor without bracketed paste', () => {
  it('puts Ctrl+V before each control character, so the text is one line', () => {
    const { payload } = sendPayload('echo one\r\necho\ttwo\n', '', { command: true, submit: true, bracketedPaste: false, quotedInsert: true });
    expect(payload).toBe('echo one\x16\necho\x16\ttwo\r');
  });

  it('refuses ESC as a paste does', () => {
    expect(() => sendPayload('a\nb\x1b[201~', '', { command: true, submit: true, bracketedPaste: false, quotedInsert: true })).toThrow(/ESC/);
  });

  it('types input to a running program as keys', () => {
    expect(sendPayload('a\nb', '', { command: false, submit: true, bracketedPaste: false, quotedInsert: true }).payload).toBe('a\rb\r');
  });
});
