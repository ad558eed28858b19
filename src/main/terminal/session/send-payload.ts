/** What a send types: its text (bracketed as a paste where the shell supports it), Enter, then keys. */
import { bracketedPaste, quotedInsert } from './keys.js';

export function sendPayload(
  text: string,
  keys: string,
  opts: { command: boolean; submit: boolean; bracketedPaste: boolean; quotedInsert?: boolean },
): { payload: string; body: string } {
  const body = text.replace(/[\r\n]+$/, '');
  const multiline = /[\r\n]/.test(body);
  const enter = opts.submit ? '\r' : '';
  // Multi-line commands and control characters (a tab) arrive as one paste, not as keys.
  const pasted = opts.command && (multiline || /[\t\x00-\x08\x0b-\x1f]/.test(body)) && opts.bracketedPaste;
  // Line editors without bracketed paste (bash before 4.4) take each control character literally after Ctrl+V.
  const quoted = opts.command && (multiline || /[\t\x00-\x08\x0b-\x1f]/.test(body)) && !opts.bracketedPaste && opts.quotedInsert;
  const typed = pasted ? bracketedPaste(body) : quoted ? quotedInsert(body) : body.replace(/\r?\n/g, '\r');
  return { payload: typed + enter + keys, body };
}
