/**
 * What the shell reported at its last prompt that could make a program name run something
 * else: aliases (with their expansion), zsh's global aliases, functions, and whether `PATH`
 * differs from what it was once the startup files had run. Sent in a private marker
 * (`D;<seq>;<flags>;<aliases>;<global aliases>;<alias name;value pairs>;<global names>;<function
 * names>`, every field percent-encoded, or `D;<seq>;=` when it did not change) after each command.
 */
export interface RedirectReport {
  pathChanged: boolean;
  /** The shell left something out (a bound was reached, or it could not list its functions): trust nothing. */
  incomplete: boolean;
  aliases: ReadonlyMap<string, string>;
  globalAliases: ReadonlySet<string>;
  functions: ReadonlySet<string>;
}

/** At most this many names in one report; the shells stop earlier, at about 8,000 characters. */
export const maxReportedNames = 1024;

export function parseRedirectReport(fields: string[], decode: (value: string) => string): RedirectReport | null {
  const [flags, aliasText, globalText, ...rest] = fields;
  if (flags === undefined || !/^[pt]*$/.test(flags)) return null;
  const aliasCount = Number(aliasText);
  const globalCount = Number(globalText);
  if (!Number.isInteger(aliasCount) || !Number.isInteger(globalCount) || aliasCount < 0 || globalCount < 0) return null;
  if (aliasCount * 2 + globalCount > rest.length) return null;
  const names = rest.map(decode);
  const aliases = new Map<string, string>();
  for (let i = 0; i < aliasCount; i++) aliases.set(names[2 * i]!, names[2 * i + 1]!);
  const globalAliases = new Set(names.slice(2 * aliasCount, 2 * aliasCount + globalCount));
  const functions = new Set(names.slice(2 * aliasCount + globalCount).filter(Boolean));
  return {
    pathChanged: flags.includes('p'),
    incomplete: flags.includes('t') || names.length > maxReportedNames,
    aliases,
    globalAliases,
    functions,
  };
}
