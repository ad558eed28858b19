import { describe, expect, it } from 'vitest';
import { frameMarks } from '../../src/main/remote/machine.js';

const end = { id: 4, kind: 'end', command: 'make', status: 'failure', exitCode: 2, at: 3 };

describe("a remote host's command marks, as this machine takes them from the link", () => {
  it('passes marks within the frame on, and a frame without marks stays without', () => {
    expect(frameMarks([end], 10)).toEqual([end]);
    expect(frameMarks([{ ...end, at: 0 }], 0)).toEqual([{ ...end, at: 0 }]);
    expect(frameMarks(undefined, 10)).toBeUndefined();
  });

  it('drops what a broken or hostile remote sends instead of handing it to the views', () => {
    expect(frameMarks([{ ...end, at: 11 }], 10)).toBeUndefined(); // past the frame's data
    expect(frameMarks([{ ...end, kind: 'explode' }], 10)).toBeUndefined();
    expect(frameMarks([{ ...end, command: 'x'.repeat(5000) }], 10)).toBeUndefined(); // over the command bound
    expect(frameMarks([{ ...end, status: '<img onerror>' }], 10)).toBeUndefined();
    expect(frameMarks('not a list', 10)).toBeUndefined();
    expect(
      frameMarks(
        Array.from({ length: 5000 }, () => end),
        10,
      ),
    ).toBeUndefined(); // unbounded lists
  });
});
