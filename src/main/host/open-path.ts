/**
 * Opens a file path the person clicked in a terminal, on the host's machine: in the editor
 * their settings name, or the system's opener. Nothing here goes through a shell: the
 * command is split into words once, placeholders are replaced inside words, and the path is
 * always one argument (absolute, so it never reads as an option).
 */
import { spawn } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { extname, isAbsolute, resolve } from 'node:path';
import { TandemError } from '../../shared/errors.js';

export interface OpenTarget {
  path: string;
  line?: number;
  column?: number;
}

/** Splits an editor command into words at spaces; "double quotes" keep spaces (no escapes, no expansion). */
export function editorWords(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let quoted = false;
  let started = false;
  for (const char of command) {
    if (char === '"') {
      quoted = !quoted;
      started = true;
    } else if (!quoted && /\s/.test(char)) {
      if (started) words.push(word);
      word = '';
      started = false;
    } else {
      word += char;
      started = true;
    }
  }
  if (quoted) throw new TandemError('invalid_argument', 'The editor command has an unterminated double quote.');
  if (started) words.push(word);
  return words;
}

/**
 * The program and arguments for one file. `{path}`, `{line}` and `{column}` are replaced in
 * each word (line and column default to 1); without `{path}` the path is the last argument.
 */
export function editorArgv(command: string, target: Required<OpenTarget>): string[] {
  const words = editorWords(command);
  if (words.length === 0) throw new TandemError('invalid_argument', 'The editor command is empty.');
  const fill = (word: string): string =>
    word.replaceAll('{path}', target.path).replaceAll('{line}', String(target.line)).replaceAll('{column}', String(target.column));
  const argv = words.map(fill);
  if (!words.some((word) => word.includes('{path}'))) argv.push(target.path);
  return argv;
}

/** The system's opener where there is no Electron: xdg-open, macOS's open, Windows' explorer. */
export function systemOpenerArgv(path: string, platform: NodeJS.Platform = process.platform): string[] {
  if (platform === 'darwin') return ['open', path];
  if (platform === 'win32') return ['explorer.exe', path];
  return ['xdg-open', path];
}

/** Starts a program detached (an editor outlives the call); resolves once it started, rejects when it could not. */
export function startDetached(argv: string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: 'ignore', shell: false, windowsHide: true });
    child.once('error', (error) => fail(new TandemError('not_found', `Could not start ${argv[0]}: ${error.message}. Check the editor command in Settings.`)));
    child.once('spawn', () => {
      child.unref();
      done();
    });
  });
}

/**
 * Resolves a clicked path against the terminal's cwd (a leading `~/` against the home), and
 * refuses what is not an existing regular file.
 */
export function resolveClickedPath(path: string, cwd: string | null, home: string): string {
  if (path.includes('\0')) throw new TandemError('invalid_argument', 'The path holds a NUL character.');
  let full: string;
  if (path === '~' || path.startsWith('~/')) full = resolve(home, path.slice(2));
  else if (isAbsolute(path)) full = resolve(path);
  else if (cwd) full = resolve(cwd, path);
  else throw new TandemError('not_found', `${path} is relative, and this terminal's directory is not known.`);
  let isFile = false;
  try {
    isFile = statSync(full).isFile();
  } catch {
    throw new TandemError('not_found', `${full} does not exist.`);
  }
  if (!isFile) throw new TandemError('not_found', `${full} is not a file.`);
  return full;
}

export interface PathOpenerOptions {
  /** The person's editor command (settings), read at each call. */
  editorCommand(): string;
  /** The system's opener for a file; default: systemOpenerArgv started detached. Electron passes shell.openPath. */
  systemOpen?: (path: string) => Promise<void>;
  /** Starts a program; default startDetached (tests may watch it). */
  start?: (argv: string[]) => Promise<void>;
}

/** Opens `target` (already resolved) the way the settings say; returns the argv run, or null for the system opener. */
export async function openResolved(target: Required<OpenTarget>, opts: PathOpenerOptions): Promise<string[] | null> {
  const command = opts.editorCommand().trim();
  const start = opts.start ?? startDetached;
  if (command) {
    const argv = editorArgv(command, target);
    await start(argv);
    return argv;
  }
  const runs = launchable(target.path);
  if (runs)
    throw new TandemError(
      'forbidden',
      `${target.path} ${runs}, so the system's opener could run it rather than show it; set an editor in Settings to open it there.`,
    );
  if (opts.systemOpen) await opts.systemOpen(target.path);
  else await start(systemOpenerArgv(target.path));
  return null;
}

/**
 * Kinds of file a system opener runs rather than shows (macOS `open` and Electron's openPath run
 * an executable or a `.command`, Windows runs scripts through Windows Script Host, desktop
 * entries launch): an agent can write any of them and print its name for a click (black-box
 * round 9).
 */
const launchedExtensions = new Set([
  '.app',
  '.command',
  '.tool',
  '.terminal',
  '.workflow',
  '.action',
  '.scpt',
  '.applescript',
  '.desktop',
  '.appimage',
  '.sh',
  '.bash',
  '.zsh',
  '.csh',
  '.bat',
  '.cmd',
  '.com',
  '.exe',
  '.msi',
  '.msc',
  '.ps1',
  '.psm1',
  '.vbs',
  '.vbe',
  '.js',
  '.jse',
  '.wsf',
  '.wsh',
  '.hta',
  '.lnk',
  '.scr',
  '.pif',
  '.jar',
  '.url',
  '.reg',
  '.cpl',
  '.inf',
  '.py',
  '.pyw',
  '.pl',
  '.rb',
  '.fileloc',
  '.webloc',
  '.inetloc',
  '.pkg',
  '.mpkg',
  '.mobileconfig',
  '.scptd',
  '.dmg',
  '.appref-ms',
  '.settingcontent-ms',
  '.application',
  '.library-ms',
  '.search-ms',
  '.scf',
  '.chm',
  '.msp',
  '.ws',
  '.vb',
  '.diagcab',
  '.xbap',
  '.jnlp',
  '.gadget',
  '.shb',
  '.shs',
  '.xll',
  '.xlam',
  '.docm',
  '.xlsm',
  '.pptm',
]);

/**
 * Why the system's opener could run `path` (its extension or, on POSIX, an execute bit), or null.
 * The name clicked and the file it leads to both count (a link `NOTES.txt` to `tools/app.desktop`:
 * round 10), each without what Windows drops from a name's end (dots, spaces, `::$DATA`).
 */
export function launchable(path: string): string | null {
  let target = path;
  try {
    target = realpathSync(path);
  } catch {
    // Gone since it was resolved: the name alone.
  }
  for (const name of new Set([path, target])) {
    const extension = extname(name.replace(/::\$DATA$/i, '').replace(/[. ]+$/, '')).toLowerCase();
    if (launchedExtensions.has(extension)) return `is${name === path ? '' : ` a link to ${name},`} a ${extension} file`;
  }
  try {
    if (process.platform !== 'win32' && (statSync(path).mode & 0o111) !== 0) return 'is executable';
  } catch {
    // Gone since it was resolved: the opener fails on its own.
  }
  return null;
}
