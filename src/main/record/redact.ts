/**
 * Credential-shaped values taken out of what a recording keeps. The decision is the agent
 * environment's scrub (src/main/shells/credentials.ts): a value assigned to a name it calls a
 * credential (`GITHUB_TOKEN=…`, `password: …`), and a value it calls one whatever its name (a
 * URL with `user:password@`, webhook URLs). The regexes below only find candidates cheaply; the
 * scrub's lists decide.
 *
 * {@link redactor} refers to nothing outside itself: the .cast writer's thread (cast-writer.ts)
 * runs it from its source text with the same lists, so output is redacted there, off the main
 * thread, exactly as everything else is here.
 */
import { credentialNames, credentialSuffixes, credentialValueGlobs, globToRegex, keptNames } from '../shells/credentials.js';

export const redactedMark = '[redacted]';

/** The scrub's lists, as plain data a thread can be given. */
export interface RedactLists {
  names: readonly string[];
  suffixes: readonly string[];
  kept: readonly string[];
  /** Regex sources of the value shapes (anchored; matched with the `s` flag). */
  valueShapes: readonly string[];
}

export const redactLists: RedactLists = {
  names: credentialNames,
  suffixes: credentialSuffixes,
  kept: keptNames,
  valueShapes: credentialValueGlobs.map(globToRegex),
};

/** Set by a redaction whose last credential value ran to the text's end (the stream may go on with more of it). */
export interface OpenEnd {
  open: boolean;
}

/**
 * A function that returns its text with credential-shaped values replaced by `[redacted]` (the
 * same string when nothing matched); given `end`, it says whether a redacted value ran to the end.
 */
export function redactor(lists: RedactLists): (text: string, end?: OpenEnd) => string {
  const mark = '[redacted]';
  const shapes = lists.valueShapes.map((source) => new RegExp(source, 's'));
  // The scrub's isCredentialName and isCredentialValue (credentials.ts), over the given lists.
  const isName = (name: string): boolean => {
    const upper = name.toUpperCase();
    if (lists.kept.includes(upper)) return false;
    return lists.names.includes(upper) || lists.suffixes.some((suffix) => upper.endsWith(suffix));
  };
  const isValue = (value: string): boolean => shapes.some((shape) => shape.test(value));
  // Each `=` or `:` is a candidate: the word before it (past spaces and a quote) is the name, the
  // run after it the value. A regex for `word=` tried at every word ran at 25 MB/s in a flood; a
  // regex for the two characters (`/[=:]/g`) still cost as much as copying the text; two
  // `indexOf` searches, one per character, run at memory speed on output that has none.
  // The last letters the scrub's names end with: most `word=` in output end otherwise, and skip the full check.
  const lastLetters = new Set(
    [...lists.suffixes, ...lists.names].flatMap((name) => [name.charCodeAt(name.length - 1), name.toLowerCase().charCodeAt(name.length - 1)]),
  );
  const valueChars = /[ \t]*["']?([^\s"'`\x1b]+)/y;
  // Any token holding `://`: the scrub's value shapes are all URLs.
  const urlToken = /[^\s"'`<>]*:\/\/[^\s"'`<>]+/g;
  const isWordChar = (code: number): boolean =>
    (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;

  return (text: string, end?: OpenEnd): string => {
    let out = text;
    let open = false;
    if (out.includes('://')) {
      out = out.replace(urlToken, (token: string, offset: number) => {
        if (!isValue(token)) return token;
        // A URL that is a secret by its shape, cut at the end: what follows is more of it.
        if (offset + token.length === text.length) open = true;
        // user:password@host keeps its user and host; a webhook URL is its own secret. The password
        // runs to the last `@` (a user part may hold one: `me@corp.com:pw@host`; more is safer than less).
        const userinfo = /^([^:]*:\/\/[^:/\s]*:)[^\s]*@/.exec(token);
        if (userinfo) return `${userinfo[1]}${mark}@${token.slice(userinfo[0].length)}`;
        const origin = /^[^:]*:\/\/[^/]*/.exec(token);
        return `${origin ? origin[0] : ''}/${mark}`;
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
      if (from === end || !lastLetters.has(out.charCodeAt(end - 1)) || !isName(out.slice(from, end))) continue;
      valueChars.lastIndex = at + 1;
      const value = valueChars.exec(out);
      if (!value || value[1] === mark) continue;
      const valueAt = valueChars.lastIndex - value[1]!.length;
      (parts ??= []).push(out.slice(copied, valueAt), mark);
      copied = valueChars.lastIndex;
      next = copied;
    }
    if (parts) {
      if (copied === out.length) open = true;
      out = parts.join('') + out.slice(copied);
    }
    if (end) end.open = open;
    return out;
  };
}

/** `text` with credential-shaped values replaced by `[redacted]`; the same string when nothing matched. */
export const redact = redactor(redactLists);
