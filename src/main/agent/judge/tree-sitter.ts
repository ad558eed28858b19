import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Language, Parser } from '@vscode/tree-sitter-wasm';

/**
 * The grammars the judge parses with: tree-sitter's bash and PowerShell grammars, as built
 * into WASM by VS Code's `@vscode/tree-sitter-wasm` (runtime and grammars in one package, no
 * native build, nothing fetched at run time). Loaded once, in 40-70 ms; parsing is then
 * synchronous.
 */
export interface Grammars {
  bash: Parser;
  pwsh: Parser;
}

let loading: Promise<Grammars> | null = null;

export function loadGrammars(): Promise<Grammars> {
  loading ??= (async () => {
    const require = createRequire(import.meta.url);
    const treeSitter = require('@vscode/tree-sitter-wasm') as typeof import('@vscode/tree-sitter-wasm');
    const dir = dirname(require.resolve('@vscode/tree-sitter-wasm'));
    await treeSitter.Parser.init({ locateFile: (file: string) => join(dir, file) });
    const parserFor = (language: Language): Parser => {
      const parser = new treeSitter.Parser();
      parser.setLanguage(language);
      return parser;
    };
    const [bash, pwsh] = await Promise.all([
      treeSitter.Language.load(join(dir, 'tree-sitter-bash.wasm')),
      treeSitter.Language.load(join(dir, 'tree-sitter-powershell.wasm')),
    ]);
    return { bash: parserFor(bash), pwsh: parserFor(pwsh) };
  })();
  if (!watching) {
    watching = true;
    loading.then(
      (grammars) => (settled = { grammars }),
      () => (settled = { grammars: null }),
    );
  }
  return loading;
}

let watching = false;
let settled: { grammars: Grammars | null } | null = null;

/** The grammars once loading has settled (null: they failed, and lines ask); undefined before. No await on the hot path. */
export function grammarsNow(): Grammars | null | undefined {
  return settled ? settled.grammars : undefined;
}
