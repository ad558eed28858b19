/**
 * File paths in a terminal's text: `src/main/cli.ts:12`, `./README.md`, `/abs/path:3:5`,
 * Python's `File "…", line 3`. Plain logic over one line of text (tested without a browser);
 * xterm-view.ts turns the matches into links and the host resolves them against the
 * terminal's cwd and checks they exist before anything opens.
 */
import { shortTarget, webUrl } from '../../../shared/web-url';

export interface PathMatch {
  /** Where the link starts and ends in the line (UTF-16 offsets, end exclusive). */
  start: number;
  end: number;
  path: string;
  line?: number;
  column?: number;
}

/** Python's traceback line: `File "/x/y.py", line 3`. */
const pythonFrame = /File "([^"\n]{1,1024})", line (\d{1,7})/g;

/**
 * A path: with a `/` (relative, `./`, `../`, `~/` or absolute), or a bare `name.ext` whose
 * extension starts with a letter; optionally `:line` and `:column` (also `(line,column)` as
 * MSBuild and tsc print). Characters are the ones file names in build output use.
 */
const pathLike = /(?<![\w./~-])((?:~|\.{1,2})?\/?(?:[\w@+.-]+\/)*[\w@+.-]+)(?::(\d{1,7})(?::(\d{1,5}))?|\((\d{1,7}),(\d{1,5})\))?/g;

/** URLs are the web links addon's; a path inside one is not a file link. */
const url = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;

function isPathShaped(path: string, hasLine: boolean): boolean {
  if (path.length > 1024 || /^\.+$/.test(path) || /^\/+$/.test(path)) return false;
  if (path.includes('/')) return /[\w@+-]/.test(path.split('/').at(-1) ?? '') || hasLine;
  // A bare word: a file name with an extension (README.md, cli.ts), not a version or a sentence's end.
  // "e.g", "i.e" are abbreviations, not files.
  return /^[\w@+-][\w@+.-]*\.[A-Za-z][\w]{0,9}$/.test(path) && !/^\d+(\.\d+)+$/.test(path) && !/^[a-z]\.[a-z]$/i.test(path);
}

export function findPaths(text: string): PathMatch[] {
  const found: PathMatch[] = [];
  const taken: Array<[number, number]> = [];
  const overlaps = (start: number, end: number): boolean => taken.some(([a, b]) => start < b && end > a);
  for (const match of text.matchAll(url)) taken.push([match.index, match.index + match[0].length]);
  for (const match of text.matchAll(pythonFrame)) {
    const start = match.index + match[0].indexOf('"') + 1;
    const end = start + match[1]!.length;
    found.push({ start, end, path: match[1]!, line: Number(match[2]) });
    taken.push([match.index, match.index + match[0].length]);
  }
  for (const match of text.matchAll(pathLike)) {
    const path = match[1]!;
    const line = match[2] ?? match[4];
    const column = match[3] ?? match[5];
    // A trailing dot or colon ends the sentence, not the name.
    const trimmed = path.replace(/\.+$/, '');
    if (!isPathShaped(trimmed, line !== undefined)) continue;
    const start = match.index;
    const end = trimmed === path ? start + match[0].length : start + trimmed.length;
    if (overlaps(start, end)) continue;
    found.push({
      start,
      end,
      path: trimmed,
      ...(line !== undefined && trimmed === path ? { line: Number(line) } : {}),
      ...(column !== undefined && trimmed === path ? { column: Number(column) } : {}),
    });
  }
  return found.sort((a, b) => a.start - b.start);
}

/** What the hover says: a plain click selects text, so every link opens with the modifier. */
export function linkHint(kind: 'url' | 'path', mac: boolean): string {
  return kind === 'url' ? `${clickKey(mac)} to open the link` : `${clickKey(mac)} to open in your editor`;
}

function clickKey(mac: boolean): string {
  return mac ? '⌘+click' : 'Ctrl+click';
}

/**
 * The hover of a program's hyperlink (OSC 8): its text is the program's and may name another
 * place, so the hint names where it leads; a target that is not a web link opens nothing.
 */
export function hyperlinkHint(uri: string, mac: boolean): string {
  const href = webUrl(uri);
  if (!href) return `Not a web link, not opened: ${shortTarget(uri)}`;
  return `${clickKey(mac)} to open ${shortTarget(href)}`;
}
