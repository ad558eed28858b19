import { describe, expect, it } from 'vitest';
import { MarkerScanner, parseMarkerBody, type ScanPart } from '../../src/main/terminal/readiness/markers.js';

const secret = 'abc123';
const m = (body: string, s = secret) => `\x1b]7771;${s};${body}\x07`;

function scanAll(chunks: string[]): ScanPart[] {
  const scanner = new MarkerScanner(secret);
  const parts = chunks.flatMap((chunk) => scanner.scan(chunk));
  const rest = scanner.flush();
  return rest ? [...parts, { text: rest }] : parts;
}

function textOf(parts: ScanPart[]): string {
  return parts.map((part) => ('text' in part ? part.text : '')).join('');
}

describe('MarkerScanner', () => {
  it('passes plain output through untouched', () => {
    expect(scanAll(['hello\r\n'])).toEqual([{ text: 'hello\r\n' }]);
  });

  it('extracts start, end and continuation markers in order', () => {
    const parts = scanAll([`a${m('S;4;ls%20-l')}b${m('E;4;2;ls;/tmp%3Bx')}c${m('C')}`]);
    expect(parts).toEqual([
      { text: 'a' },
      { marker: { kind: 'start', seq: 4, command: 'ls -l' } },
      { text: 'b' },
      { marker: { kind: 'end', seq: 4, exitCode: 2, cwd: '/tmp;x', command: 'ls' } },
      { text: 'c' },
      { marker: { kind: 'continuation' } },
    ]);
  });

  it('finds markers split at every position across chunks', () => {
    const stream = `out${m('E;7;0;;/home/a b')}after`;
    for (let i = 1; i < stream.length; i++) {
      const parts = scanAll([stream.slice(0, i), stream.slice(i)]);
      expect(textOf(parts)).toBe('outafter');
      expect(parts.filter((part) => 'marker' in part)).toEqual([{ marker: { kind: 'end', seq: 7, exitCode: 0, cwd: '/home/a b', command: null } }]);
    }
  });

  it('finds markers among colour codes and at a chunk start; the prefix without its ESC is text', () => {
    const colour = '\x1b[32mgreen\x1b[0m';
    const bare = `]7771;${secret};E;1;0;;/\x07`;
    const parts = scanAll([`${m('C')}${colour}${bare}\x1b${m('S;2;ls')}`, `${m('E;2;0;;/')}${colour}`]);
    expect(parts.filter((part) => 'marker' in part).map((part) => ('marker' in part ? part.marker.kind : ''))).toEqual(['continuation', 'start', 'end']);
    // The lone ESC before the start marker aborts nothing of it and stays output, as a terminal shows it.
    expect(textOf(parts)).toBe(`${colour}${bare}\x1b${colour}`);
  });

  it('leaves markers with a wrong secret in the output and settles nothing', () => {
    const fake = m('E;1;0;;/', 'guess');
    const parts = scanAll([`x${fake}y`]);
    expect(parts.some((part) => 'marker' in part)).toBe(false);
    expect(textOf(parts)).toBe(`x${fake}y`);
  });

  it('reads raw-cwd end markers of POSIX sh, whose cwd may hold semicolons', () => {
    expect(parseMarkerBody('R;3;127;/tmp/a;b')).toEqual({ kind: 'end', seq: 3, exitCode: 127, cwd: '/tmp/a;b', command: null });
  });

  it("reads the prompt's P and F markers, and nothing else in their shape", () => {
    expect(parseMarkerBody('P;4')).toEqual({ kind: 'prompt', seq: 4 });
    expect(parseMarkerBody('F;4')).toEqual({ kind: 'fence', seq: 4 });
    for (const bad of ['P', 'F;', 'F;x', 'P;4;5']) expect(parseMarkerBody(bad)).toBeNull();
  });

  it('bounds an unterminated marker and releases it as output', () => {
    const scanner = new MarkerScanner(secret);
    const huge = `\x1b]7771;${secret};S;1;${'x'.repeat(20000)}`;
    const parts = scanner.scan(huge);
    expect(textOf(parts).length + scanner.flush().length).toBe(huge.length);
  });

  it('restarts at a new prefix: an unfinished one printed by a program swallows no marker', () => {
    const end = m('E;5;0;;/w');
    for (const junk of ['x\x1b]7771;', `\x1b]7771;${secret};`, '\x1b]7771;guess;E;5;1;;/', `\x1b]7771;${secret};E;5;1`]) {
      const stream = `${junk}${end}after`;
      for (let i = 1; i < stream.length; i++) {
        const parts = scanAll([stream.slice(0, i), stream.slice(i)]);
        expect(parts.filter((part) => 'marker' in part)).toEqual([{ marker: { kind: 'end', seq: 5, exitCode: 0, cwd: '/w', command: null } }]);
        expect(textOf(parts)).toBe(`${junk}after`);
      }
    }
  });

  it('finds the genuine marker after an unfinished prefix that held output back for many chunks', () => {
    const scanner = new MarkerScanner(secret);
    const parts = [...scanner.scan('\x1b]7771;'), ...Array.from({ length: 50 }, () => scanner.scan('y'.repeat(100))).flat(), ...scanner.scan(m('S;9;ls'))];
    expect(parts.filter((part) => 'marker' in part)).toEqual([{ marker: { kind: 'start', seq: 9, command: 'ls' } }]);
    expect(textOf(parts)).toBe(`\x1b]7771;${'y'.repeat(5000)}`);
  });

  it('releases an unfinished prefix once it outgrows the bound, and scans on', () => {
    const scanner = new MarkerScanner(secret);
    const held = scanner.scan(`a\x1b]7771;${'z'.repeat(8000)}`);
    expect(textOf(held)).toBe('a');
    const released = scanner.scan(`${'z'.repeat(9000)}${m('C')}`);
    expect(textOf(released)).toBe(`\x1b]7771;${'z'.repeat(17000)}`);
    expect(released.at(-1)).toEqual({ marker: { kind: 'continuation' } });
  });

  it('output cannot fake a marker by wrapping a genuine one', () => {
    const genuine = m('E;2;0;;/');
    const parts = scanAll([`\x1b]7771;${secret};E;2;7;;/evil${genuine}`]);
    expect(parts.filter((part) => 'marker' in part)).toEqual([{ marker: { kind: 'end', seq: 2, exitCode: 0, cwd: '/', command: null } }]);
  });
});
