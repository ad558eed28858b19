/** File paths found in terminal text (issue 28): what becomes a link, with its line and column. */
import { describe, expect, it } from 'vitest';
import { findPaths, linkHint } from '../../src/renderer/src/terminal/links.js';

const paths = (text: string) => findPaths(text).map(({ path, line, column }) => ({ path, line, column }));

describe('paths in terminal text', () => {
  it.each([
    ['error in src/main/cli.ts:12 here', { path: 'src/main/cli.ts', line: 12, column: undefined }],
    ['see ./README.md.', { path: './README.md', line: undefined, column: undefined }],
    ['/abs/path:3:5', { path: '/abs/path', line: 3, column: 5 }],
    ['  File "/x/y z.py", line 3, in <module>', { path: '/x/y z.py', line: 3, column: undefined }],
    ['src/a.ts(3,5): error TS2345', { path: 'src/a.ts', line: 3, column: 5 }],
    ['README.md: ok', { path: 'README.md', line: undefined, column: undefined }],
    ['~/x/y.txt', { path: '~/x/y.txt', line: undefined, column: undefined }],
    ['../up/z.rs:1', { path: '../up/z.rs', line: 1, column: undefined }],
  ])('%s', (text, expected) => {
    expect(paths(text)).toEqual([expected]);
  });

  it('gives the link its exact place in the line', () => {
    const text = 'at src/main/cli.ts:12:3 (x)';
    const [match] = findPaths(text);
    expect(text.slice(match!.start, match!.end)).toBe('src/main/cli.ts:12:3');
    const python = '  File "app.py", line 9';
    const [frame] = findPaths(python);
    expect(python.slice(frame!.start, frame!.end)).toBe('app.py');
  });

  it('leaves URLs, versions, sentences and abbreviations alone', () => {
    expect(paths('https://example.com/a/b.ts:3 and e.g. 1.2.3 or i.e. this. Done.')).toEqual([]);
    expect(paths('hello world')).toEqual([]);
    expect(paths('/ and . and ..')).toEqual([]);
  });

  it('says on hover that a click needs the modifier', () => {
    expect(linkHint('url', false)).toBe('Ctrl+click to open the link');
    expect(linkHint('path', true)).toBe('⌘+click to open in your editor');
  });
});
