/**
 * The keys that empty a shell's line editor (each dialect names its own: `ShellDialect.lineClear`) before a judged line is typed (issue 23): whatever
 * the line held (text that reached the shell as typeahead, a person's unfinished typing) would
 * otherwise be run together with the judged text.
 *
 * - bash (readline) and zsh (zle), emacs keymap: Ctrl+E (end of line), Ctrl+U (readline's
 *   unix-line-discard kills to the start of the whole buffer; zle's kill-whole-line the
 *   current line, which at a continuation prompt is all zle holds: earlier lines are the parser's).
 * - sh: Ctrl+U alone. dash has no line editor: in the terminal's canonical mode Ctrl+U is the
 *   kill character (VKILL) and Ctrl+E would land in the line as a character.
 * - pwsh (PSReadLine, Emacs edit mode, the default off Windows): Ctrl+E EndOfLine, Ctrl+U
 *   BackwardKillInput, which empties the whole multi-line buffer: `clearsHeld` is true, so the
 *   lines a continuation held are typed again after it.
 * - Windows PowerShell and pwsh on Windows (Windows edit mode): Escape (RevertLine) would do,
 *   but ConPTY reads an ESC followed by a character as Alt+character and would eat the first
 *   character of the line; nothing is sent there (README, Known limitations).
 * A person's vi keymap (`set -o vi`, `bindkey -v`, `Set-PSReadLineOption -EditMode Vi`) is not
 * covered either; Tandem's own agent terminals start in the emacs keymap.
 */
export interface LineClear {
  keys: string;
  /** Empties the lines a continuation prompt holds too (they are retyped). */
  clearsHeld: boolean;
}

/** readline and ZLE in the emacs keymap, and PSReadLine's Emacs edit mode: end of line, then kill to the start. */
export const emacsLineClear: LineClear = { keys: '\x05\x15', clearsHeld: false };

/** A terminal's canonical mode (dash has no line editor): the kill character alone. */
export const killCharLineClear: LineClear = { keys: '\x15', clearsHeld: false };

/** PSReadLine off Windows: the same keys empty the whole multi-line buffer. */
export const psReadLineClear: LineClear = { keys: '\x05\x15', clearsHeld: true };
