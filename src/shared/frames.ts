/**
 * Output frames travel as binary WebSocket messages: terminal output is mostly escape codes,
 * which JSON would escape six bytes each and both ends would have to walk. Everything else
 * (results, other events) stays JSON. Layout: tag (1 byte), seq (uint32, big-endian),
 * attachment id length (1 byte), the id (ASCII), then the output as UTF-8.
 */
import type { ServerMessage } from './contract.js';

export const outputFrameTag = 1;
const headerBytes = 6;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeOutputFrame(attachmentId: string, seq: number, data: string): Uint8Array {
  const id = encoder.encode(attachmentId);
  if (id.length > 255) throw new Error('attachment id too long for an output frame');
  const body = encoder.encode(data);
  const frame = new Uint8Array(headerBytes + id.length + body.length);
  const view = new DataView(frame.buffer);
  frame[0] = outputFrameTag;
  view.setUint32(1, seq >>> 0);
  frame[5] = id.length;
  frame.set(id, headerBytes);
  frame.set(body, headerBytes + id.length);
  return frame;
}

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
  if (bytes.length < headerBytes || bytes[0] !== outputFrameTag) return null;
  const idLength = bytes[5]!;
  if (bytes.length < headerBytes + idLength) return null;
  const seq = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1);
  const attachmentId = decoder.decode(bytes.subarray(headerBytes, headerBytes + idLength));
  const payload = { attachmentId, seq, data: decoder.decode(bytes.subarray(headerBytes + idLength)) };
  return { type: 'event', event: 'output', payload };
}
