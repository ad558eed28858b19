import { setMaxListeners } from 'node:events';
/**
 * One call's signal, aborted when any of its sources is, and unlinked from them when the call
 * ends. `AbortSignal.any` would do the first half, but on Node 20 every composite leaves a
 * WeakRef in each source's set of dependants; with a source that lives as long as an MCP
 * session (its "agent gone" signal), that set grew by one entry per tool call for good.
 */
export function linkSignals(sources: readonly AbortSignal[]): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const links: Array<[AbortSignal, () => void]> = [];
  const dispose = () => {
    for (const [source, forward] of links.splice(0)) source.removeEventListener('abort', forward);
  };
  for (const source of sources) {
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    const forward = () => {
      controller.abort(source.reason);
      dispose();
    };
    source.addEventListener('abort', forward, { once: true });
    links.push([source, forward]);
  }
  if (controller.signal.aborted) dispose();
  return { signal: controller.signal, dispose };
}

/**
 * The controller of a long-lived source (a session's "agent gone"): it holds one link per call
 * in flight, which its caller bounds by `inFlight`; Node's warning at 11 listeners would
 * otherwise fire at the eleventh concurrent call.
 */
export function sourceController(inFlight: number): AbortController {
  const controller = new AbortController();
  setMaxListeners(inFlight + 1, controller.signal);
  return controller;
}
