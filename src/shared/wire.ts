/**
 * The wire between the host and its viewers, named once for both ends: the Electron IPC
 * channels, the UI WebSocket's subprotocols, and the flow control of output frames (the host
 * numbers and sends frames, the viewer acknowledges what it applied). Imported by the host,
 * the preload bridge and the renderer; no Node or Electron imports.
 */
import type { EventName, OpName, WireError } from './contract.js';

/** Channels of the IPC transport: one per operation (`tandem:<op>`) and one for events. */
export const ipcOpChannelPrefix = 'tandem:';
export const ipcEventChannel = 'tandem:event';

export function ipcOpChannel(op: OpName): string {
  return `${ipcOpChannelPrefix}${op}`;
}

/** What every `tandem:<op>` handler returns: IPC never carries a thrown error. */
export type IpcReply = { ok: true; value: unknown } | { ok: false; error: WireError };

/** The message on `tandem:event`. */
export interface IpcEventMessage {
  event: EventName;
  payload: unknown;
}

/** Subprotocol names of the UI WebSocket: the protocol itself and the one carrying the secret. */
/**
 * What the renderer sees as `window.tandem`: runtime facts, and the contract's operations and
 * events by name. Only names from the contract's table pass; raw ipcRenderer is never exposed.
 */
export interface TandemBridge {
  readonly platform: NodeJS.Platform;
  readonly versions: { readonly electron: string; readonly chrome: string; readonly node: string };
  /** Runs a contract operation; resolves with `{ok, value}` or `{ok: false, error}`, never rejects for a refused call. */
  call(op: OpName, args: unknown): Promise<IpcReply>;
  /** Subscribes to a contract event; returns the unsubscribe function. */
  on(event: EventName, listener: (payload: unknown) => void): () => void;
}

export const wsProtocol = 'tandem.v1';
export const wsAuthPrefix = 'tandem.auth.';

/** Flow control, in characters of output (UTF-16 code units, as frames carry them). */
export interface FlowControl {
  /**
   * Host: a streaming frame is sent once it holds this much (plus the read that crossed it).
   * 64K keeps a frame's string and buffer below V8's large-object size (128 KiB), which every
   * larger one pays for in fresh pages: 128K frames cost the host a tenth more time on a flood.
   */
  frameMaxChars: number;
  /**
   * Viewer: acknowledge once this much output was applied since the last acknowledgement... An
   * acknowledgement is a call with a reply, read and answered by the host's main thread: at 128K
   * a flood's acknowledgements took a twelfth of the host's CPU time.
   */
  ackEveryChars: number;
  /** ...or this long after the first unacknowledged frame was applied. */
  ackDelayMs: number;
  /** Host: the PTY is paused while every viewer is at least this far behind... */
  highWatermarkChars: number;
  /** ...and resumed once one of them is back to this. */
  lowWatermarkChars: number;
  /** Host: a viewer this far behind while others keep up is dropped; it can re-attach. */
  maxBufferedChars: number;
  /** Host: a viewer that acknowledges nothing for this long while the PTY waits for it is dropped. */
  stalledAfterMs: number;
}

export const flowControl: Readonly<FlowControl> = {
  frameMaxChars: 64 * 1024,
  ackEveryChars: 256 * 1024,
  ackDelayMs: 50,
  highWatermarkChars: 1024 * 1024,
  lowWatermarkChars: 512 * 1024,
  maxBufferedChars: 8 * 1024 * 1024,
  stalledAfterMs: 10_000,
};

export const { frameMaxChars, ackEveryChars, ackDelayMs, highWatermarkChars, lowWatermarkChars, maxBufferedChars, stalledAfterMs } = flowControl;

/**
 * The invariant binding the two ends: a viewer that keeps up is never why output stops or why
 * it is dropped. Acknowledging by size, it is at most one acknowledgement step plus one frame
 * behind, which must not exceed the low watermark (so it never holds the PTY paused), which
 * lies below the high watermark (pause and resume cannot flap), below the drop bound. Its
 * acknowledgement by time comes well before the host calls it stalled. Returns what breaks it.
 */
export function flowControlViolations(c: FlowControl): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(c)) if (!Number.isInteger(value) || value <= 0) problems.push(`${name} must be a positive integer`);
  if (c.ackEveryChars + c.frameMaxChars > c.lowWatermarkChars) problems.push('ackEveryChars + frameMaxChars must not exceed lowWatermarkChars');
  if (c.lowWatermarkChars >= c.highWatermarkChars) problems.push('lowWatermarkChars must be below highWatermarkChars');
  if (c.highWatermarkChars >= c.maxBufferedChars) problems.push('highWatermarkChars must be below maxBufferedChars');
  // Ten acknowledgement delays: a busy renderer's timers run late, and it is not stalled then.
  if (c.ackDelayMs * 10 > c.stalledAfterMs) problems.push('stalledAfterMs must be at least ten times ackDelayMs');
  return problems;
}
