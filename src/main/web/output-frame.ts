/**
 * The host's side of the binary output frames (layout in src/shared/frames.ts): one copy of
 * the output into a buffer of its exact size, with no joined string, no intermediate encoding
 * and no zero-filling. A flood sends a frame of about `frameMaxChars` every few milliseconds.
 */
import type { FrameMark } from '../../shared/command-marks.js';
import { markedOutputFrameTag, outputFrameHeaderBytes, outputFrameTag } from '../../shared/frames.js';
import type { OutputText } from '../host/attachment.js';

/** `data` may be the reads a frame was batched from: each is written after the one before, never joined. */
export function encodeOutputFrame(attachmentId: string, seq: number, data: OutputText, marks?: readonly FrameMark[]): Buffer {
  const idLength = Buffer.byteLength(attachmentId);
  if (idLength > 255) throw new Error('attachment id too long for an output frame');
  const parts = typeof data === 'string' ? [data] : data;
  const marksJson = marks?.length ? JSON.stringify(marks) : null;
  let bytes = outputFrameHeaderBytes + idLength + (marksJson === null ? 0 : 4 + Buffer.byteLength(marksJson));
  for (const part of parts) bytes += Buffer.byteLength(part);
  const frame = Buffer.allocUnsafe(bytes);
  frame[0] = marksJson === null ? outputFrameTag : markedOutputFrameTag;
  frame.writeUInt32BE(seq >>> 0, 1);
  frame[5] = idLength;
  let at = outputFrameHeaderBytes + frame.write(attachmentId, outputFrameHeaderBytes);
  if (marksJson !== null) {
    const length = frame.write(marksJson, at + 4);
    frame.writeUInt32BE(length, at);
    at += 4 + length;
  }
  for (const part of parts) at += frame.write(part, at);
  return frame;
}
