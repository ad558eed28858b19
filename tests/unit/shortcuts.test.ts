import { describe, expect, it } from 'vitest';
import { shortcutLabel, shortcutOf } from '../../src/renderer/src/lib/shortcuts';

function key(code: string, mods: { ctrl?: boolean; shift?: boolean; alt?: boolean; meta?: boolean } = {}, keyName = ''): KeyboardEvent {
  return { code, key: keyName, ctrlKey: !!mods.ctrl, shiftKey: !!mods.shift, altKey: !!mods.alt, metaKey: !!mods.meta } as KeyboardEvent;
}

describe('shortcuts', () => {
  it('sizes the font with Ctrl+=, Ctrl+- and Ctrl+0 (and the keypad)', () => {
    expect(shortcutOf(key('Equal', { ctrl: true }))).toBe('fontBigger');
    expect(shortcutOf(key('Equal', { ctrl: true, shift: true }))).toBe('fontBigger');
    expect(shortcutOf(key('NumpadAdd', { ctrl: true }))).toBe('fontBigger');
    expect(shortcutOf(key('Minus', { ctrl: true }))).toBe('fontSmaller');
    expect(shortcutOf(key('Digit0', { ctrl: true }))).toBe('fontReset');
  });

  it("leaves Ctrl+_ (readline's undo) and plain keys to the shell", () => {
    expect(shortcutOf(key('Minus', { ctrl: true, shift: true }))).toBeNull();
    expect(shortcutOf(key('Equal'))).toBeNull();
    expect(shortcutOf(key('KeyN', { alt: true }))).toBeNull();
    expect(shortcutOf(key('KeyT', { ctrl: true }))).toBeNull();
  });

  it('has Alt+Shift alternatives for what a browser keeps for itself', () => {
    expect(shortcutOf(key('KeyT', { ctrl: true, shift: true }))).toBe('new');
    expect(shortcutOf(key('KeyN', { alt: true, shift: true }))).toBe('new');
    expect(shortcutOf(key('KeyW', { alt: true, shift: true }))).toBe('close');
    expect(shortcutOf(key('ArrowRight', { alt: true, shift: true }))).toBe('next');
    expect(shortcutOf(key('ArrowLeft', { alt: true, shift: true }))).toBe('prev');
    expect(shortcutOf(key('PageDown', { ctrl: true }, 'PageDown'))).toBe('next');
    expect(shortcutLabel('new', true)).toBe('Alt+Shift+N');
    expect(shortcutLabel('new', false)).toBe('Ctrl+Shift+T');
    expect(shortcutLabel('search', true)).toBe('Ctrl+Shift+F');
  });
});
