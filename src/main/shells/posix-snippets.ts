import { credentialGlobs } from './credentials.js';
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

/** The percent-encoding of marker fields, identical in bash and zsh (parameter expansion, no fork). */
export const escapeFunction = String.raw`__tandem_esc() {
  REPLY=$1
  REPLY=\${REPLY//\%/%25}; REPLY=\${REPLY//;/%3B}; REPLY=\${REPLY//$'\a'/%07}
  REPLY=\${REPLY//$'\e'/%1B}; REPLY=\${REPLY//$'\n'/%0A}; REPLY=\${REPLY//$'\r'/%0D}
}`.replace(/\\\$/g, '$');
