/**
 * The host's side of the binary output frames (layout in src/shared/frames.ts). One copy of
 * the output into a buffer of its exact size: no intermediate encoding, no zero-filling. A
 * flood sends a frame of up to `frameMaxChars` every few milliseconds, and TextEncoder's
 * array plus a second, zeroed one cost a fifth of the host's time on it.
 */
import { outputFrameHeaderBytes, outputFrameTag } from '../../shared/frames.js';

export function encodeOutputFrame(attachmentId: string, seq: number, data: string): Buffer {
  const idLength = Buffer.byteLength(attachmentId);
  if (idLength > 255) throw new Error('attachment id too long for an output frame');
  const bodyAt = outputFrameHeaderBytes + idLength;
  const frame = Buffer.allocUnsafe(bodyAt + Buffer.byteLength(data));
  frame[0] = outputFrameTag;
  frame.writeUInt32BE(seq >>> 0, 1);
  frame[5] = idLength;
  frame.write(attachmentId, outputFrameHeaderBytes);
  frame.write(data, bodyAt);
  return frame;
}
