import type { Node, Parser } from '@vscode/tree-sitter-wasm';
import { type LiteralWord, literalWords } from './literal-words.js';
import type { Grammars } from './tree-sitter.js';
import type { JudgeGrammar } from '../../shells/dialect.js';

export type ParsedLine = { ok: true; words: string[] } | { ok: false; reason: string };

/** bash grammar: the argument nodes that are literal after quote removal (checked again by the word rule). */
const bashLiteral = new Set(['word', 'number', 'raw_string', 'string', 'string_content', 'concatenation']);

/** PowerShell grammar: nodes of a command argument that are plain text, a quoted string or a number. */
const pwshLiteral = new Set([
  'command_argument_sep',
  'command_parameter',
  'generic_token',
  'array_literal_expression',
  'unary_expression',
  'string_literal',
  'verbatim_string_characters',
  'expandable_string_literal',
  'integer_literal',
  'decimal_integer_literal',
  'expression_with_unary_operator',
]);

function allNamed(node: Node, allowed: Set<string>): boolean {
  return node.namedChildren.every((child) => child !== null && allowed.has(child.type) && allNamed(child, allowed));
}

function parseTree(parser: Parser, line: string): Node | null {
  const tree = parser.parse(line);
  if (!tree) return null;
  return tree.rootNode;
}

/** bash and sh: one `command` whose name and arguments are literal nodes, nothing else. */
function bashWords(parser: Parser, line: string): string[] | string {
  const root = parseTree(parser, line);
  if (!root) return 'the bash grammar produced no tree';
  try {
    if (root.hasError) return 'the bash grammar found a syntax error';
    const [command, ...rest] = root.namedChildren;
    if (!command || rest.length > 0 || command.type !== 'command') return 'it is not one simple command';
    const words: string[] = [];
    for (const child of command.namedChildren) {
      if (!child) return 'it is not one simple command';
      const node = child.type === 'command_name' ? child.namedChildren[0] : child;
      if (!node || (child.type === 'command_name' && child.namedChildren.length > 1) || !bashLiteral.has(node.type) || !allNamed(node, bashLiteral))
        return `it has a ${child.type.replace(/_/g, ' ')}`;
      words.push(node.text);
    }
    return words;
  } finally {
    root.tree.delete();
  }
}

/** pwsh: one pipeline of one command whose elements are literal tokens, strings or numbers. */
function pwshWords(parser: Parser, line: string): string[] | string {
  const root = parseTree(parser, line);
  if (!root) return 'the PowerShell grammar produced no tree';
  try {
    if (root.hasError) return 'the PowerShell grammar found a syntax error';
    const [list, ...rest] = root.namedChildren;
    if (!list || rest.length > 0 || list.type !== 'statement_list' || list.namedChildren.length !== 1) return 'it is not one simple command';
    const pipeline = list.namedChildren[0];
    const chain = pipeline?.type === 'pipeline' && pipeline.namedChildren.length === 1 ? pipeline.namedChildren[0] : null;
    const command = chain?.type === 'pipeline_chain' && chain.namedChildren.length === 1 ? chain.namedChildren[0] : null;
    if (!command || command.type !== 'command') return 'it is not one simple command';
    const name = command.childForFieldName('command_name');
    const elements = command.childForFieldName('command_elements');
    if (!name || name.type !== 'command_name' || name.namedChildren.length > 0) return 'its command name is not a plain word';
    if (command.namedChildren.length !== (elements ? 2 : 1)) return 'it is not one simple command';
    const words = [name.text];
    for (const element of elements?.namedChildren ?? []) {
      if (!element || !pwshLiteral.has(element.type) || !allNamed(element, pwshLiteral)) return `it has a ${element?.type.replace(/_/g, ' ') ?? 'gap'}`;
      if (element.type !== 'command_argument_sep') words.push(element.text);
    }
    return words;
  } finally {
    root.tree.delete();
  }
}

function sameWords(parsed: string[], literal: LiteralWord[]): boolean {
  return parsed.length === literal.length && parsed.every((raw, i) => raw === literal[i]!.raw);
}

/**
 * The words of `line` after quote removal, when it is one simple command of literal words in
 * `shell` (its dialect's judge grammar); otherwise why not. bash and sh are judged on the bash grammar, pwsh on the
 * PowerShell grammar, zsh on the literal-word rule (with the bash grammar's structure as a
 * second check); the word rule must agree with the parser word for word in every shell.
 */
export function parseLine(line: string, shell: JudgeGrammar, grammars: Grammars): ParsedLine {
  const literal = literalWords(line, shell.words);
  if (!literal.ok) return { ok: false, reason: `it has ${literal.reason}` };
  const parsed = shell.grammar === 'pwsh' ? pwshWords(grammars.pwsh, line) : bashWords(grammars.bash, line);
  if (typeof parsed === 'string') return { ok: false, reason: parsed };
  if (!sameWords(parsed, literal.words)) return { ok: false, reason: 'the parser and the literal-word rule read its words differently' };
  return { ok: true, words: literal.words.map((word) => word.value) };
}
