/**
 * Works around modelcontextprotocol/typescript-sdk issue 2559 (fix proposed in pull request
 * 2747, not released as of 1.32.2): in JSON-response mode the SDK's transport answers each POST
 * without deleting that request's `_streamMapping` entry, so every tool call keeps its Response
 * (body, headers) for the life of the session. After each POST, entries whose requests have all
 * been answered are dropped; the SDK keeps a request's entry in `_requestToStreamMapping` until
 * its answer is sent, so an entry nothing points at is finished.
 */
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

interface StreamInternals {
  _streamMapping: Map<string, { resolveJson?: unknown }>;
  _requestToStreamMapping: Map<string | number, string>;
}

function internals(transport: StreamableHTTPServerTransport): StreamInternals | null {
  const web = (transport as unknown as { _webStandardTransport?: Partial<StreamInternals> })._webStandardTransport;
  if (!(web?._streamMapping instanceof Map) || !(web._requestToStreamMapping instanceof Map)) return null;
  return web as StreamInternals;
}

/** Whether this SDK's transport has the fields the release works on (checked by a unit test). */
export function canReleaseStreams(transport: StreamableHTTPServerTransport): boolean {
  return internals(transport) !== null;
}

/** Drops the answered JSON-mode entries; returns how many. A cost of O(requests in flight). */
export function releaseAnsweredStreams(transport: StreamableHTTPServerTransport): number {
  const state = internals(transport);
  if (!state) return 0;
  const pending = new Set(state._requestToStreamMapping.values());
  let released = 0;
  for (const [streamId, stream] of state._streamMapping) {
    if (stream.resolveJson && !pending.has(streamId)) {
      state._streamMapping.delete(streamId);
      released += 1;
    }
  }
  return released;
}

/**
 * A request that will never be answered (the agent cancelled it): its entry goes, so the
 * next release drops its stream (mcp-http.ts ends the POST itself). True when it was held.
 */
export function forgetRequest(transport: StreamableHTTPServerTransport, requestId: string | number): boolean {
  return internals(transport)?._requestToStreamMapping.delete(requestId) ?? false;
}

/** Entries the transport holds (a test's window on the leak). */
export function heldStreams(transport: StreamableHTTPServerTransport): number {
  return internals(transport)?._streamMapping.size ?? 0;
}
