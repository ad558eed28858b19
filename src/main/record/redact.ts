/**
 * Credential-shaped values taken out of what a recording keeps. The decision is the agent
 * environment's scrub (src/main/shells/credentials.ts): a value assigned to a name it calls a
 * credential (`GITHUB_TOKEN=…`, `password: …`), and a value it calls one whatever its name (a
 * URL with `user:password@`, webhook URLs). The regexes below only find candidates cheaply;
 * `isCredentialName` and `isCredentialValue` decide.
 */
import { credentialNames, credentialSuffixes, isCredentialName, isCredentialValue } from '../shells/credentials.js';

export const redactedMark = '[redacted]';

// Each `=` or `:` is a candidate: the word before it (past spaces and a quote) is the name, the
// run after it the value. A regex for `word=` tried at every word ran at 25 MB/s in a flood; a
// regex for the two characters (`/[=:]/g`) still cost as much as copying the text; two
// `indexOf` searches, one per character, run at memory speed on output that has none.
// The last letters the scrub's names end with: most `word=` in output end otherwise, and skip the full check.
const lastLetters = new Set(
  [...credentialSuffixes, ...credentialNames].flatMap((name) => [name.charCodeAt(name.length - 1), name.toLowerCase().charCodeAt(name.length - 1)]),
);
const valueChars = /[ \t]*["']?([^\s"'`\x1b]+)/y;
// Any token holding `://`: the scrub's value shapes are all URLs.
const urlToken = /[^\s"'`<>]*:\/\/[^\s"'`<>]+/g;

/** `text` with credential-shaped values replaced by `[redacted]`; the same string when nothing matched. */
export function redact(text: string): string {
  let out = text;
  if (out.includes('://')) {
    out = out.replace(urlToken, (token) => {
      if (!isCredentialValue(token)) return token;
      // user:password@host keeps its user and host; a webhook URL is its own secret.
      const userinfo = /^([^:]*:\/\/[^:@/\s]*:)[^@\s]*@/.exec(token);
      if (userinfo) return `${userinfo[1]}${redactedMark}@${token.slice(userinfo[0].length)}`;
      const origin = /^[^:]*:\/\/[^/]*/.exec(token);
      return `${origin ? origin[0] : ''}/${redactedMark}`;
    });
  }
  let parts: string[] | null = null;
  let copied = 0;
  let next = 0;
  let equals = out.indexOf('=');
  let colon = out.indexOf(':');
  for (;;) {
    // The next candidate at or after `next`, whichever of the two characters comes first.
    if (equals !== -1 && equals < next) equals = out.indexOf('=', next);
    if (colon !== -1 && colon < next) colon = out.indexOf(':', next);
    const at = equals === -1 ? colon : colon === -1 ? equals : Math.min(equals, colon);
    if (at === -1) break;
    next = at + 1;
    let end = at;
    while (end > 0 && (out.charCodeAt(end - 1) === 0x20 || out.charCodeAt(end - 1) === 0x09)) end -= 1;
    if (end > 0 && (out[end - 1] === '"' || out[end - 1] === "'")) end -= 1;
    let from = end;
    while (from > 0 && isWordChar(out.charCodeAt(from - 1))) from -= 1;
    if (from === end || !lastLetters.has(out.charCodeAt(end - 1)) || !isCredentialName(out.slice(from, end))) continue;
    valueChars.lastIndex = at + 1;
    const value = valueChars.exec(out);
    if (!value || value[1] === redactedMark) continue;
    const valueAt = valueChars.lastIndex - value[1]!.length;
    (parts ??= []).push(out.slice(copied, valueAt), redactedMark);
    copied = valueChars.lastIndex;
    next = copied;
  }
  if (parts) out = parts.join('') + out.slice(copied);
  return out;
}

function isWordChar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;
}
