/**
 * A `fetch` for the MCP client transport that leaves nothing on its long-lived signal.
 *
 * The SDK's StreamableHTTPClientTransport passes one AbortSignal (aborted on close) to every
 * request. Node's fetch (undici) adds an abort listener to it per request and removes it only
 * when that request is garbage-collected (nodejs/undici issues 3157 and 5285, fixed upstream by
 * undici PR 5318; Node 20 bundles undici 6.24 without it), so a busy bridge piles up thousands
 * of listeners between collections and prints MaxListenersExceededWarning. Here each request gets a signal of its own, linked to
 * the caller's until its body has been read, and unlinked then.
 */

type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Statuses whose Response may not carry a body. */
const nullBodyStatus = new Set([101, 103, 204, 205, 304]);

/** The same bytes; `unlink` runs once the stream ends, fails or is cancelled. */
function unlinkAtEnd(body: ReadableStream<Uint8Array>, unlink: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        unlink();
        controller.close();
      } catch (error) {
        unlink();
        controller.error(error);
      }
    },
    cancel(reason) {
      unlink();
      return reader.cancel(reason);
    },
  });
}

export function settlingFetch(base: Fetch = fetch): Fetch {
  return async (input, init) => {
    const outer = init?.signal;
    if (!outer) return base(input, init);
    const inner = new AbortController();
    const forward = () => inner.abort(outer.reason);
    if (outer.aborted) forward();
    else outer.addEventListener('abort', forward, { once: true });
    const unlink = () => outer.removeEventListener('abort', forward);
    try {
      const response = await base(input, { ...init, signal: inner.signal });
      const type = response.headers.get('content-type') ?? '';
      if (response.body && /^\s*text\/event-stream/i.test(type)) {
        // A stream (the GET channel, an SSE reply) stays abortable until it ends.
        return new Response(unlinkAtEnd(response.body, unlink), { status: response.status, statusText: response.statusText, headers: response.headers });
      }
      // A plain reply is read here, so nothing is left to abort once it is returned.
      const text = nullBodyStatus.has(response.status) ? null : await response.text();
      unlink();
      return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
    } catch (error) {
      unlink();
      throw error;
    }
  };
}
