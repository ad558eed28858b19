import { TandemError } from '../../../shared/errors.js';
import { NAMED_KEYS } from '../../../shared/types.js';

/** Named keys (`Enter`, `C-c`, `Up`) or single printable characters, as the bytes a terminal sends. */
export function encodeKeys(keys: readonly string[]): string {
  return keys
    .map((key, index) => {
      const named = NAMED_KEYS[key];
      if (named !== undefined) return named;
      const ctrl = /^C-([a-zA-Z])$/.exec(key);
      if (ctrl) return String.fromCharCode(ctrl[1]!.toLowerCase().charCodeAt(0) - 96);
      if ([...key].length === 1 && !/[\x00-\x1f\x7f]/.test(key)) return key;
      throw new TandemError(
        'invalid_argument',
        `keys[${index}] "${key}" is not a named key (Enter, Tab, Escape, Up, C-c, ...) or a single printable character.`,
      );
    })
    .join('');
}

/**
 * Bracketed paste: multi-line text becomes one command line where the shell supports it.
 * Text with ESC is refused, never stripped: a strip can be undone by nesting markers, and an
 * end marker inside the paste would turn the rest into typed keys.
 */
export function bracketedPaste(text: string): string {
  const at = text.indexOf('\x1b');
  if (at >= 0)
    throw new TandemError('invalid_argument', `text contains ESC (U+001B) at position ${at}; control sequences cannot be pasted, send keys instead.`);
  return `\x1b[200~${text}\x1b[201~`;
}

/**
 * The same for readline without bracketed paste (bash before 4.4): each control character
 * after Ctrl+V (`quoted-insert`), so a newline lands in the line instead of submitting it and
 * the whole text is one command line. ESC is refused as for a paste.
 */
export function quotedInsert(text: string): string {
  const at = text.indexOf('\x1b');
  if (at >= 0)
    throw new TandemError('invalid_argument', `text contains ESC (U+001B) at position ${at}; control sequences cannot be pasted, send keys instead.`);
  return text.replace(/\r\n?/g, '\n').replace(/[\x00-\x1f]/g, (c) => `\x16${c}`);
}
