import type { Node } from '@vscode/tree-sitter-wasm';
import { envNeedingApproval, isHarmlessEnv } from './env-names.js';
import { quoted } from './git-config.js';
import { dialectByName } from '../../shells/resolve.js';
import type { Grammars } from './tree-sitter.js';

/**
 * What the judge cannot see of a terminal: the state its shell carries from line to line. The
 * allow list judges one line's words; the shell runs them under its aliases, functions,
 * variables, options, key bindings and loaded modules. So:
 *
 * - a terminal an agent opened with any variable that env-names.ts does not call harmless
 *   (PATH, LD_PRELOAD, GIT_*, BASH_ENV...) never runs a line unasked: the person approved the
 *   variables, not every later command under them;
 * - once a line that changes the shell's state (an assignment, export/declare/typeset/readonly/
 *   unset, alias, a function, source or `.`, eval, set/shopt/enable/hash/builtin/trap/bind...,
 *   pwsh's `$env:` and other assignments, Set-Alias, Import-Module, dot-sourcing...) or a line
 *   that cannot be read is submitted, by any route (the person's approval, an edit, the
 *   `always` policy), that terminal's later allow-listed lines ask. `cd`, `pushd` and `popd`
 *   keep it: the judge follows the shell's cwd.
 *
 * The rule is an allow list of its own: a line keeps the state only when every part of it is a
 * construct known to leave it alone; anything else counts as a change.
 */

/** Builtins of bash and zsh that keep the shell's state (cd and friends: the judge follows the cwd). */
// prettier-ignore
const keepingBuiltins = new Set([
  'cd', 'pushd', 'popd', 'dirs', 'pwd', 'echo', 'test', '[', 'true', 'false', ':', 'type', 'which', 'where', 'whence',
  'help', 'jobs', 'kill', 'wait', 'times', 'exit', 'logout', 'fg', 'bg', 'disown', 'suspend', 'chdir',
]);

/**
 * Builtins and reserved words of bash and zsh that change the shell's state or run text as code
 * in it (any builtin name not in `keepingBuiltins` counts as a change; this list is what a
 * prefix assignment or an unknown name is compared against).
 */
// prettier-ignore
const changingBuiltins = new Set([
  'alias', 'unalias', 'bind', 'builtin', 'command', 'declare', 'typeset', 'local', 'export', 'readonly', 'unset', 'enable',
  'eval', 'exec', 'source', '.', 'set', 'shopt', 'hash', 'trap', 'read', 'mapfile', 'readarray', 'let', 'getopts', 'shift',
  'complete', 'compopt', 'compgen', 'fc', 'history', 'ulimit', 'umask', 'coproc', 'printf', 'caller', 'return', 'break', 'continue',
  'autoload', 'bindkey', 'setopt', 'unsetopt', 'emulate', 'disable', 'functions', 'zmodload', 'zle', 'zstyle', 'noglob',
  'nocorrect', 'integer', 'float', 'vared', 'r', 'print', 'pushln', 'getln', 'sched', 'limit', 'unlimit', 'rehash', 'unhash',
  'zparseopts', 'zformat', 'ttyctl', 'zcompile', 'compdef', 'compctl', 'private', 'add-zsh-hook', 'zregexparse', 'zsystem',
  'zselect', 'zsocket', 'ztcp', 'zpty', 'zprof', 'strftime', 'zstat', 'log', 'echotc', 'echoti', 'comparguments', 'compset',
]);

/** bash-grammar nodes that are plain structure, words and quoting: they change nothing by themselves. */
// prettier-ignore
const plainBashNodes = new Set([
  'program', 'list', 'pipeline', 'redirected_statement', 'file_redirect', 'heredoc_redirect', 'heredoc_body', 'heredoc_start',
  'heredoc_content', 'heredoc_end', 'herestring_redirect', 'file_descriptor', 'negated_command', 'compound_statement',
  'if_statement', 'elif_clause', 'else_clause', 'while_statement', 'do_group', 'case_statement', 'case_item', 'test_command',
  'unary_expression', 'binary_expression', 'test_operator', 'parenthesized_expression', 'word', 'string', 'string_content',
  'raw_string', 'ansi_c_string', 'translated_string', 'number', 'concatenation', 'simple_expansion', 'variable_name',
  'special_variable_name', 'comment', 'brace_expression',
]);

/** Child processes: what runs inside cannot change the shell's own state. */
const childProcessNodes = new Set(['subshell', 'command_substitution', 'process_substitution']);

/** A `${name}` or `${#name}`: read only (`${x:=y}`, zsh's `${(e)x}` and the like are not). */
const plainExpansion = /^\$\{#?[A-Za-z_][A-Za-z0-9_]*\}$/;

function assignmentHarmless(node: Node): boolean {
  const name = node.childForFieldName('name')?.text ?? node.namedChildren[0]?.text ?? '';
  const value = node.childForFieldName('value');
  const text = value?.text ?? '';
  return value?.type !== 'array' && /^[A-Za-z0-9_.@,+-]*$/.test(text) && isHarmlessEnv(name, text);
}

/**
 * Functions a shell runs by itself (at a prompt, before a command, on a signal, for an unknown
 * command): defining one runs code with no line naming it.
 */
const hookFunction = /^(command_not_found_handler?|precmd|preexec|chpwd|periodic|zshaddhistory|zshexit|zsh_directory_name|TRAP[A-Z0-9]+|_?_?tandem.*)$/;

/**
 * A function the redirect report shows by name (judge/redirect-check.ts asks for a line that
 * runs it): a plain name, not a hook or a builtin, and not one starting with `_`, which the
 * reports leave out (completion functions; and prompt hooks such as `__git_ps1`,
 * `__vte_prompt_command` or `_direnv_hook` run with no line naming them).
 */
function reportedFunction(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name) && !hookFunction.test(name) && !keepingBuiltins.has(name) && !changingBuiltins.has(name);
}

/**
 * What the shell's redirect report shows after each command (shells/redirect-report.ts): an
 * alias, a function by name, a bash hash entry, a loaded builtin, a changed PATH. Lines that
 * change only that leave the terminal judged line by line: `redirectedBy` asks for a line the
 * change concerns, and the line runs unasked again once the change is undone. `sh` reports
 * nothing.
 */

interface Reading {
  /** The shell reports aliases, functions, PATH... (its dialect's `judge.reportsRedirects`). */
  reports: boolean;
  /** The report covers the hash table and loaded builtins (`judge.reportsHash`). */
  reportsHash: boolean;
}

function pathAssignment(node: Node, reading: Reading): boolean {
  const name = node.childForFieldName('name')?.text ?? node.namedChildren[0]?.text ?? '';
  const value = node.childForFieldName('value');
  return reading.reports && name === 'PATH' && value?.type !== 'array' && (value === null || bashChange(value, reading) === null);
}

function bashChange(node: Node, reading: Reading): string | null {
  const type = node.type;
  if (childProcessNodes.has(type)) return null;
  if (type === 'function_definition') {
    const name = node.childForFieldName('name')?.text ?? node.namedChildren[0]?.text ?? '';
    return reading.reports && reportedFunction(name) ? null : `defines the function ${quoted(name, 64)}`;
  }
  if (type === 'unset_command') {
    // unset -f removes functions, which the report shows; any other unset changes variables.
    return reading.reports &&
      /^unset\s+-f\s/.test(node.text) &&
      node.namedChildren.every((child) => child !== null && /^(word|variable_name)$/.test(child.type))
      ? null
      : 'unsets a variable';
  }
  if (type === 'variable_assignment') return assignmentHarmless(node) || pathAssignment(node, reading) ? null : 'sets a shell variable';
  if (type === 'declaration_command') {
    const harmless =
      node.namedChildren.every(
        (child) => child !== null && child.type === 'variable_assignment' && (assignmentHarmless(child) || pathAssignment(child, reading)),
      ) && /^export\s/.test(node.text);
    return harmless ? null : `runs ${quoted(node.text.split(/\s/, 1)[0] ?? '')}`;
  }
  if (type === 'for_statement' || type === 'c_style_for_statement' || type === 'select_statement') return 'sets a loop variable';
  if (type === 'expansion') return plainExpansion.test(node.text) ? null : 'has an expansion that can assign or evaluate';
  if (type === 'command') {
    const name = node.childForFieldName('name') ?? node.namedChildren.find((child) => child?.type === 'command_name') ?? null;
    const word = name?.namedChildren[0];
    if (!name || name.namedChildren.length !== 1 || word?.type !== 'word' || !/^[A-Za-z0-9_./:+@%,[-]+$/.test(word.text))
      return 'runs a command whose name is not a plain word';
    const program = word.text;
    const args = node.namedChildren.filter((child): child is Node => child !== null && child.type !== 'command_name' && child.type !== 'variable_assignment');
    const prefixed = node.namedChildren.some((child) => child?.type === 'variable_assignment');
    if (reading.reports && !prefixed && reportedCommand(program, args, reading.reportsHash)) return null;
    // printf only prints, unless -v assigns its output to a variable.
    const assigningPrintf =
      program === 'printf' && node.namedChildren.some((child) => child !== null && child.type !== 'command_name' && /^-[A-Za-z]*v/.test(child.text));
    if (assigningPrintf || (program !== 'printf' && changingBuiltins.has(program))) return `runs ${quoted(program)}`;
    if (prefixed && (keepingBuiltins.has(program) || program === 'printf')) return `assigns before the builtin ${quoted(program)}`;
    for (const child of node.namedChildren) {
      if (!child || child.type === 'command_name' || child.type === 'variable_assignment') continue;
      const inner = bashChange(child, reading);
      if (inner) return inner;
    }
    return null;
  }
  if (!plainBashNodes.has(type)) return `has ${type.replace(/_/g, ' ')}`;
  for (const child of node.namedChildren) {
    if (!child) continue;
    const inner = bashChange(child, reading);
    if (inner) return inner;
  }
  return null;
}

/**
 * A builtin whose whole effect the report shows: `alias name=value` without options for a name
 * a line would run (not a hook's or the integration's: bash expands aliases in its prompt
 * commands too), `unalias`, and bash's `hash` (its table is reported; zsh's is not), each with
 * plain literal words only. Not `enable`: `enable -f` can replace a builtin of the same name,
 * which leaves the list of names as it was, and `enable -n` hides one (black-box rounds).
 */
function reportedCommand(program: string, args: readonly Node[], reportsHash: boolean): boolean {
  const plain = args.every((arg) => /^(word|raw_string|string|concatenation)$/.test(arg.type) && !/[`$]/.test(arg.text));
  if (!plain) return false;
  if (program === 'alias') {
    return (
      args.length > 0 &&
      args.every((arg) => !arg.text.startsWith('-') && arg.text.includes('=') && reportedFunction(arg.text.replace(/^['"]/, '').split('=')[0]!))
    );
  }
  if (program === 'unalias') return true;
  return reportsHash && program === 'hash';
}

/** pwsh cmdlets and aliases that change the session's state or run text as code in it (lower-case). */
// prettier-ignore
const pwshChanging = new Set([
  'set-alias', 'sal', 'new-alias', 'nal', 'import-alias', 'ipal', 'set-variable', 'sv', 'set', 'new-variable', 'nv',
  'remove-variable', 'rv', 'clear-variable', 'clv', 'import-module', 'ipmo', 'remove-module', 'rmo', 'new-module', 'nmo',
  'add-type', 'invoke-expression', 'iex', 'invoke-command', 'icm', 'set-psreadlineoption', 'set-psreadlinekeyhandler',
  'remove-psreadlinekeyhandler', 'set-strictmode', 'set-psdebug', 'update-typedata', 'update-formatdata', 'set-executionpolicy',
  'enter-pssession', 'etsn', 'import-pssession', 'register-engineevent', 'register-objectevent', 'register-argumentcompleter',
  'set-psbreakpoint', 'sbp', 'foreach-object', '%', 'where-object', '?', 'set-item', 'si', 'new-item', 'ni', 'set-content', 'sc',
  'add-content', 'ac', 'clear-item', 'cli', 'remove-item', 'ri', 'rename-item', 'rni', 'move-item', 'mi', 'copy-item', 'cpi',
]);

/** pwsh nodes that are plain structure and literal arguments. */
// prettier-ignore
const plainPwshNodes = new Set([
  'program', 'statement_list', 'pipeline', 'pipeline_chain', 'command_elements', 'command_argument_sep', 'command_parameter',
  'generic_token', 'array_literal_expression', 'unary_expression', 'string_literal', 'verbatim_string_characters',
  'integer_literal', 'decimal_integer_literal', 'comment', 'redirection', 'file_redirection_operator', 'redirected_file_name',
  'expression_with_unary_operator',
]);

/** Cmdlets that set an alias: the redirect report shows every alias that differs from the session's start. */
const pwshAliasing = new Set(['set-alias', 'sal', 'new-alias', 'nal']);

function literalElements(command: Node): boolean {
  const elements = command.childForFieldName('command_elements');
  return (elements?.namedChildren ?? []).every(
    (element) => element !== null && /^(command_argument_sep|generic_token|command_parameter)$/.test(element.type) && !/[$({]/.test(element.text),
  );
}

/** A provider path (`env:`, `function:`, `alias:`, `variable:`...): items there are the session's state. */
const providerPath = /(^|[\s'"=:\\/])[A-Za-z][A-Za-z0-9]+:/;

function pwshChange(node: Node): string | null {
  const type = node.type;
  if (type === 'function_statement') return 'defines a function';
  if (type === 'assignment_expression') return 'assigns a variable';
  if (type === 'command') {
    const name = node.childForFieldName('command_name');
    if (
      !name ||
      name.type !== 'command_name' ||
      name.namedChildren.length > 0 ||
      node.namedChildren.some((child) => child?.type === 'command_invokation_operator')
    ) {
      return 'runs a command by an operator or an expression (dot-sourcing, &, a variable)';
    }
    const program = name.text.toLowerCase();
    if (/[\\/]|\.ps[dm]?1$/.test(program)) return `runs the script ${quoted(name.text)}`;
    if (pwshChanging.has(program) && !(pwshAliasing.has(program) && literalElements(node))) return `runs ${quoted(name.text)}`;
    for (const child of node.namedChildren) {
      if (!child || child.type === 'command_name') continue;
      if (providerPath.test(child.text)) return `names a provider path (${quoted(child.text)})`;
      const inner = pwshChange(child);
      if (inner) return inner;
    }
    return null;
  }
  if (type === 'expandable_string_literal') return node.namedChildren.length === 0 && !node.text.includes('$') ? null : 'has an expansion in a string';
  if (!plainPwshNodes.has(type)) return `has ${type.replace(/_/g, ' ')}`;
  for (const child of node.namedChildren) {
    if (!child) continue;
    const inner = pwshChange(child);
    if (inner) return inner;
  }
  return null;
}

/**
 * What submitting `line` in a `shell` changes of the shell's state, as the end of a sentence
 * ("defines a function", "runs \"alias\""), or null when it is known to change nothing. A line
 * that cannot be read counts as a change.
 */
export function stateChangeOf(line: string, shell: string | null, grammars: Grammars | null): string | null {
  const text = line.replace(/[\r\n]+$/, '');
  if (text.trim() === '') return null;
  if (!grammars) return 'could not be read (the shell grammars did not load)';
  const judge = dialectByName(shell)?.judge;
  if (!judge) return `could not be read (lines in ${shell ?? 'this shell'} are not parsed)`;
  const tree = grammars[judge.grammar].parse(text);
  if (!tree) return 'could not be read as a shell line';
  try {
    if (tree.rootNode.hasError) return 'could not be read as a shell line';
    return judge.grammar === 'pwsh'
      ? pwshChange(tree.rootNode)
      : bashChange(tree.rootNode, { reports: judge.reportsRedirects, reportsHash: judge.reportsHash });
  } finally {
    tree.delete();
  }
}

interface HeldState {
  /** Why the shell's state is no longer what the judge assumes (the first line that changed it), or null. */
  changed: string | null;
}

const states = new WeakMap<object, HeldState>();

function stateOf(terminal: object): HeldState {
  let state = states.get(terminal);
  if (!state) {
    state = { changed: null };
    states.set(terminal, state);
  }
  return state;
}

const unreadable = /^could not be read/;

/**
 * Records a line submitted to `terminal`'s shell (`null`: what it submitted is not known).
 * `toProgram`: the line went to a program that holds the terminal (a REPL, an editor, a nested
 * shell): it counts only when it reads as a shell line that changes the state.
 */
export function lineSubmitted(terminal: object, line: string | null, shell: string | null, grammars: Grammars | null, toProgram = false): void {
  const state = stateOf(terminal);
  if (state.changed) return;
  if (line === null) {
    if (!toProgram) state.changed = 'an earlier line in this terminal was submitted as named keys left it, which Tandem cannot read';
    return;
  }
  const change = stateChangeOf(line, shell, grammars);
  if (change && !(toProgram && unreadable.test(change)))
    state.changed = `an earlier line in this terminal (${quoted(line.replace(/[\r\n]+$/, ''), 80)}) ${change}, and the judge cannot see what that changed`;
}

/**
 * Why an allow-listed line in `terminal` must ask after all, or null: the variables an agent
 * opened it with (`openEnv`), or an earlier line that changed the shell's state.
 */
export function heldStateProblem(terminal: object, openEnv: Readonly<Record<string, string>>): string | null {
  const names = envNeedingApproval({ ...openEnv });
  if (names.length > 0) {
    const shown = names
      .slice(0, 8)
      .map((name) => quoted(name, 64))
      .join(', ');
    return `this terminal was opened with ${shown}${names.length > 8 ? ` and ${names.length - 8} more` : ''} set, which can make any program run other code; the person approved the variables, not each later command under them`;
  }
  return stateOf(terminal).changed;
}
