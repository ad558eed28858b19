/** Opening a clicked path: the editor command's words, the system opener, and what is refused. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { electronSystemOpen } from '../../src/main/electron/system-open.js';
import { editorArgv, editorWords, openResolved, resolveClickedPath, systemOpenerArgv } from '../../src/main/host/open-path.js';

const root = mkdtempSync(join(tmpdir(), 'tandem-open-path-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the editor command', () => {
  it('splits at spaces, keeps "quoted" spaces, and expands nothing', () => {
    expect(editorWords('code -g {path}:{line}')).toEqual(['code', '-g', '{path}:{line}']);
    expect(editorWords('"/opt/My Editor/bin/ed" --line={line} {path}')).toEqual(['/opt/My Editor/bin/ed', '--line={line}', '{path}']);
    expect(editorWords('ed $HOME `x` ; rm')).toEqual(['ed', '$HOME', '`x`', ';', 'rm']);
    expect(editorWords('  ')).toEqual([]);
    expect(() => editorWords('"ed')).toThrow(/unterminated/);
  });

  it('puts the path in one word, or last when the command does not place it', () => {
    const target = { path: '/w/a b; touch x', line: 12, column: 3 };
    expect(editorArgv('code -g {path}:{line}:{column}', target)).toEqual(['code', '-g', '/w/a b; touch x:12:3']);
    expect(editorArgv('subl', target)).toEqual(['subl', '/w/a b; touch x']);
    expect(() => editorArgv('', target)).toThrow(/empty/);
  });

  it('uses the system opener without one', async () => {
    expect(systemOpenerArgv('/w/x', 'linux')).toEqual(['xdg-open', '/w/x']);
    expect(systemOpenerArgv('/w/x', 'darwin')).toEqual(['open', '/w/x']);
    expect(systemOpenerArgv('C:\\w\\x', 'win32')).toEqual(['explorer.exe', 'C:\\w\\x']);
    const started: string[][] = [];
    const opened: string[] = [];
    const target = { path: '/w/x', line: 1, column: 1 };
    expect(await openResolved(target, { editorCommand: () => '', start: async (argv) => void started.push(argv) })).toBeNull();
    expect(started).toEqual([['xdg-open', '/w/x']]);
    await openResolved(target, {
      editorCommand: () => ' ',
      systemOpen: async (path) => void opened.push(path),
      start: async (argv) => void started.push(argv),
    });
    expect(opened).toEqual(['/w/x']);
    expect(await openResolved(target, { editorCommand: () => 'vi +{line}', start: async (argv) => void started.push(argv) })).toEqual(['vi', '+1', '/w/x']);
  });
});

describe('resolving a clicked path', () => {
  const cwd = join(root, 'project');
  mkdirSync(join(cwd, 'src'), { recursive: true });
  writeFileSync(join(cwd, 'src', 'cli.ts'), 'x');
  writeFileSync(join(root, 'home-file'), 'x');

  it('resolves against the cwd, the home for ~/, and keeps absolute paths', () => {
    expect(resolveClickedPath('src/cli.ts', cwd, root)).toBe(join(cwd, 'src', 'cli.ts'));
    expect(resolveClickedPath('./src/../src/cli.ts', cwd, root)).toBe(join(cwd, 'src', 'cli.ts'));
    expect(resolveClickedPath('~/home-file', cwd, root)).toBe(join(root, 'home-file'));
    expect(resolveClickedPath(join(cwd, 'src', 'cli.ts'), null, root)).toBe(join(cwd, 'src', 'cli.ts'));
  });

  it('refuses a missing path, a directory, a relative path without a cwd, and NUL', () => {
    expect(() => resolveClickedPath('missing.ts', cwd, root)).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => resolveClickedPath('src', cwd, root)).toThrow(/not a file/);
    expect(() => resolveClickedPath('src/cli.ts', null, root)).toThrow(/not known/);
    expect(() => resolveClickedPath('src/cli.ts\0x', cwd, root)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});

describe("the desktop app's opener (Electron's shell.openPath, faked: it resolves with an error text)", () => {
  it('succeeds on an empty answer and fails with the text otherwise', async () => {
    await expect(electronSystemOpen(async () => '')('/w/x')).resolves.toBeUndefined();
    await expect(electronSystemOpen(async () => 'Failed to open path')('/w/x')).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('Failed to open path'),
    });
  });
});
