/**
 * Argument-aware allow entries. The person writes each as one string (the wire format of
 * `setAgentPolicy.allow`):
 *
 *   PROGRAM [SUBCOMMAND...] [| options: PATTERN...] [| refuse: PATTERN...] [| operands: paths|auto|any|none]
 *
 * `npm test` is program `npm` with the fixed word `test`; any further literal arguments
 * follow. `options:` lists the options allowed (`any` by default; `--format=*` matches a
 * prefix); `refuse:` adds options that make the line ask. Operands: `paths` are all file
 * paths, `auto` (the default) checks those that contain `/` or name an existing file, `any`
 * checks none, `none` allows none. Built-in refusals for known programs (below) apply to
 * every entry, the person's too.
 */
export type OperandRule = 'paths' | 'auto' | 'any' | 'none';

export interface AllowEntry {
  source: string;
  program: string;
  subcommand: string[];
  options: 'any' | string[];
  refuse: string[];
  operands: OperandRule;
}

/**
 * Options that write a file, run a program, or point at other configuration, another
 * repository or other files to read, per program. Matched with GNU and git abbreviation
 * rules: `--outp` is `--output`.
 */
export const builtinRefusals: Readonly<Record<string, readonly string[]>> = {
  git: [
    '--output', '--output-directory', '-o', '--ext-diff', '--textconv', '--no-index', '--upload-pack', '--receive-pack', '--exec',
    '--git-dir', '--work-tree', '--exec-path', '--config-env', '--namespace', '--super-prefix', '--open-files-in-pager', '-O',
    '--submodule', '--recurse-submodules', '--paginate', '--run', '--extcmd', '--tool', '--orderfile',
  ],
  find: ['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls', '-files0-from'],
  sort: ['-o', '--output', '--compress-program', '-T', '--temporary-directory', '--files0-from', '--random-source'],
  wc: ['--files0-from'],
  du: ['--files0-from'],
  date: ['-s', '--set', '-f', '--file', '-r', '--reference'],
  sed: ['-i', '--in-place', '-f', '--file'],
  rg: ['--pre', '--pre-glob', '--ignore-file', '--search-zip', '-z'],
  grep: ['-f', '--file', '--exclude-from'],
  tail: ['--follow=name', '-F'],
  ls: ['--hyperlink'],
};

const readOnlyGit = '| refuse: --ext-diff --textconv | operands: auto';

/** The defaults: read-only in effect, their arguments checked. Each fits the contract's 200 characters. */
export const defaultAllowList: readonly string[] = [
  'ls | operands: paths',
  'pwd | operands: none',
  'cat | operands: paths',
  'head | operands: paths',
  'tail | operands: paths',
  'wc | operands: paths',
  'echo | operands: any',
  'which | operands: any',
  'whoami | operands: none',
  'date | operands: any',
  'git status | operands: paths',
  `git diff ${readOnlyGit}`,
  `git show ${readOnlyGit}`,
  `git log ${readOnlyGit}`,
  // Listing only: without operands nothing is created, and these change configuration or branches.
  'git branch | refuse: --unset-upstream --edit-description --set-upstream-to -u -d -D -m -M -c -C -f | operands: none',
];

export type ParsedEntry = { ok: true; entry: AllowEntry } | { ok: false; reason: string };

export function parseAllowEntry(source: string): ParsedEntry {
  const [head = '', ...clauses] = source.split('|').map((part) => part.trim());
  const words = head.split(/\s+/).filter(Boolean);
  if (words.length === 0) return { ok: false, reason: 'names no program' };
  const entry: AllowEntry = { source, program: words[0]!, subcommand: words.slice(1), options: 'any', refuse: [], operands: 'auto' };
  for (const clause of clauses) {
    const match = /^(options|refuse|operands):\s*(.*)$/.exec(clause);
    if (!match) return { ok: false, reason: `"${clause}" is not options:, refuse: or operands:` };
    const values = match[2]!.split(/\s+/).filter(Boolean);
    if (match[1] === 'options') entry.options = values.length === 1 && values[0] === 'any' ? 'any' : values;
    else if (match[1] === 'refuse') entry.refuse.push(...values);
    else if (values.length === 1 && ['paths', 'auto', 'any', 'none'].includes(values[0]!)) entry.operands = values[0] as OperandRule;
    else return { ok: false, reason: `operands: takes paths, auto, any or none` };
  }
  return { ok: true, entry };
}

function patternMatches(pattern: string, option: string): boolean {
  return pattern.endsWith('*') ? option.startsWith(pattern.slice(0, -1)) : option === pattern;
}

/** Whether `arg` (an option as typed) is, or abbreviates, or contains the refused option `refused`. */
function refusedBy(refused: string, arg: string): boolean {
  const name = arg.split('=')[0]!;
  if (refused.startsWith('--')) {
    // GNU getopt_long and git both accept any unambiguous prefix of a long option.
    return name.startsWith('--') && name.length > 2 && refused.startsWith(name);
  }
  if (/^-[A-Za-z0-9]$/.test(refused) && /^-[^-]/.test(arg)) return arg.slice(1).includes(refused[1]!);
  // find's single-dash words such as -exec, -delete.
  return name === refused;
}

/** `paths` are always checked as files; `maybePaths` when they contain `/` or name an existing file. */
export type EntryMatch = { ok: true; paths: string[]; maybePaths: string[] } | { ok: false; reason: string } | null;

/**
 * Matches literal words against one entry: null when the entry does not name this command,
 * a reason when it does but an argument is not allowed, else the operands to check.
 */
export function matchEntry(entry: AllowEntry, words: readonly string[]): EntryMatch {
  const fixed = [entry.program, ...entry.subcommand];
  if (words.length < fixed.length || !fixed.every((word, i) => words[i] === word)) return null;
  const name = fixed.join(' ');
  // git's global options (-C, -c, --git-dir, ...) come before the subcommand: never allowed.
  if (entry.program === 'git' && words[1]?.startsWith('-')) return { ok: false, reason: 'git options before the subcommand change which repository or configuration it uses' };
  const refused = [...(builtinRefusals[entry.program] ?? []), ...entry.refuse];
  const before: string[] = [];
  const after: string[] = [];
  let afterDashes = false;
  for (const arg of words.slice(fixed.length)) {
    if (!afterDashes && arg === '--') {
      afterDashes = true;
      continue;
    }
    if (afterDashes || !arg.startsWith('-') || arg === '-') {
      (afterDashes ? after : before).push(arg);
      continue;
    }
    const hit = refused.find((pattern) => refusedBy(pattern, arg));
    if (hit) return { ok: false, reason: `${arg} (${hit}) can write files, run programs or read other configuration` };
    if (entry.options !== 'any' && !entry.options.some((pattern) => patternMatches(pattern, arg))) return { ok: false, reason: `${arg} is not among the options allowed for ${name}` };
  }
  const all = [...before, ...after];
  switch (entry.operands) {
    case 'none':
      return all.length > 0 ? { ok: false, reason: `${name} is allowed without operands only` } : { ok: true, paths: [], maybePaths: [] };
    case 'any':
      return { ok: true, paths: [], maybePaths: [] };
    case 'paths':
      return { ok: true, paths: all, maybePaths: [] };
    case 'auto':
      // git reads every operand after `--` as a path; before it, revisions or paths.
      return entry.program === 'git' ? { ok: true, paths: after, maybePaths: before } : { ok: true, paths: [], maybePaths: all };
  }
}
