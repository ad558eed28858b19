import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * Whether a repository's own configuration could make a read-only git command run a program
 * or read outside the workspace. Read from the files directly (never by running git, which
 * would honour that very configuration). Any file it cannot read or parse counts as unsafe.
 */
const maxFiles = 64;
const maxFileBytes = 1 << 20;
const maxIncludeDepth = 10;

/** Keys (section.key, or section.*.key with any subsection), lower-case, that run or redirect. */
const unsafeKeys = [
  'filter.*.clean', 'filter.*.smudge', 'filter.*.process',
  'diff.*.command', 'diff.*.textconv', 'diff.external',
  'core.fsmonitor', 'core.pager', 'core.worktree', 'gpg.program', 'gpg.*.program',
];
/** Whole sections whose every key picks a program. */
const unsafeSections = ['pager'];

/** Where git itself would look for the repository of `cwd`, or null outside one. */
export function findGitDir(cwd: string): string | null {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    try {
      const stat = statSync(dotGit);
      if (stat.isDirectory()) return dotGit;
      const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
      return pointer ? resolve(dir, pointer[1]!) : dotGit;
    } catch {
      // A bare repository is found by its layout, as git does.
      if (existsSync(join(dir, 'HEAD')) && existsSync(join(dir, 'objects')) && existsSync(join(dir, 'refs'))) return dir;
    }
    if (dirname(dir) === dir) return null;
  }
}

interface Scan {
  seen: Set<string>;
  home: string;
}

function unsafeKey(section: string, subsection: string | null, key: string, value: string | null): boolean {
  if (unsafeSections.includes(section)) return true;
  if (section === 'core' && key === 'fsmonitor' && value !== null && /^(false|no|off|0|)$/i.test(value.trim())) return false;
  const name = subsection === null ? `${section}.${key}` : `${section}.*.${key}`;
  return unsafeKeys.includes(name);
}

/** Returns a reason when the file (or one it includes) is unsafe or unreadable, else null. */
function scanFile(path: string, scan: Scan, depth: number): string | null {
  if (scan.seen.has(path)) return null;
  if (scan.seen.size >= maxFiles || depth > maxIncludeDepth) return 'its configuration includes too many files to check';
  scan.seen.add(path);
  let text: string;
  try {
    if (!existsSync(path)) return null;
    if (statSync(path).size > maxFileBytes) return `${path} is too large to check`;
    text = readFileSync(path, 'utf8');
  } catch {
    return `${path} could not be read`;
  }
  let section = '';
  let subsection: string | null = null;
  const lines = text.replace(/\\\r?\n/g, '').split(/\r?\n/);
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (header) {
      const [name, ...rest] = header[1]!.toLowerCase().split('.');
      section = name!;
      subsection = header[2] ?? (rest.length ? rest.join('.') : null);
      const tail = header[3]!.trim();
      if (tail === '' || tail.startsWith('#') || tail.startsWith(';')) continue;
      return `${path} has a line this check cannot read`;
    }
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!entry || section === '') return `${path} has a line this check cannot read`;
    const key = entry[1]!.toLowerCase();
    const value = entry[2] === undefined ? null : entry[2].replace(/^"(.*)"$/, '$1');
    if (unsafeKey(section, subsection, key, value)) return `the repository's configuration sets ${section}${subsection === null ? '' : `.${subsection}`}.${key}`;
    if ((section === 'include' || section === 'includeif') && key === 'path' && value) {
      const target = value.startsWith('~/') ? join(scan.home, value.slice(2)) : isAbsolute(value) ? value : resolve(dirname(path), value);
      const problem = scanFile(target, scan, depth + 1);
      if (problem) return problem;
    }
  }
  return null;
}

/** Why git lines in `cwd` must ask because of the repository's configuration, or null. */
export function gitConfigProblem(cwd: string, home: string): string | null {
  const gitDir = findGitDir(cwd);
  if (!gitDir) return null;
  let common = gitDir;
  try {
    const pointer = join(gitDir, 'commondir');
    if (existsSync(pointer)) common = resolve(gitDir, readFileSync(pointer, 'utf8').trim());
  } catch {
    return 'the repository layout could not be read';
  }
  const scan: Scan = { seen: new Set(), home };
  const files = [join(common, 'config'), join(gitDir, 'config.worktree')];
  // Submodules have their own configuration, which status and diff honour too.
  try {
    const modules = join(common, 'modules');
    if (existsSync(modules)) for (const name of readdirSync(modules).slice(0, maxFiles)) files.push(join(modules, name, 'config'));
  } catch {
    return 'the repository layout could not be read';
  }
  for (const file of files) {
    const problem = scanFile(file, scan, 0);
    if (problem) return problem;
  }
  return null;
}
