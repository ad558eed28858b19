import { describe, expect, it } from 'vitest';
import { decodeServerMessage } from '../../src/shared/frames.js';
import { encodeOutputFrame } from '../../src/main/web/output-frame.js';
import { outputChars, outputFrom, outputString } from '../../src/main/host/attachment.js';

describe('binary output frames', () => {
  it('round-trip terminal output byte for byte, escape codes and emoji included', () => {
    const data = '\x1b[31mred\x1b[0m héllo 日本語 🎉\r\n\x07';
    const frame = encodeOutputFrame('att-1', 4_000_000_001, data);
    expect(decodeServerMessage(frame)).toEqual({ type: 'event', event: 'output', payload: { attachmentId: 'att-1', seq: 4_000_000_001, data } });
    // Smaller than JSON, which escapes every control character.
    expect(frame.length).toBeLessThan(JSON.stringify({ type: 'event', event: 'output', payload: { attachmentId: 'att-1', seq: 1, data } }).length);
  });

  it('encodes the reads a frame was batched from as one output, without joining them first', () => {
    const parts = ['\x1b[32mgreen', ' héllo ', '日本語 🎉', '\r\n'];
    const frame = encodeOutputFrame('att-2', 7, parts);
    expect(decodeServerMessage(frame)).toEqual({ type: 'event', event: 'output', payload: { attachmentId: 'att-2', seq: 7, data: parts.join('') } });
    expect(frame).toEqual(encodeOutputFrame('att-2', 7, parts.join('')));
  });

  it('cuts batched reads at any character a snapshot covered, across read boundaries', () => {
    const parts = ['abc', 'de', 'fghij'];
    const whole = parts.join('');
    expect(outputChars(parts)).toBe(whole.length);
    for (let skip = 1; skip < whole.length; skip++) {
      const rest = outputFrom(parts, skip);
      expect(outputString(rest)).toBe(whole.slice(skip));
      expect(outputChars(rest)).toBe(whole.length - skip);
    }
  });

  it('decodes JSON messages as before and refuses anything else', () => {
    expect(decodeServerMessage('{"type":"result","id":1,"ok":true,"value":{}}')).toEqual({ type: 'result', id: 1, ok: true, value: {} });
    expect(decodeServerMessage('not json')).toBeNull();
    expect(decodeServerMessage(new Uint8Array([9, 0, 0]))).toBeNull();
    expect(decodeServerMessage(new Uint8Array([1, 0, 0, 0, 1, 200]))).toBeNull();
  });
});
