/**
 * Output frames travel as binary WebSocket messages: terminal output is mostly escape codes,
 * which JSON would escape six bytes each and both ends would have to walk. Everything else
 * (results, other events) stays JSON. Layout: tag (1 byte), seq (uint32, big-endian),
 * attachment id length (1 byte), the id (ASCII), then the output as UTF-8.
 */
import type { ServerMessage } from './contract.js';

export const outputFrameTag = 1;
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
  if (bytes.length < outputFrameHeaderBytes || bytes[0] !== outputFrameTag) return null;
  const idLength = bytes[5]!;
  if (bytes.length < outputFrameHeaderBytes + idLength) return null;
  const seq = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1);
  const attachmentId = decoder.decode(bytes.subarray(outputFrameHeaderBytes, outputFrameHeaderBytes + idLength));
  const payload = { attachmentId, seq, data: decoder.decode(bytes.subarray(outputFrameHeaderBytes + idLength)) };
  return { type: 'event', event: 'output', payload };
}
