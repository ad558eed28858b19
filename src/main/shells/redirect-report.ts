/**
 * What the shell reported at its last prompt that could make a program name run something
 * else: aliases (with their expansion), zsh's global aliases, names bash's command hash table
 * sends elsewhere than a PATH search would (`hash -p`; zsh sends none), builtins loaded since the startup files
 * ran (bash's `enable -f`, zsh's `zmodload`), functions, and whether `PATH` differs from what
 * it was once the startup files had run. Sent in a private marker (`D;<seq>;<flags>;<aliases>;
 * <global aliases>;<hashed>;<builtins>;<alias name;value pairs>;<global names>;<hashed name;path
 * pairs>;<builtin names>;<function names>`, every field percent-encoded, or `D;<seq>;=` when it
 * did not change) after each command.
 */
export interface RedirectReport {
  pathChanged: boolean;
  /** PATH has an empty or relative entry: a program name may run a file of the current folder. */
  pathRelative: boolean;
  /** The shell left something out (a bound was reached, or it could not list its functions): trust nothing. */
  incomplete: boolean;
  aliases: ReadonlyMap<string, string>;
  globalAliases: ReadonlySet<string>;
  /** Hashed names whose path is not what a PATH search finds, with that path. */
  hashed: ReadonlyMap<string, string>;
  /** Builtins that were not there once the startup files had run. */
  builtins: ReadonlySet<string>;
  functions: ReadonlySet<string>;
}

/** At most this many names in one report; the shells stop earlier, at about 8,000 characters. */
export const maxReportedNames = 1024;

export function parseRedirectReport(fields: string[], decode: (value: string) => string): RedirectReport | null {
  const [flags, ...rest] = fields;
  if (flags === undefined || !/^[prt]*$/.test(flags)) return null;
  const counts = rest.slice(0, 4).map(Number);
  if (counts.length < 4 || counts.some((count) => !Number.isInteger(count) || count < 0)) return null;
  const [aliasCount, globalCount, hashedCount, builtinCount] = counts as [number, number, number, number];
  const names = rest.slice(4).map(decode);
  if (aliasCount * 2 + globalCount + hashedCount * 2 + builtinCount > names.length) return null;
  let at = 0;
  const pairs = (count: number) => {
    const map = new Map<string, string>();
    for (let i = 0; i < count; i++, at += 2) map.set(names[at]!, names[at + 1]!);
    return map;
  };
  const list = (count: number) => new Set(names.slice(at, (at += count)));
  const aliases = pairs(aliasCount);
  const globalAliases = list(globalCount);
  const hashed = pairs(hashedCount);
  const builtins = list(builtinCount);
  const functions = new Set(names.slice(at).filter(Boolean));
  return {
    pathChanged: flags.includes('p'),
    pathRelative: flags.includes('r'),
    incomplete: flags.includes('t') || names.length > maxReportedNames,
    aliases,
    globalAliases,
    hashed,
    builtins,
    functions,
  };
}
