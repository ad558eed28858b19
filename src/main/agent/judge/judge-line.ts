import { type AllowEntry, matchEntry, parseAllowEntry } from './allow-entries.js';
import { gitCheckKey, gitConfigProblem, type TerminalGit } from './git-config.js';
import { existsSync } from 'node:fs';
import { changeableProblem, looksLikePath, type OperandContext, operandProblem, physicalPath, toolFileProblem, treeProblem } from './operands.js';
import { parseLine } from './parse-line.js';
import { dialectByName } from '../../shells/resolve.js';
import type { Grammars } from './tree-sitter.js';

export interface LineContext {
  /** The terminal's shell dialect (`bash`, `zsh`, `sh`, `pwsh`, `cmd`...), or null when unknown. */
  shell: string | null;
  /** null when the grammars could not be loaded: then nothing is classified and every line asks. */
  grammars: Grammars | null;
  /** Where file operands resolve and must stay; null: every file operand asks. */
  operands: OperandContext | null;
  home: string;
  /**
   * What the git configuration check (git-config.ts) found for a cwd, run beforehand without
   * blocking the event loop (`gitConfigFor`): a problem, or null when there is none. A git line
   * whose cwd has no answer here asks.
   */
  gitConfig?: ReadonlyMap<string, string | null>;
  /**
   * The terminal's environment as its shell started with it (what the git check passes on of it:
   * `GIT_*`, `HOME`, `XDG_CONFIG_HOME`); none: git is asked with the person's home and no `GIT_*`.
   */
  env?: Readonly<Record<string, string>>;
  /** The names an agent set when it opened the terminal: files they name are not the person's. */
  openEnvNames?: readonly string[];
}

export type LineVerdict = { verdict: 'run' } | { verdict: 'ask'; why: string };

function ask(why: string): LineVerdict {
  return { verdict: 'ask', why };
}

function operandsProblem(paths: string[], maybePaths: string[], trees: boolean, context: LineContext, mustExist: readonly string[] = []): string | null {
  const operands = context.operands;
  const checked = [
    ...paths,
    ...(operands ? maybePaths.filter((operand) => looksLikePath(operand, operands.cwd)) : maybePaths.filter((operand) => operand.includes('/'))),
  ];
  // A program that reads trees starts at the cwd when it names no directory (and tells no
  // directory from a pattern here): the cwd is checked too.
  if (trees) checked.push('.');
  if (checked.length === 0) return null;
  if (!operands) return 'its file operands cannot be checked in this terminal';
  for (const operand of checked) {
    const problem = trees ? treeProblem(operand, operands) : operandProblem(operand, operands);
    if (problem) return problem;
  }
  // What is read must be there now and stay what it is (attack 8): file operands must exist
  // (`mustExist`: not an option's value such as `-n 5`); any checked operand that exists must
  // not be a FIFO, device or socket. A `maybe` operand that does not exist is a pattern or a
  // revision, not a file.
  for (const operand of checked) {
    const problem = changeableProblem(operand, operands);
    if (problem && (mustExist.includes(operand) || existsSync(physicalPath(operands.cwd, operand)))) return problem;
  }
  return null;
}

/**
 * Builtins that print the bodies of shell functions and aliases, which the person's startup files
 * define (a deploy function with a token in it): in zsh `which` is `whence -c` (black-box round
 * 11: the default entry for `which` printed such a function); `type`, `declare -f`, a bare `set`
 * likewise. They ask whatever the allow list says.
 */
const printsShellCode: Readonly<Record<string, ReadonlySet<string>>> = {
  zsh: new Set(['which', 'where', 'whence', 'type', 'functions', 'declare', 'typeset', 'alias', 'set']),
  bash: new Set(['type', 'declare', 'typeset', 'alias', 'set', 'compgen', 'complete']),
};

/** An operand of a program that may write it, in a git directory or a file the person's tools run (operands.ts `toolFileProblem`). */
function toolFilesProblem(mayWrite: readonly string[] | undefined, context: LineContext): string | null {
  if (!mayWrite || mayWrite.length === 0) return null;
  if (!context.operands) return 'its file operands cannot be checked in this terminal';
  for (const operand of mayWrite) {
    const problem = toolFileProblem(operand, context.operands);
    if (problem) return problem;
  }
  return null;
}

/**
 * Whether a line may run without asking under `ask-unless-allowed`: one simple command of
 * literal words in the terminal's own shell, matching an allow entry with its options and
 * operands, file operands inside the workspace and outside protected places, and for git a
 * repository whose configuration runs nothing. Anything not proven so asks, with the reason.
 */
export function judgeAllowed(line: string, allow: readonly string[], context: LineContext): LineVerdict {
  return judgeWith(line, allow, context, (cwd, subcommand) => context.gitConfig?.get(gitCheckKey(cwd, subcommand)));
}

/**
 * The cwds whose git configuration judging `line` needs: those the judge would look up, found by
 * the same parse and the same entries, so git runs only for a line that could run it.
 */
export function gitChecksWanted(line: string, allow: readonly string[], context: LineContext): string[] {
  return gitChecksNeeded(line, allow, context).map((check) => check.cwd);
}

function gitChecksNeeded(line: string, allow: readonly string[], context: LineContext): Array<{ cwd: string; subcommand: string | undefined }> {
  const wanted: Array<{ cwd: string; subcommand: string | undefined }> = [];
  judgeWith(line, allow, context, (cwd, subcommand) => {
    wanted.push({ cwd, subcommand });
    return null;
  });
  return wanted;
}

/**
 * The git configuration answers judging `line` needs, found asynchronously (git runs as a child
 * process the event loop does not wait on), added to the context's own: pass the result as
 * `gitConfig` to the synchronous judge.
 */
export async function gitConfigFor(
  line: string,
  allow: readonly string[],
  context: LineContext,
  check: (cwd: string, home: string, terminal: TerminalGit) => Promise<string | null> = (cwd, home, terminal) =>
    gitConfigProblem(cwd, home, undefined, terminal),
): Promise<Map<string, string | null>> {
  const answers = new Map(context.gitConfig ?? []);
  for (const { cwd, subcommand } of gitChecksNeeded(line, allow, context)) {
    const key = gitCheckKey(cwd, subcommand);
    if (answers.has(key)) continue;
    const terminal: TerminalGit = {
      env: context.env ?? {},
      agentSet: context.openEnvNames ?? [],
      workspace: context.operands?.workspace,
      everyHook: key !== cwd,
    };
    answers.set(
      key,
      await check(cwd, context.home, terminal).catch((error: unknown) => `the configuration git would use could not be checked (${String(error)})`),
    );
  }
  return answers;
}

function judgeWith(
  line: string,
  allow: readonly string[],
  context: LineContext,
  gitProblem: (cwd: string, subcommand: string | undefined) => string | null | undefined,
): LineVerdict {
  // The shell's dialect says how its lines read (shells/dialect.ts, `judge`); a shell without one always asks.
  const grammar = dialectByName(context.shell)?.judge;
  if (!grammar) return ask(`lines in ${context.shell ?? 'this shell'} always ask`);
  if (!context.grammars) return ask('the shell grammars could not be loaded');
  // Trailing newlines are dropped before typing (the send submits once): judge the line as typed.
  const parsed = parseLine(line.replace(/[\r\n]+$/, ''), grammar, context.grammars);
  if (!parsed.ok) return ask(parsed.reason);
  const shellCode = printsShellCode[context.shell ?? '']?.has(parsed.words[0] ?? '');
  if (shellCode)
    return ask(
      `in ${context.shell}, ${parsed.words[0]} is a builtin that prints the code of shell functions and aliases, where startup files may keep secrets`,
    );
  const entries = allow.map(parseAllowEntry).flatMap((result): AllowEntry[] => (result.ok ? [result.entry] : []));
  let why = `${parsed.words[0]} is not on the allow list`;
  for (const entry of entries) {
    const match = matchEntry(entry, parsed.words);
    if (match === null) continue;
    if (!match.ok) {
      why = match.reason;
      continue;
    }
    const problem = operandsProblem(match.paths, match.maybePaths, match.trees, context, match.mustExist) ?? toolFilesProblem(match.mayWrite, context);
    if (problem) {
      why = problem;
      continue;
    }
    if (entry.program === 'git') {
      if (!context.operands) return ask('the repository of this terminal is not known');
      // git's options before the subcommand never match an entry: the second word is the subcommand.
      const config = gitProblem(context.operands.cwd, parsed.words[1]);
      if (config === undefined) return ask('the configuration git would use here was not checked');
      if (config) return ask(config);
    }
    return { verdict: 'run' };
  }
  return ask(why);
}
