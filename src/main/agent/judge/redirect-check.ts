import type { RedirectReport } from '../../shells/redirect-report.js';

function unquote(word: string): string {
  return word.replace(/['"\\]/g, '');
}

/**
 * Why a line the allow list lets through must ask after all, or null: the shell reported, at
 * its last prompt, something that makes the line's program run something else (a function, an
 * alias, a zsh global alias among its words, a loaded builtin, a hash table entry pointing
 * elsewhere than PATH, a changed PATH, or a report it could not finish).
 * An alias that only adds words to the same program (`ls='ls --color=auto'`) passes when the
 * expanded line is itself allowed (`allowed`). A shell that reports nothing (sh, cmd) gives null.
 */
export function redirectedBy(line: string, report: RedirectReport | null, allowed: (expanded: string) => boolean): string | null {
  if (!report) return null;
  const words = line.trim().split(/\s+/).filter(Boolean);
  const program = words[0] === undefined ? '' : unquote(words[0]);
  if (!program) return null;
  if (report.incomplete) return 'the shell could not list everything that could redirect a program';
  if (report.pathChanged) return 'PATH changed since the shell started';
  if (report.pathRelative) return `PATH has an empty or relative entry, so ${program} may run a file of the current folder`;
  if (report.functions.has(program)) return `${program} is a function in this shell`;
  if (report.builtins.has(program)) return `${program} is a builtin loaded into this shell`;
  const hashed = report.hashed.get(program);
  if (hashed !== undefined) return `${program} is hashed to ${hashed} in this shell`;
  const global = words.map(unquote).find((word) => report.globalAliases.has(word));
  if (global !== undefined) return `${global} is a global alias in this shell`;
  const expansion = report.aliases.get(program);
  if (expansion === undefined) return null;
  const sameProgram = expansion.trim().split(/\s+/)[0] === program;
  // An expansion ending in a blank makes the shell expand the next word as an alias too.
  if (sameProgram && !/\s$/.test(expansion) && allowed([expansion.trim(), ...words.slice(1)].join(' '))) return null;
  return `${program} is an alias of "${expansion}" in this shell`;
}
