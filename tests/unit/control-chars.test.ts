import { describe, expect, it } from 'vitest';
import { plainLine } from '../../src/shared/control-chars.js';

describe('plainLine', () => {
  it('shows every control, bidi, tab and line break as ?, and keeps other text', () => {
    expect(plainLine('evil\x1b]0;PWNED\x07/a\tb\nc\r\u202eé漢')).toBe('evil?]0;PWNED?/a?b?c??é漢');
    expect(plainLine('/home/p/.git/config')).toBe('/home/p/.git/config');
  });
});
