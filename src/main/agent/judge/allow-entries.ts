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
 * every entry, the person's too. `options: known` allows only the options of the built-in
 * list for that program (knownOptions): anything else, an abbreviation included, asks.
 */
import { runsItsArguments } from '../../../shared/runners.js';
export type OperandRule = 'paths' | 'auto' | 'any' | 'none';

export interface AllowEntry {
  source: string;
  program: string;
  subcommand: string[];
  /** `known`: only the options of the built-in list for this program (knownOptions). */
  options: 'any' | 'known' | string[];
  refuse: string[];
  operands: OperandRule;
}

/**
 * Options that write a file, run a program, point at other configuration, another
 * repository or other files to read, or follow symlinks out of a tree, per program (or git
 * subcommand). Matched with GNU and git abbreviation
 * rules: `--outp` is `--output`.
 */
export const builtinRefusals: Readonly<Record<string, readonly string[]>> = {
  // prettier-ignore
  git: [
    '--output', '--output-directory', '-o', '--ext-diff', '--textconv', '--no-index', '--upload-pack', '--receive-pack', '--exec',
    '--git-dir', '--work-tree', '--exec-path', '--config-env', '--namespace', '--super-prefix', '--open-files-in-pager', '-O',
    '--submodule', '--recurse-submodules', '--paginate', '--run', '--extcmd', '--tool', '--orderfile',
    // Verifying a signature runs gpg (which writes its home) on data the repository holds.
    '--show-signature',
  ],
  // -L and -follow follow symlinks out of the directories searched.
  find: ['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls', '-files0-from', '-L', '-follow'],
  sort: ['-o', '--output', '--compress-program', '-T', '--temporary-directory', '--files0-from', '--random-source'],
  wc: ['--files0-from'],
  du: ['--files0-from', '-X', '--exclude-from', '-L', '--dereference'],
  date: ['-s', '--set', '-f', '--file', '-r', '--reference'],
  sed: ['-i', '--in-place', '-f', '--file'],
  // --pre and --hostname-bin run programs, -z runs decompressors; -L follows symlinks out.
  rg: ['--pre', '--pre-glob', '--hostname-bin', '--ignore-file', '--search-zip', '-z', '-f', '--file', '-L', '--follow'],
  grep: ['-f', '--file', '--exclude-from', '-R', '--dereference-recursive'],
  // Patterns from a file: a file read unchecked.
  'git grep': ['-f'],
  // Following (-f, -F, --follow, --retry) keeps reading whatever the name comes to point at later.
  tail: ['--follow=name', '--follow', '-f', '-F', '--retry'],
  // -L follows every symlink it lists (with -R, into whatever they point at, the home or /).
  ls: ['--hyperlink', '-L', '--dereference'],
  // -C compiles (writes) a magic file, -m and -f read other files, -z/-Z may run decompressors, -p sets times back.
  file: ['-C', '--compile', '-m', '--magic-file', '-f', '--files-from', '-z', '-Z', '--uncompress', '--uncompress-noreport', '-p', '--preserve-date'],
  // -v assigns a shell variable: PROMPT_COMMAND or PS1 run code at the next prompt, and bash
  // evaluates an array subscript in the name (`-v 'a[$(cmd)]'` runs cmd at once; round 13).
  printf: ['-v'],
};

/**
 * The options `options: known` allows, per program (and git subcommand). `flags` are short
 * options without a value (bundled as `-rn`); a letter of `valued` takes the rest of its word
 * or the next word as its value; `long` names long options, `--name=` taking a value. For
 * `find`, whose words are not bundled, `long` lists every single-dash word it may use. Every
 * value any of these takes is harmless (a number, a pattern, a glob, a format): options that
 * name a file to read, write a file, run a program or follow symlinks are not listed.
 */
export interface KnownOptions {
  flags: string;
  valued: string;
  long: readonly string[];
  /** Words starting with `-` that are values, not options (find's `-mtime -7`, `-perm -644`). */
  values?: RegExp;
  /** Whether short options can be bundled; false for find. */
  bundles: boolean;
}

// prettier-ignore
const grepLong = [
  '--extended-regexp', '--fixed-strings', '--basic-regexp', '--perl-regexp', '--regexp=', '--ignore-case', '--no-ignore-case', '--word-regexp', '--line-regexp',
  '--null-data', '--no-messages', '--invert-match', '--version', '--help', '--max-count=', '--byte-offset', '--line-number', '--no-line-number', '--line-buffered',
  '--with-filename', '--no-filename', '--label=', '--only-matching', '--quiet', '--silent', '--binary-files=', '--text', '--directories=', '--devices=', '--recursive',
  '--include=', '--exclude=', '--exclude-dir=', '--files-without-match', '--files-with-matches', '--count', '--initial-tab', '--null', '--before-context=',
  '--after-context=', '--context=', '--color', '--colour', '--color=', '--colour=', '--binary',
];

export const knownOptions: Readonly<Record<string, KnownOptions>> = {
  grep: { flags: 'EFGPiywxzsvVbnHhoqaIrlLcTZUc0123456789', valued: 'emABCdD', long: grepLong, bundles: true },
  rg: {
    flags: 'iSsvwxnNlcoFPUHIaqu0p.h',
    valued: 'egtTABCmjMrEd',
    // prettier-ignore
    long: [
      '--regexp=', '--glob=', '--iglob=', '--type=', '--type-not=', '--type-add=', '--type-list', '--files', '--files-with-matches', '--files-without-match', '--count',
      '--count-matches', '--ignore-case', '--smart-case', '--case-sensitive', '--fixed-strings', '--word-regexp', '--line-regexp', '--line-number', '--no-line-number',
      '--heading', '--no-heading', '--with-filename', '--no-filename', '--color=', '--colors=', '--context=', '--after-context=', '--before-context=', '--max-count=',
      '--max-depth=', '--maxdepth=', '--max-columns=', '--max-columns-preview', '--max-filesize=', '--json', '--vimgrep', '--only-matching', '--replace=', '--sort=',
      '--sortr=', '--stats', '--trim', '--multiline', '--multiline-dotall', '--pcre2', '--engine=', '--invert-match', '--no-messages', '--null', '--null-data', '--column',
      '--no-column', '--hidden', '--no-hidden', '--no-ignore', '--no-ignore-vcs', '--no-ignore-dot', '--no-ignore-parent', '--no-ignore-global', '--no-ignore-exclude',
      '--no-ignore-files', '--unrestricted', '--text', '--binary', '--quiet', '--no-config', '--threads=', '--passthru', '--passthrough', '--byte-offset', '--crlf',
      '--encoding=', '--one-file-system', '--pretty', '--version', '--help', '--debug', '--trace', '--word-regexp', '--smart-case', '--context-separator=',
      '--field-match-separator=', '--field-context-separator=', '--path-separator=', '--include-zero', '--no-unicode', '--auto-hybrid-regex', '--mmap', '--no-mmap',
    ],
    bundles: true,
  },
  // -mtime -7, -size -10k, -perm -644, -perm /u+w are values.
  find: {
    flags: '',
    valued: '',
    // prettier-ignore
    long: [
      '-H', '-P', '-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-regextype', '-lname', '-ilname', '-type', '-xtype', '-size',
      '-empty', '-newer', '-anewer', '-cnewer', '-newermt', '-newerct', '-neweram', '-newerat', '-newermm', '-newercm', '-mtime', '-mmin', '-atime', '-amin', '-ctime',
      '-cmin', '-used', '-user', '-group', '-uid', '-gid', '-nouser', '-nogroup', '-perm', '-links', '-inum', '-samefile', '-maxdepth', '-mindepth', '-depth', '-prune',
      '-quit', '-print', '-print0', '-printf', '-ls', '-true', '-false', '-not', '-and', '-or', '-a', '-o', '-readable', '-writable', '-executable', '-mount', '-xdev',
      '-noleaf', '-daystart', '-fstype', '-nowarn', '-warn', '-ignore_readdir_race', '-noignore_readdir_race',
    ],
    values: /^-[0-9]|^-[ugoa]*[=+-]/,
    bundles: false,
  },
  du: {
    flags: 'ahbcDHklmsSxP0',
    valued: 'dtB',
    // prettier-ignore
    long: [
      '--all', '--apparent-size', '--block-size=', '--bytes', '--total', '--dereference-args', '--max-depth=', '--human-readable', '--inodes', '--si', '--summarize',
      '--threshold=', '--time', '--time=', '--time-style=', '--exclude=', '--one-file-system', '--separate-dirs', '--count-links', '--null', '--no-dereference', '--help', '--version',
    ],
    bundles: true,
  },
  df: {
    flags: 'ahHiklPT',
    valued: 'Btx',
    long: [
      '--all',
      '--block-size=',
      '--human-readable',
      '--si',
      '--inodes',
      '--local',
      '--no-sync',
      '--output',
      '--output=',
      '--portability',
      '--total',
      '--type=',
      '--print-type',
      '--exclude-type=',
      '--help',
      '--version',
    ],
    bundles: true,
  },
  stat: {
    flags: 'LFft',
    valued: 'c',
    long: ['--dereference', '--file-system', '--format=', '--printf=', '--terse', '--cached=', '--help', '--version'],
    bundles: true,
  },
  file: {
    flags: 'bcdEhiIkLlnNrsS0v',
    valued: 'eFP',
    // prettier-ignore
    long: [
      '--brief', '--checking-printout', '--exclude=', '--exclude-quiet=', '--extension', '--apple', '--mime', '--mime-type', '--mime-encoding', '--separator=', '--no-dereference',
      '--dereference', '--keep-going', '--list', '--no-buffer', '--no-pad', '--raw', '--special-files', '--no-sandbox', '--print0', '--parameter=', '--help', '--version',
    ],
    bundles: true,
  },
  'git grep': {
    flags: 'aiIwvhHEGFPnlLcpWqrz0123456789',
    valued: 'eABCm',
    // prettier-ignore
    long: [
      '--cached', '--untracked', '--no-exclude-standard', '--exclude-standard', '--recursive', '--no-recursive', '--text', '--ignore-case', '--word-regexp', '--invert-match',
      '--full-name', '--extended-regexp', '--basic-regexp', '--fixed-strings', '--perl-regexp', '--line-number', '--no-line-number', '--column', '--files-with-matches',
      '--name-only', '--files-without-match', '--null', '--count', '--color', '--color=', '--no-color', '--break', '--heading', '--show-function', '--function-context',
      '--max-depth=', '--max-count=', '--threads=', '--and', '--or', '--not', '--all-match', '--quiet', '--context=', '--after-context=', '--before-context=',
      '--no-textconv', '--only-matching', '--help',
    ],
    bundles: true,
  },
};

/**
 * Programs that read whole directory trees: their directory operands, and the shell's cwd
 * (where they start without one), must not hold a protected place. grep only with -r, -d.
 */
export function readsTrees(program: string, subcommand: readonly string[], args: readonly string[]): boolean {
  if (['rg', 'find', 'du'].includes(program) || (program === 'git' && subcommand[0] === 'grep')) return true;
  if (program !== 'grep') return false;
  // Over-counting (a value that contains r) only adds a check.
  return args.some((arg) => /^-[^-]*[rRd]/.test(arg) || /^--(recursive|dereference-recursive|directories)/.test(arg));
}

/** Whether one option word is among the known ones. */
export function knownOption(known: KnownOptions, arg: string): boolean {
  if (known.values?.test(arg)) return true;
  if (arg.startsWith('--') || !known.bundles) {
    const eq = arg.indexOf('=');
    if (eq < 0) return known.long.includes(arg) || known.long.includes(`${arg}=`);
    return known.long.includes(arg.slice(0, eq + 1));
  }
  for (let i = 1; i < arg.length; i++) {
    const char = arg[i]!;
    if (known.valued.includes(char)) return true;
    if (!known.flags.includes(char)) return false;
  }
  return true;
}

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
  // Searching and looking, only with the options of their built-in list (knownOptions).
  'grep | options: known | operands: auto',
  'rg | options: known | operands: auto',
  'find | options: known | operands: auto',
  'git grep | options: known | operands: auto',
  'stat | options: known | operands: paths',
  'file | options: known | operands: paths',
  'du | options: known | operands: paths',
  'df | options: known | operands: paths',
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
    if (match[1] === 'options' && values.length === 1 && values[0] === 'known') {
      const key = words.join(' ');
      if (!knownOptions[key])
        return { ok: false, reason: `options: known has no built-in list for ${key} (there is one for ${Object.keys(knownOptions).join(', ')})` };
      entry.options = 'known';
    } else if (match[1] === 'options') entry.options = values.length === 1 && values[0] === 'any' ? 'any' : values;
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

/**
 * `paths` are always checked as files; `maybePaths` when they contain `/` or name an existing
 * file. `trees`: the program reads whole directories (readsTrees), so the checked operands and
 * the cwd must not hold a protected place.
 */
export type EntryMatch =
  | {
      ok: true;
      paths: string[];
      maybePaths: string[];
      trees: boolean;
      mustExist?: string[];
      /** Every operand and option value, for a program that may write one (readsOperandsOnly false): none may be a tool file. */
      mayWrite?: string[];
    }
  | { ok: false; reason: string }
  | null;

/** The line is the entry's fixed words and nothing more (`npm test` for an entry `npm test`, whatever its clauses allow beyond). */
function exactEntry(extra: number): boolean {
  return extra === 0;
}

/** A `git config` line that only reads: one read action (`get`/`list` forms), and no write action beside it. */
function gitConfigReads(args: readonly string[]): boolean {
  const reads = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '-l'];
  const writes = [
    '--add',
    '--replace-all',
    '--unset',
    '--unset-all',
    '--rename-section',
    '--remove-section',
    '--edit',
    '-e',
    'set',
    'unset',
    'rename-section',
    'remove-section',
    'edit',
  ];
  if (args.some((arg) => writes.includes(arg))) return false;
  // `get` and `list` are actions only as the first word (git 2.46's form); later, `user.name get` sets a value.
  return args[0] === 'get' || args[0] === 'list' || args.some((arg) => arg.startsWith('-') && reads.includes(arg));
}

/**
 * Whether the program only reads its operands: those of the defaults (read-only in effect), and
 * `git config`, which matches only with a read action (`gitConfigReads`). Any other may write one
 * (`uniq IN OUT`).
 */
export function readsOperandsOnly(entry: Pick<AllowEntry, 'program' | 'subcommand'>): boolean {
  const name = [entry.program, ...entry.subcommand].join(' ');
  return name === 'git config' || defaultNames().has(name);
}

let defaultNameSet: ReadonlySet<string> | null = null;
/** The program (and subcommand) each default entry names. */
function defaultNames(): ReadonlySet<string> {
  defaultNameSet ??= new Set(defaultAllowList.map((source) => source.split('|')[0]!.trim().split(/\s+/).join(' ')));
  return defaultNameSet;
}

/**
 * Values joined to an option that may name a file (`--file=PATH`, `-fPATH`, bundled `-lfPATH`):
 * checked as operands are, unless the entry says `operands: any` (black-box round 11:
 * `git config --list --file=<home>/.ssh/id_rsa` and `diff --from-file=...` read files outside
 * the workspace unasked, while the same value as a word of its own asked). Over-counting (a
 * short option's letters taken for a value) only adds a check of a word that is rarely a path.
 */
function attachedValues(arg: string): string[] {
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    return eq < 0 ? [] : [arg.slice(eq + 1)];
  }
  if (arg.length <= 2) return [];
  const at = arg.search(/[/~.]/);
  return at > 2 ? [arg.slice(2), arg.slice(at)] : [arg.slice(2)];
}

/**
 * Matches literal words against one entry: null when the entry does not name this command,
 * a reason when it does but an argument is not allowed, else the operands to check.
 */
export function matchEntry(entry: AllowEntry, words: readonly string[]): EntryMatch {
  const fixed = [entry.program, ...entry.subcommand];
  if (words.length < fixed.length || !fixed.every((word, i) => words[i] === word)) return null;
  const name = fixed.join(' ');
  // git's global options (-C, -c, --git-dir, ...) come before the subcommand: never allowed.
  if (entry.program === 'git' && words[1]?.startsWith('-'))
    return { ok: false, reason: 'git options before the subcommand change which repository or configuration it uses' };
  // A format's %G placeholders verify signatures: git runs gpg for them, as --show-signature does.
  if (entry.program === 'git' && words.some((word) => word.includes('%G')))
    return { ok: false, reason: 'a %G format placeholder makes git run gpg to check signatures' };
  // A program that runs its arguments as a command allows exactly its line or nothing: with any
  // further options or operands the entry would allow every command (black-box round 10).
  // The line's own program and subcommand count too: an entry for `npm` covers `npm exec`.
  const head = [entry.program, `${words[0]} ${words[1] ?? ''}`.trim()].find((name) => runsItsArguments.has(name));
  if (head !== undefined && !exactEntry(words.length - fixed.length))
    return { ok: false, reason: `${head} runs its arguments as a command: only an entry for exactly this line can allow it` };
  // git config writes unless told to read: what it sets (core.fsmonitor, a pager, an alias) the
  // person's own git runs later, in this repository or, with --global, in every one (black-box
  // round 9: an "Always allow git config" from a card let `git config --global` through).
  if (entry.program === 'git' && words[1] === 'config' && !gitConfigReads(words.slice(2)))
    return { ok: false, reason: 'git config without --get, --get-all, --get-regexp or --list writes configuration that your own git would run' };
  const refused = [...(builtinRefusals[entry.program] ?? []), ...(entry.subcommand.length > 0 ? (builtinRefusals[name] ?? []) : []), ...entry.refuse];
  const before: string[] = [];
  const after: string[] = [];
  /** Operands that must name something that exists: not right after an option that may take them as its value (`-n 5`). */
  const named: string[] = [];
  const optionValues: string[] = [];
  let afterDashes = false;
  let mayBeValue = false;
  for (const arg of words.slice(fixed.length)) {
    if (!afterDashes && arg === '--') {
      afterDashes = true;
      mayBeValue = false;
      continue;
    }
    if (afterDashes || !arg.startsWith('-') || arg === '-') {
      (afterDashes ? after : before).push(arg);
      if (!mayBeValue && arg !== '-') named.push(arg);
      mayBeValue = false;
      continue;
    }
    mayBeValue = !arg.includes('=');
    const hit = refused.find((pattern) => refusedBy(pattern, arg));
    if (hit) return { ok: false, reason: `${arg} (${hit}) can write files, run programs or read other configuration` };
    if (entry.options === 'known') {
      const known = knownOptions[name];
      if (!known || !knownOption(known, arg)) return { ok: false, reason: `${arg} is not among the options known to be safe for ${name}` };
    } else if (entry.options !== 'any' && !entry.options.some((pattern) => patternMatches(pattern, arg)))
      return { ok: false, reason: `${arg} is not among the options allowed for ${name}` };
    optionValues.push(...attachedValues(arg));
  }
  const all = [...before, ...after];
  const trees = readsTrees(entry.program, entry.subcommand, words.slice(fixed.length));
  const match = matchOperands(entry, name, all, before, after, optionValues, named, trees);
  return match.ok && !readsOperandsOnly(entry) ? { ...match, mayWrite: [...all, ...optionValues] } : match;
}

function matchOperands(
  entry: AllowEntry,
  name: string,
  all: string[],
  before: string[],
  after: string[],
  optionValues: string[],
  named: string[],
  trees: boolean,
): NonNullable<EntryMatch> {
  switch (entry.operands) {
    case 'none':
      return all.length > 0 ? { ok: false, reason: `${name} is allowed without operands only` } : { ok: true, paths: [], maybePaths: optionValues, trees };
    case 'any':
      // Nothing is checked (the entry says so: `echo --output=/x` reads nothing), so nothing may read a tree unchecked.
      return { ok: true, paths: [], maybePaths: trees ? [...all, ...optionValues] : [], trees };
    case 'paths':
      return { ok: true, paths: all, maybePaths: optionValues, trees, mustExist: named };
    case 'auto':
      // git reads every operand after `--` as a path; before it, revisions or paths.
      return entry.program === 'git'
        ? { ok: true, paths: after, maybePaths: [...before, ...optionValues], trees }
        : { ok: true, paths: [], maybePaths: [...all, ...optionValues], trees };
  }
}
