/**
 * The conservative literal-word rule: a line is accepted only when it is plain words separated
 * by spaces or tabs, each word built from characters that no supported shell expands, plus
 * quoted runs whose content is taken literally. Everything else is not classified (the line
 * asks). It stands alone for zsh (no parser holds up for its syntax) and double-checks the
 * parsers' words for bash, sh and pwsh.
 */
export type WordDialect = 'posix' | 'pwsh';

export interface LiteralWord {
  /** The word as typed (quotes included). */
  raw: string;
  /** The word after quote removal: what the program receives. */
  value: string;
}

export type LiteralResult = { ok: true; words: LiteralWord[] } | { ok: false; reason: string };

/**
 * Unquoted characters that are literal in bash, sh and zsh with any option set: no glob (`*?[]`,
 * zsh's `#^~` under EXTENDED_GLOB), brace, paren, `=` prefix, `!`, `$`, backtick, `@`,
 * backslash, separator, redirection or comment. `~` and `=` are checked for position apart.
 */
const posixPlain = /^[A-Za-z0-9_\-./:,+%~=]$/;
/** pwsh: no `$ @ ( ) { } [ ] , ; | & < > # % ! ` *` ?`; `\` is a path separator there. */
const pwshPlain = /^[A-Za-z0-9_\-./:+~=\\]$/;

function fail(reason: string): LiteralResult {
  return { ok: false, reason };
}

export function literalWords(line: string, dialect: WordDialect): LiteralResult {
  const plain = dialect === 'pwsh' ? pwshPlain : posixPlain;
  const words: LiteralWord[] = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (i >= line.length) break;
    const start = i;
    let value = '';
    while (i < line.length && line[i] !== ' ' && line[i] !== '\t') {
      const char = line[i]!;
      if (char === "'") {
        const end = line.indexOf("'", i + 1);
        if (end < 0) return fail('an unterminated single quote');
        // `'a''b'` means a'b in pwsh and in zsh with RC_QUOTES: not one reading.
        if (line[end + 1] === "'") return fail('adjacent single quotes');
        const body = line.slice(i + 1, end);
        if (/[\x00-\x1f\x7f-\x9f]/.test(body)) return fail('a control character inside quotes');
        if (dialect === 'pwsh' && /[\u2018-\u201b]/.test(body)) return fail('a typographic quote, which pwsh treats as a quote');
        value += body;
        i = end + 1;
      } else if (char === '"') {
        const end = line.indexOf('"', i + 1);
        if (end < 0) return fail('an unterminated double quote');
        const body = line.slice(i + 1, end);
        // Inside double quotes `$`, backtick and `\` still expand, and `!` is history in bash.
        if (/[$`\\!\x00-\x1f\x7f-\x9f]/.test(body) || (dialect === 'pwsh' && /[\u201c-\u201e]/.test(body))) return fail('an expansion inside double quotes');
        value += body;
        i = end + 1;
      } else if (plain.test(char)) {
        if (char === '~' && (i === start || line[i - 1] === '=' || line[i - 1] === ':')) return fail('a tilde that expands to a home directory');
        if (char === '=' && i === start) return fail('a word starting with = (zsh expands it to a program path)');
        value += char;
        i++;
      } else {
        return fail(`"${char}", which the shell may expand or treat as syntax`);
      }
    }
    words.push({ raw: line.slice(start, i), value });
  }
  if (words.length === 0) return fail('an empty line');
  if (words[0]!.value.includes('=')) return fail('an assignment before the command');
  return { ok: true, words };
}
