/**
 * Output frames travel as binary WebSocket messages: terminal output is mostly escape codes,
 * which JSON would escape six bytes each and both ends would have to walk. Everything else
 * (results, other events) stays JSON. Layout: tag (1 byte), seq (uint32, big-endian),
 * attachment id length (1 byte), the id (ASCII), then the output as UTF-8. A frame that carries
 * command marks has its own tag, and between the id and the output the marks' JSON length
 * (uint32, big-endian) and the JSON: frames without marks (nearly all) stay as they were.
 */
import type { FrameMark } from './command-marks.js';
import type { ServerMessage } from './contract.js';

export const outputFrameTag = 1;
export const markedOutputFrameTag = 2;
/** Tag, seq and id length; the id and the output follow. Frames are encoded by the host (src/main/web/output-frame.ts). */
export const outputFrameHeaderBytes = 6;
const decoder = new TextDecoder();

/** A message from the server: JSON text, or a binary output frame. Null when it is neither. */
export function decodeServerMessage(data: string | ArrayBuffer | ArrayBufferView): ServerMessage | null {
  if (typeof data === 'string') {
    try {
      return JSON.parse(data) as ServerMessage;
    } catch {
      return null;
    }
  }
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (bytes.length < outputFrameHeaderBytes || (bytes[0] !== outputFrameTag && bytes[0] !== markedOutputFrameTag)) return null;
  const idLength = bytes[5]!;
  if (bytes.length < outputFrameHeaderBytes + idLength) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const seq = view.getUint32(1);
  const attachmentId = decoder.decode(bytes.subarray(outputFrameHeaderBytes, outputFrameHeaderBytes + idLength));
  let at = outputFrameHeaderBytes + idLength;
  let marks: FrameMark[] | undefined;
  if (bytes[0] === markedOutputFrameTag) {
    if (bytes.length < at + 4) return null;
    const length = view.getUint32(at);
    at += 4;
    if (bytes.length < at + length) return null;
    try {
      marks = JSON.parse(decoder.decode(bytes.subarray(at, at + length))) as FrameMark[];
    } catch {
      return null;
    }
    at += length;
  }
  const payload = { attachmentId, seq, data: decoder.decode(bytes.subarray(at)), ...(marks ? { marks } : {}) };
  return { type: 'event', event: 'output', payload };
}
