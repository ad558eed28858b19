import { describe, expect, it } from 'vitest';
import { LineSplitter, trailingId } from '../../src/main/agent/mcp/line-splitter.js';
import { bridgeSocketPath, maxSocketPathBytes, shortSocketDirPrefix } from '../../src/main/launch/socket-path.js';

function split(max: number, chunks: string[]): { lines: string[]; oversize: string[] } {
  const lines: string[] = [];
  const oversize: string[] = [];
  const splitter = new LineSplitter(
    max,
    (line) => lines.push(line),
    (tail) => oversize.push(tail),
  );
  for (const chunk of chunks) splitter.push(Buffer.from(chunk));
  return { lines, oversize };
}

describe('LineSplitter', () => {
  it('splits lines across chunks, drops CR and blank lines, keeps an unfinished line for later', () => {
    expect(split(100, ['{"a"', ':1}\r\n\n{"b":2}\n{"c"'])).toEqual({ lines: ['{"a":1}', '{"b":2}'], oversize: [] });
  });

  it('drops an oversize line as it streams, reports it once at its end with its tail, and reads the next line', () => {
    const { lines, oversize } = split(16, ['{"pad":"', 'x'.repeat(40), 'y'.repeat(40), '","id":7}\n{"ok":1}\n']);
    expect(lines).toEqual(['{"ok":1}']);
    expect(oversize).toHaveLength(1);
    expect(oversize[0]!.endsWith('","id":7}')).toBe(true);
    expect(trailingId(oversize[0]!)).toBe(7);
  });

  it('counts bytes, not characters', () => {
    expect(split(4, ['ééé\n']).oversize).toHaveLength(1);
    expect(split(6, ['ééé\n']).lines).toEqual(['ééé']);
  });
});

describe('trailingId', () => {
  it('finds the id the SDK serializes last, and nothing else', () => {
    expect(trailingId('…"arguments":{}},"jsonrpc":"2.0","id":12}')).toBe(12);
    expect(trailingId('…,"id":"req-\\"7"} ')).toBe('req-"7');
    expect(trailingId('…,"id":12,"method":"x"}')).toBeNull();
    expect(trailingId('xxxx')).toBeNull();
  });
});

describe('bridgeSocketPath', () => {
  it('stays in the discovery directory while the path fits, else moves to a short /tmp directory named after it, with a random part', () => {
    expect(bridgeSocketPath('linux', '/run/user/1000/tandem')).toEqual({ path: '/run/user/1000/tandem/bridge.sock', dir: '/run/user/1000/tandem' });
    const deep = `/home/someone/${'d'.repeat(maxSocketPathBytes)}`;
    const moved = bridgeSocketPath('darwin', deep);
    expect(moved.dir!.startsWith(shortSocketDirPrefix(deep))).toBe(true);
    expect(moved.dir!.slice(shortSocketDirPrefix(deep).length)).toMatch(/^[0-9a-f]{16}$/);
    expect(moved.path).toBe(`${moved.dir}/bridge.sock`);
    expect(Buffer.byteLength(moved.path)).toBeLessThanOrEqual(maxSocketPathBytes);
    // No one can name it ahead: each start picks another.
    expect(bridgeSocketPath('darwin', deep).dir).not.toBe(moved.dir);
    expect(shortSocketDirPrefix(deep)).not.toBe(shortSocketDirPrefix(`${deep}x`));
  });

  it('is a named pipe with a random part on Windows', () => {
    const a = bridgeSocketPath('win32', 'C:\\Users\\x\\AppData\\Local\\Tandem');
    const b = bridgeSocketPath('win32', 'C:\\Users\\x\\AppData\\Local\\Tandem');
    expect(a.path).toMatch(/^\\\\\.\\pipe\\tandem-[0-9a-f]{16}-[0-9a-f]{16}$/);
    expect(a.path).not.toBe(b.path);
    expect(a.dir).toBeNull();
  });
});
