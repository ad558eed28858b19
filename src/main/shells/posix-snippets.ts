import { credentialGlobs, credentialValueGlobs, keptNames } from './credentials.js';
import { gitHookUnset } from './git-hooks.js';
import { shQuote } from './dialect.js';

/** `export NAME='value'` lines for the variables re-applied after the person's startup files. */
export function exportLines(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([name, value]) => `export ${name}=${shQuote(value)}`)
    .join('\n');
}

/** The credential globs joined for a `case` pattern. */
export function credentialCasePattern(): string {
  return credentialGlobs().join('|');
}

/** Names kept although they match, joined for a `case` pattern. */
export function keptCasePattern(): string {
  return keptNames.join('|');
}

/** Credential-shaped values joined for a `case` pattern (quoted where a glob character is literal). */
export function credentialValueCasePattern(): string {
  return credentialValueGlobs
    .map((glob) =>
      glob
        .split('*')
        .map((part) => (part ? shQuote(part) : ''))
        .join('*'),
    )
    .join('|');
}

/** Names as one quoted word with a space around each, for a `*" $name "*` match. */
export function keptNamesWord(names: readonly string[]): string {
  return shQuote(` ${names.join(' ')} `);
}

/** `unset` of what the person's startup files may have set that would override the git hook settings. */
export const gitHookUnsetLine = `unset ${gitHookUnset.join(' ')}`;
